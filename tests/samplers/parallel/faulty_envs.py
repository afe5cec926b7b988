"""Envs that fail on purpose inside sampler workers, in a module spawned children can import.

The sampler seeds env rank ``r`` with ``seed + r``, so ``fail_seed=seed + r`` picks env rank ``r``
(``"all"`` picks every env);
``fail_worker`` picks a worker by its process name (``sampler_worker_<rank>``).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time

import gymnasium

from rlrun.envs.gym import GymEnvWrapper

FAILURE_TEXT = "planned failure of FaultyCartPole"


class FaultyCartPole(GymEnvWrapper):
    """CartPole-v1 that raises (or kills its process) at a chosen point.

    ``fail_in``: "init" (construction in worker ``fail_worker``), "reset" or "step" (the env seeded
    with ``fail_seed``, at its ``fail_step``-th step counted over episodes), "kill" (SIGKILL to its own
    process at that step), "hang" (a busy Python loop that never returns, at that step, or in __init__
    of worker ``fail_worker`` with ``fail_in="hang_init"``), "sleep" (one very long C call at that
    step). ``step_sleep`` seconds per step make batches slow enough to interrupt.
    """

    def __init__(
        self,
        fail_in: str | None = None,
        fail_seed: int | None = None,
        fail_step: int = 57,
        fail_worker: int | None = None,
        step_sleep: float = 0.0,
    ) -> None:
        in_chosen_worker = mp.current_process().name == f"sampler_worker_{fail_worker}"
        if fail_in == "init" and in_chosen_worker:
            raise RuntimeError(f"{FAILURE_TEXT} in __init__")
        if fail_in == "hang_init" and in_chosen_worker:
            hang_forever()
        super().__init__(gymnasium.make("CartPole-v1"))
        self.fail_in = fail_in
        self.fail_seed = fail_seed
        self.fail_step = fail_step
        self.step_sleep = step_sleep
        self.seeded_with = None
        self.n_steps = 0

    def seed(self, seed):
        self.seeded_with = seed
        super().seed(seed)

    @property
    def chosen(self) -> bool:
        return self.seeded_with is not None and self.fail_seed in (self.seeded_with, "all")

    def reset(self):
        if self.fail_in == "reset" and self.chosen:
            raise RuntimeError(f"{FAILURE_TEXT} in reset")
        return super().reset()

    def step(self, action):
        if self.step_sleep:
            time.sleep(self.step_sleep)
        if self.chosen:
            self.n_steps += 1
            if self.n_steps == self.fail_step:
                if self.fail_in == "step":
                    raise RuntimeError(f"{FAILURE_TEXT} at step {self.n_steps}")
                if self.fail_in == "kill":
                    os.kill(os.getpid(), signal.SIGKILL)
                if self.fail_in == "hang":
                    hang_forever()
                if self.fail_in == "sleep":
                    time.sleep(3600)
        return super().step(action)


def hang_forever() -> None:
    """Never returns and never waits: the Python loop of a buggy env."""
    n = 0
    while True:
        n += 1
