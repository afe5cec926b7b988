"""A small asynchronous DQN run on CartPole-v1 that checkpoints at every log row, for the resume tests.

``python async_resume_run.py RUN_PARENT [--sampler serial|cpu] [--eval] [--n-steps N] [--resume]`` trains in
``RUN_PARENT/run_0`` (AsyncRl, or AsyncRlEval with ``--eval``); with ``--resume`` it continues from there.
A batch is 4 x 8 = 32 steps, a row every 320 steps, learning from 320 steps.
"""

from __future__ import annotations

import argparse

import torch

from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.algos.dqn.dqn import DQN
from rlrun.envs.gym import make
from rlrun.runners.async_rl import AsyncRl, AsyncRlEval
from rlrun.runners.checkpoint import CheckpointPolicy
from rlrun.samplers.async_.cpu_sampler import AsyncCpuSampler
from rlrun.samplers.async_.serial_sampler import AsyncSerialSampler
from rlrun.utils.logging.context import logger_context

BATCH = 32
LOG_INTERVAL = 320


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run_parent")
    parser.add_argument("--sampler", choices=("serial", "cpu"), default="serial")
    parser.add_argument("--eval", action="store_true")
    parser.add_argument("--n-steps", type=int, default=20_000)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    SamplerCls = AsyncSerialSampler if args.sampler == "serial" else AsyncCpuSampler
    sampler = SamplerCls(
        EnvCls=make,
        env_kwargs=dict(id="CartPole-v1"),
        batch_T=4,
        batch_B=8,
        max_decorrelation_steps=0,
        eval_n_envs=2 if args.eval else 0,
        eval_max_steps=400,
        eval_max_trajectories=2,
    )
    RunnerCls = AsyncRlEval if args.eval else AsyncRl
    runner = RunnerCls(
        algo=DQN(min_steps_learn=320, replay_size=4000, batch_size=32, replay_ratio=1, eps_steps=2000),
        agent=DqnAgent(model_kwargs=dict(hidden_sizes=[16])),
        sampler=sampler,
        n_steps=args.n_steps,
        seed=0,
        log_interval_steps=LOG_INTERVAL,
        checkpoint=CheckpointPolicy(keep_last=2),
        resume=args.resume,
    )
    with logger_context(args.run_parent, 0, "async_resume", {}, override_prefix=True, resume=args.resume):
        runner.train()


if __name__ == "__main__":
    main()
