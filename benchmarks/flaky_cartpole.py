"""CartPole-v1 that fails now and then, as a simulator that crashes once in a long while does.

A module of its own so that sampler workers started by spawn or forkserver can import it (the
benchmark's folder is on their path, as it is on the script's).
"""

from __future__ import annotations

import os

import gymnasium
import numpy as np

from rlrun.envs.gym import GymEnvWrapper

FAULTS = ("none", "raise", "exit")
FAULT_TEXT = "planned fault of FlakyCartPole"
EXIT_CODE = 3


class FlakyCartPole(GymEnvWrapper):
    """CartPole-v1 whose every step fails with probability ``1 / every``: ``fault="raise"`` raises a
    RuntimeError, ``fault="exit"`` ends the process at once (``os._exit``, no traceback, as a segfault
    in native code would), ``fault="none"`` never fails.

    The draws come from a generator seeded by the env's seed, so a run with the same seed faults at the
    same steps, and an env rebuilt with another seed (a restarted worker's) at other ones.
    """

    def __init__(self, every: int = 2000, fault: str = "raise") -> None:
        if fault not in FAULTS:
            raise ValueError(f"fault must be one of {FAULTS}, got {fault!r}.")
        super().__init__(gymnasium.make("CartPole-v1"))
        self.every = every
        self.fault = fault
        self._draws = np.random.default_rng()

    def seed(self, seed):
        self._draws = np.random.default_rng([int(seed), 0xF1A4])
        return super().seed(seed)

    def step(self, action):
        if self.fault != "none" and self._draws.random() * self.every < 1.0:
            if self.fault == "exit":
                os._exit(EXIT_CODE)
            raise RuntimeError(FAULT_TEXT)
        return super().step(action)
