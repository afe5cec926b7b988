"""An algorithm whose memory copier fails on purpose, and builders for small asynchronous DQN runs on
CartPole (a module spawned children can import)."""

from __future__ import annotations

import os
import signal
from typing import Any

from faulty_envs import FaultyCartPole

from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.algos.dqn.dqn import DQN
from rlrun.envs.gym import make
from rlrun.runners.async_rl import AsyncRl, AsyncRlEval
from rlrun.samplers.async_.cpu_sampler import AsyncCpuSampler
from rlrun.samplers.async_.serial_sampler import AsyncSerialSampler

COPY_FAILURE_TEXT = "planned failure of the memory copier"


class FaultyCopyDQN(DQN):
    """DQN whose ``samples_to_buffer`` (called by the copier process alone) raises or kills its process at
    its ``copy_fail_at``-th call."""

    def __init__(self, *args: Any, copy_fail: str = "raise", copy_fail_at: int = 3, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.copy_fail = copy_fail
        self.copy_fail_at = copy_fail_at
        self._copies = 0

    def samples_to_buffer(self, samples: Any) -> Any:
        self._copies += 1
        if self._copies == self.copy_fail_at:
            if self.copy_fail == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise RuntimeError(COPY_FAILURE_TEXT)
        return super().samples_to_buffer(samples)


def small_runner(
    SamplerCls: type = AsyncSerialSampler,
    env_kwargs: dict | None = None,
    n_steps: int = 2_000,
    evaluate: bool = False,
    AlgoCls: type = DQN,
    algo_kwargs: dict | None = None,
    runner_kwargs: dict | None = None,
    sampler_kwargs: dict | None = None,
    EnvCls: Any = None,
    batch_B: int = 2,
) -> AsyncRl:
    """A small asynchronous DQN run on CartPole (or FaultyCartPole with ``env_kwargs``)."""
    EnvCls = EnvCls or (FaultyCartPole if env_kwargs is not None else make)
    env_kwargs = dict(id="CartPole-v1") if env_kwargs is None else env_kwargs
    eval_kwargs = dict(eval_n_envs=2, eval_max_steps=2 * 501 * 2, eval_max_trajectories=2) if evaluate else {}
    sampler = SamplerCls(
        EnvCls=EnvCls,
        env_kwargs=env_kwargs,
        batch_T=16,
        batch_B=batch_B,
        max_decorrelation_steps=0,
        **eval_kwargs,
        **(sampler_kwargs or {}),
    )
    algo = AlgoCls(
        **dict(
            dict(batch_size=32, min_steps_learn=128, replay_size=2_000, replay_ratio=8, target_update_interval=20),
            **(algo_kwargs or {}),
        )
    )
    RunnerCls = AsyncRlEval if evaluate else AsyncRl
    return RunnerCls(
        algo=algo,
        agent=DqnAgent(model_kwargs=dict(hidden_sizes=(16,))),
        sampler=sampler,
        n_steps=n_steps,
        seed=0,
        log_interval_steps=512,
        **(runner_kwargs or {}),
    )


__all__ = ["FaultyCopyDQN", "small_runner", "AsyncCpuSampler", "AsyncSerialSampler", "COPY_FAILURE_TEXT"]
