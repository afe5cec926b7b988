"""``BusyEnv``: an env whose step costs a set amount of CPU time, for probes, tests and benchmarks.

``step_seconds=0`` makes the cheapest env there is (the served-step probe of ``sampler="auto"`` runs
on it). It burns CPU time of its own thread (``time.thread_time``), so on a loaded machine a step
still costs the same CPU and takes longer in wall-clock time, as a real simulator would.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from rlrun.envs.base import Env, EnvInfo, EnvStep
from rlrun.spaces.float_box import FloatBox
from rlrun.spaces.int_box import IntBox

__all__ = ["BusyEnv"]


class BusyEnv(Env):
    """Observations of ``observation_shape`` (``uint8`` images when ``image``), ``n_actions`` discrete
    actions, episodes of ``episode_steps``, and ``step_seconds`` of CPU per step."""

    def __init__(
        self,
        step_seconds: float = 0.0,
        observation_shape: Sequence[int] = (4,),
        n_actions: int = 2,
        episode_steps: int = 200,
        image: bool = False,
    ) -> None:
        self.step_seconds = float(step_seconds)
        self.episode_steps = int(episode_steps)
        shape = tuple(int(n) for n in observation_shape)
        self._observations: IntBox | FloatBox = (
            IntBox(low=0, high=256, shape=shape, dtype="uint8") if image else FloatBox(low=-1.0, high=1.0, shape=shape)
        )
        self._actions = IntBox(low=0, high=n_actions)
        self._observation: np.ndarray = np.zeros(shape, dtype=np.uint8 if image else np.float32)
        self._t = 0
        self._info = EnvInfo()

    @property
    def observation_space(self) -> IntBox | FloatBox:
        return self._observations

    @property
    def action_space(self) -> IntBox:
        return self._actions

    def reset(self) -> np.ndarray:
        self._t = 0
        observation: np.ndarray = self._observation.copy()
        return observation

    def step(self, action: object) -> EnvStep:
        if self.step_seconds > 0:
            end = time.thread_time() + self.step_seconds
            while time.thread_time() < end:
                pass
        self._t += 1
        return EnvStep(self._observation.copy(), 0.0, self._t >= self.episode_steps, self._info)

    def seed(self, seed: int | None) -> None:
        pass
