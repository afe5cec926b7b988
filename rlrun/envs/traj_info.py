"""Per-trajectory statistics, gathered step by step by collectors and logged by runners."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from rlrun.utils.collections import AttrDict, NamedArrayTuple

if TYPE_CHECKING:
    from rlrun.utils.data_model import SpaceValue

__all__ = ["TrajInfo", "BoundTrajInfoCls"]


class TrajInfo(AttrDict):
    """Length, return, nonzero rewards and discounted return of one trajectory.

    Subclass it to record more (override ``step`` and call ``super().step``). Keys starting with an
    underscore are bookkeeping and are not logged. ``discount`` sets the discount of
    ``DiscountedReturn``; samplers pass it through ``traj_info_kwargs``, and a collector's
    ``self.TrajInfoCls()`` already carries them (see ``BoundTrajInfoCls``).
    """

    def __init__(self, discount: float = 1.0, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self._discount = float(discount)
        self._cur_discount = 1.0
        self.Length = 0
        self.Return = 0.0
        self.NonzeroRewards = 0
        self.DiscountedReturn = 0.0

    def step(
        self,
        observation: SpaceValue,
        action: SpaceValue,
        reward: float,
        done: bool,
        agent_info: NamedArrayTuple | None,
        env_info: tuple[object, ...],
    ) -> None:
        # Item access, not attributes: this runs once per env step, and AttrDict's attribute hooks are
        # Python calls (a quarter of the sampler's own time per step on CartPole).
        reward = float(reward)
        cur_discount = self["_cur_discount"]
        self["Length"] += 1
        self["Return"] += reward
        self["NonzeroRewards"] += reward != 0
        self["DiscountedReturn"] += cur_discount * reward
        self["_cur_discount"] = cur_discount * self["_discount"]

    def terminate(self, observation: SpaceValue) -> TrajInfo:
        """Called when the trajectory ends; returns the finished record."""
        return self

    def loggable(self) -> dict[str, float]:
        """The public statistics as plain floats, for logging."""
        return {k: float(np.asarray(v)) for k, v in self.items() if not k.startswith("_")}


class BoundTrajInfoCls:
    """A TrajInfo class with the run's ``traj_info_kwargs`` bound, as a collector's ``TrajInfoCls``.

    rlpyt's collectors build ``self.TrajInfoCls()`` with no arguments, so collector subclasses
    written for rlpyt do too; bound here, such a call still gets the run's discount. Keywords given
    in the call win. Attribute reads, ``isinstance`` and ``issubclass`` go to the class itself. The
    binding lives in the collector, not in the class, so two runs in one process never share it.
    """

    cls: type[TrajInfo]
    traj_info_kwargs: dict[str, Any]

    def __init__(self, cls: type[TrajInfo] | BoundTrajInfoCls, traj_info_kwargs: dict[str, Any] | None = None) -> None:
        if isinstance(cls, BoundTrajInfoCls):
            traj_info_kwargs = {**cls.traj_info_kwargs, **(traj_info_kwargs or {})}
            cls = cls.cls
        self.cls = cls
        self.traj_info_kwargs = dict(traj_info_kwargs or {})

    def __call__(self, **kwargs: Any) -> TrajInfo:
        merged = {**self.traj_info_kwargs, **kwargs}
        try:
            return self.cls(**merged)
        except TypeError as e:
            raise TypeError(
                f"{self.cls.__name__}({', '.join(merged)}=...) failed: {e}. TrajInfo subclasses receive "
                "traj_info_kwargs (e.g. discount) as constructor keywords: define __init__(self, **kwargs) "
                "and call super().__init__(**kwargs)."
            ) from e

    def __getattr__(self, name: str) -> Any:
        if name == "cls":  # not yet set (while unpickling)
            raise AttributeError(name)
        return getattr(self.cls, name)

    def __instancecheck__(self, obj: Any) -> bool:
        return isinstance(obj, self.cls)

    def __subclasscheck__(self, subclass: type) -> bool:
        return issubclass(subclass, self.cls)

    def __repr__(self) -> str:
        return f"BoundTrajInfoCls({self.cls.__qualname__}, {self.traj_info_kwargs})"
