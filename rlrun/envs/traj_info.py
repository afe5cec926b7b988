"""Per-trajectory statistics, gathered step by step by collectors and logged by runners."""

from __future__ import annotations

from typing import Any

import numpy as np

from rlrun.utils.collections import AttrDict

__all__ = ["TrajInfo"]


class TrajInfo(AttrDict):
    """Length, return, nonzero rewards and discounted return of one trajectory.

    Subclass it to record more (override ``step`` and call ``super().step``). Keys starting with an
    underscore are bookkeeping and are not logged. ``discount`` sets the discount of
    ``DiscountedReturn``; samplers pass it through ``traj_info_kwargs``.
    """

    def __init__(self, discount: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._discount = float(discount)
        self._cur_discount = 1.0
        self.Length = 0
        self.Return = 0.0
        self.NonzeroRewards = 0
        self.DiscountedReturn = 0.0

    def step(self, observation, action, reward, done, agent_info, env_info) -> None:
        reward = float(reward)
        self.Length += 1
        self.Return += reward
        self.NonzeroRewards += reward != 0
        self.DiscountedReturn += self._cur_discount * reward
        self._cur_discount *= self._discount

    def terminate(self, observation) -> TrajInfo:
        """Called when the trajectory ends; returns the finished record."""
        return self

    def loggable(self) -> dict[str, float]:
        """The public statistics as plain floats, for logging."""
        return {k: float(np.asarray(v)) for k, v in self.items() if not k.startswith("_")}
