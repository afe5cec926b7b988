"""CartPole-v1 without its velocities, a partially observed task that needs memory; and a recurrent PPO
runner that learns it. A module of its own so that sampler workers can import the env by name.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import torch

from rlrun.agents.pg.categorical import RecurrentCategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.algos.pg.ppo import PPO
from rlrun.envs.gym import GymEnvWrapper
from rlrun.runners.minibatch_rl import MinibatchRlEval
from rlrun.samplers.collectors import ResetCollector, WaitResetCollector
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context
from rlrun.utils.plotting import read_progress

POSITIONS = (0, 2)  # cart position and pole angle; 1 and 3 are their velocities


class PositionsOnly(gymnasium.ObservationWrapper):
    """Keeps only the observation entries at ``keep`` (by default CartPole's cart position and pole angle)."""

    def __init__(self, env: gymnasium.Env, keep: tuple[int, ...] = POSITIONS) -> None:
        super().__init__(env)
        self.keep = np.asarray(keep)
        space = env.observation_space
        assert isinstance(space, gymnasium.spaces.Box)
        self.observation_space = gymnasium.spaces.Box(space.low[self.keep], space.high[self.keep], dtype=space.dtype)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return observation[self.keep]


def masked_cartpole(keep: tuple[int, ...] = POSITIONS, **kwargs: Any) -> GymEnvWrapper:
    """CartPole-v1 (500-step time limit) observing the entries ``keep`` (positions only), as an rlrun env."""
    return GymEnvWrapper(PositionsOnly(gymnasium.make("CartPole-v1", **kwargs), keep))


# Recurrent PPO for the masked task: the tuned CartPole PPO settings (rlrun.experiments.configs.cartpole)
# with 16 envs x 32 steps and 10 epochs of 2 minibatches of 8 whole sequences, observations standardised
# by running statistics (MODEL_KWARGS) and envs reset as soon as they are done (ResetCollector: no
# filler steps; the agent records each start and training replays it). Measured on 2026-12-05
# (benchmarks/results/2026-12-05-2cpu-vm-recurrent-ppo-5-seeds.md): seeds 0-4 solve within 150k steps
# (at 105,984, 46,080, 46,080, 50,688 and 73,728). With one part left out: observation normalisation
# with wait-reset batches solved 4 of 5 (seed 1 best 464); mid-batch resets without normalisation 0 of
# 2 (seeds 0, 1: best 242, 319); neither (2026-12-04) 1 of 5. Normalisation with the full CartPole
# settings (8 envs, 20 epochs of one minibatch, value_loss_coeff=1, normalize_advantage) and wait-reset
# batches: 4 of 5 (seed 4 best 461). Earlier tuning without either, with one change each:
# entropy_loss_coeff=0.01 solved 0 of 4 seeds, learning_rate=5e-4 1 of 5, minibatches=4 0 of 2; the
# full CartPole settings 1 of 5.
PPO_KWARGS = dict(
    discount=0.98,
    gae_lambda=0.8,
    learning_rate=1e-3,
    value_loss_coeff=0.5,
    entropy_loss_coeff=0.0,
    epochs=10,
    minibatches=2,
    ratio_clip=0.2,
    clip_grad_norm=0.5,
    linear_lr_schedule=True,
)
SAMPLER_KWARGS = dict(batch_T=32, batch_B=16)
MODEL_KWARGS = dict(normalize_observation=True)
# Recurrent A2C for the same task (a learning check, not tuned): PPO's discount, GAE and clipping,
# one gradient step per batch of 16 envs x 16 steps.
A2C_KWARGS = dict(
    discount=0.98,
    gae_lambda=0.8,
    learning_rate=1e-3,
    value_loss_coeff=0.5,
    entropy_loss_coeff=0.0,
    clip_grad_norm=0.5,
    linear_lr_schedule=True,
)
A2C_SAMPLER_KWARGS = dict(batch_T=16, batch_B=16)
A2C_MODEL_KWARGS: dict = {}  # as measured on 2026-12-04: no observation normalisation, wait-reset batches


def build_runner(
    seed: int,
    n_steps: int,
    log_interval_steps: int,
    SamplerCls: type = SerialSampler,
    affinity: dict | None = None,
    eval_episodes: int = 10,
    eval_n_envs: int = 10,
    ppo_kwargs: dict | None = None,
    sampler_kwargs: dict | None = None,
    agent_kwargs: dict | None = None,
    env_kwargs: dict | None = None,
    algo: str = "ppo",
    model_kwargs: dict | None = None,
    mid_batch_reset: bool | None = None,
) -> MinibatchRlEval:
    """A runner training RecurrentCategoricalPgAgent with PPO (or ``algo="a2c"``: A2C) on masked CartPole,
    evaluating greedily; ``ppo_kwargs``, ``sampler_kwargs`` and ``model_kwargs`` override the settings, and
    ``mid_batch_reset`` the collector (by default ResetCollector for PPO, WaitResetCollector for A2C)."""
    if algo not in ("ppo", "a2c"):
        raise ValueError(f"algo is 'ppo' or 'a2c', got {algo!r}.")
    default_sampler_kwargs = SAMPLER_KWARGS if algo == "ppo" else A2C_SAMPLER_KWARGS
    default_model_kwargs = MODEL_KWARGS if algo == "ppo" else A2C_MODEL_KWARGS
    if mid_batch_reset is None:  # PPO's settings reset envs mid-batch; A2C's wait for the batch end
        mid_batch_reset = algo == "ppo"
    sampler = SamplerCls(
        EnvCls=masked_cartpole,
        env_kwargs=dict(env_kwargs or {}),
        CollectorCls=ResetCollector if mid_batch_reset else WaitResetCollector,
        max_decorrelation_steps=0,
        eval_n_envs=eval_n_envs,
        eval_max_steps=(eval_episodes // eval_n_envs + 1) * 501 * eval_n_envs,
        eval_max_trajectories=eval_episodes,
        **{**default_sampler_kwargs, **(sampler_kwargs or {})},
    )
    algo_ = (
        PPO(**{**PPO_KWARGS, **(ppo_kwargs or {})}) if algo == "ppo" else A2C(**{**A2C_KWARGS, **(ppo_kwargs or {})})
    )
    agent_kwargs = dict(agent_kwargs or {})
    agent_kwargs["model_kwargs"] = {
        **default_model_kwargs,
        **agent_kwargs.get("model_kwargs", {}),
        **(model_kwargs or {}),
    }
    return MinibatchRlEval(
        algo=algo_,
        agent=RecurrentCategoricalPgAgent(greedy_eval=True, **agent_kwargs),
        sampler=sampler,
        n_steps=n_steps,
        seed=seed,
        log_interval_steps=log_interval_steps,
        affinity=dict(master_torch_threads=1) if affinity is None else affinity,
    )


def evaluation_curve(runner: MinibatchRlEval, seed: int, log_dir: str, name: str) -> list[tuple[float, float]]:
    """Train ``runner`` quietly, logging under ``log_dir``; ``(cumulative env steps, evaluation return)``
    of each evaluation."""
    torch.set_num_threads(1)
    with logger.quiet_console():
        with logger_context(log_dir, seed, name, {}, override_prefix=True) as run_dir:
            runner.train()
    progress = read_progress(run_dir)
    return list(zip(progress["Diagnostics/CumSteps"], progress["ReturnAverage"]))


class SolvedError(Exception):
    """Raised at the first evaluation averaging the solved return, with its step count, to end the run there."""


def steps_to_solve(
    runner: MinibatchRlEval, seed: int, log_dir: str, name: str, solved_return: float = 475.0
) -> tuple[int | None, list[tuple[int, float]]]:
    """Train ``runner`` until its first evaluation (after itr 0) averaging ``solved_return``, or to its
    ``n_steps``; returns that evaluation's step count (None if unsolved) and ``(steps, evaluation
    return)`` of each evaluation. Stopping there keeps the slow multi-seed runs short."""
    evaluate = runner.evaluate_agent
    curve: list[tuple[int, float]] = []

    def evaluate_until_solved(itr: int) -> Any:
        traj_infos, eval_time = evaluate(itr)
        if traj_infos:
            steps = (itr + 1) * runner.itr_batch_size if curve else 0  # the first runs before any training
            curve.append((steps, sum(i["Return"] for i in traj_infos) / len(traj_infos)))
            if itr > 0 and curve[-1][1] >= solved_return:
                raise SolvedError(curve[-1][0])
        return traj_infos, eval_time

    runner.evaluate_agent = evaluate_until_solved  # type: ignore[method-assign]
    try:
        evaluation_curve(runner, seed, log_dir, name)
    except SolvedError as solved:
        return solved.args[0], curve
    return None, curve
