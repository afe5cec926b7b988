"""An asynchronous DQN run on CartPole-v1 with the tuned synchronous settings
(rlrun.experiments.configs.cartpole's "dqn"), logged to a folder; returns its progress columns."""

from __future__ import annotations

import copy
from typing import Any

import torch

from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.algos.dqn.dqn import DQN
from rlrun.envs.gym import make
from rlrun.experiments.configs.cartpole import CONFIGS
from rlrun.runners.async_rl import AsyncRlEval
from rlrun.samplers.async_.serial_sampler import AsyncSerialSampler
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context
from rlrun.utils.plotting import read_progress

EVAL_EVERY = 5000


def run_async_cartpole(
    tmp_path: Any, seed: int = 0, n_steps: int = 50_000, SamplerCls: type = AsyncSerialSampler, **sampler_kwargs: Any
) -> dict[str, list[float]]:
    torch.set_num_threads(1)
    config = copy.deepcopy(CONFIGS["dqn"])
    sampler = SamplerCls(
        EnvCls=make,
        env_kwargs=dict(id="CartPole-v1"),
        max_decorrelation_steps=0,
        eval_n_envs=5,
        eval_max_steps=3 * 501 * 5,
        eval_max_trajectories=10,
        **config["sampler"],
        **sampler_kwargs,
    )
    runner = AsyncRlEval(
        algo=DQN(**config["algo"]),
        agent=DqnAgent(**config["agent"]),
        sampler=sampler,
        n_steps=n_steps,
        seed=seed,
        log_interval_steps=EVAL_EVERY,
    )
    with logger.quiet_console():
        with logger_context(str(tmp_path), seed, "async_dqn_cartpole", {}, override_prefix=True) as run_dir:
            runner.train()
    return read_progress(run_dir)


def learning_phase_replay_ratio(progress: dict[str, list[float]]) -> float:
    """Samples trained on per sampled step, counted from the batch the optimiser starts at."""
    algo = CONFIGS["dqn"]["algo"]
    batch = CONFIGS["dqn"]["sampler"]["batch_T"] * CONFIGS["dqn"]["sampler"]["batch_B"]
    start = (1 + algo["min_steps_learn"] // batch) * batch
    return progress["Diagnostics/CumUpdates"][-1] * algo["batch_size"] / (progress["Diagnostics/CumSteps"][-1] - start)
