"""Small runs of every algorithm for the checkpoint tests, and a script that trains one of them.

``python checkpoint_runs.py ALGO RUN_PARENT [--sampler serial|cpu] [--n-steps N] [--resume]`` trains in
``RUN_PARENT/run_0`` with checkpoints after every iteration; with ``--resume`` it continues from there.
It prints ``ITR <itr>`` to stdout after each iteration, so a test can kill it at a chosen one.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import torch

from rlrun.agents.dqn.catdqn_agent import CatDqnAgent
from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.dqn.r2d1_agent import R2d1Agent
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.agents.qpg.ddpg_agent import DdpgAgent
from rlrun.agents.qpg.sac_agent import SacAgent
from rlrun.agents.qpg.td3_agent import Td3Agent
from rlrun.algos.dqn.cat_dqn import CategoricalDQN
from rlrun.algos.dqn.dqn import DQN
from rlrun.algos.dqn.r2d1 import R2D1
from rlrun.algos.pg.a2c import A2C
from rlrun.algos.pg.ppo import PPO
from rlrun.algos.qpg.ddpg import DDPG
from rlrun.algos.qpg.sac import SAC
from rlrun.algos.qpg.td3 import TD3
from rlrun.envs.gym import make
from rlrun.runners.checkpoint import CheckpointPolicy
from rlrun.runners.minibatch_rl import MinibatchRl, MinibatchRlEval
from rlrun.samplers.collectors import WaitResetCollector
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context

ONE_THREAD = dict(master_torch_threads=1)
SMALL = dict(hidden_sizes=[16])
QPG = dict(min_steps_learn=40, replay_size=400, batch_size=16, replay_ratio=4)
DQN_SMALL = dict(min_steps_learn=40, replay_size=400, batch_size=16, replay_ratio=4, eps_steps=200)


def components(algo: str) -> tuple[Any, Any, str, dict[str, Any]]:
    """``(algorithm, agent, env id, sampler keywords)`` of a small run of ``algo``."""
    cartpole, pendulum = "CartPole-v1", "Pendulum-v1"
    if algo == "a2c":
        return A2C(), CategoricalPgAgent(), cartpole, {}
    if algo == "ppo":
        return PPO(epochs=2, minibatches=2, linear_lr_schedule=True), CategoricalPgAgent(), cartpole, {}
    if algo == "dqn":
        return DQN(**DQN_SMALL, target_update_interval=5), DqnAgent(model_kwargs=SMALL), cartpole, {}
    if algo == "dqn_pri":
        algo_ = DQN(**DQN_SMALL, prioritized_replay=True, pri_beta_steps=400, double_dqn=True, n_step_return=2)
        return algo_, DqnAgent(model_kwargs=SMALL), cartpole, {}
    if algo == "cat_dqn":
        return (
            CategoricalDQN(**DQN_SMALL, V_min=-10, V_max=10),
            CatDqnAgent(n_atoms=11, model_kwargs=SMALL),
            cartpole,
            {},
        )
    if algo == "r2d1":
        r2d1 = R2D1(
            batch_T=4,
            batch_B=8,
            warmup_T=2,
            store_rnn_state_interval=4,
            n_step_return=2,
            min_steps_learn=64,
            replay_size=640,
            replay_ratio=2,
            eps_steps=400,
        )
        agent = R2d1Agent(model_kwargs=dict(hidden_sizes=(8,), lstm_size=8, head_size=8))
        return r2d1, agent, cartpole, dict(CollectorCls=WaitResetCollector)
    qpg_agent = dict(model_kwargs=SMALL, q_model_kwargs=SMALL)
    if algo == "sac":
        return SAC(**QPG), SacAgent(**qpg_agent), pendulum, {}
    if algo == "td3":
        return TD3(**QPG), Td3Agent(**qpg_agent), pendulum, {}
    if algo == "ddpg":
        return DDPG(**QPG), DdpgAgent(**qpg_agent), pendulum, {}
    raise ValueError(f"unknown algo {algo!r}")


ALGOS = ("a2c", "ppo", "dqn", "dqn_pri", "cat_dqn", "r2d1", "sac", "td3", "ddpg")


def build_runner(
    algo: str,
    n_steps: int = 320,
    sampler: str = "serial",
    evaluate: bool = False,
    resume: bool = False,
    policy: CheckpointPolicy | None = None,
    seed: int = 3,
    sampler_cls: type | None = None,
    runner_cls: type | None = None,
) -> MinibatchRl | MinibatchRlEval:
    """A small run of ``algo`` (8 steps x 4 envs per iteration) with checkpoints after every iteration."""
    algo_, agent, env_id, sampler_kwargs = components(algo)
    SamplerCls = sampler_cls or (SerialSampler if sampler == "serial" else CpuSampler)
    if sampler == "cpu" and sampler_cls is None:
        sampler_kwargs = dict(sampler_kwargs, worker_timeout=60)
    eval_kwargs = dict(eval_n_envs=2, eval_max_steps=400, eval_max_trajectories=2) if evaluate else {}
    sampler_ = SamplerCls(
        make, dict(id=env_id), batch_T=8, batch_B=4, max_decorrelation_steps=5, **eval_kwargs, **sampler_kwargs
    )
    affinity = dict(ONE_THREAD, workers_cpus=[[0], [1]]) if sampler == "cpu" else ONE_THREAD
    RunnerCls = runner_cls or (MinibatchRlEval if evaluate else MinibatchRl)
    return RunnerCls(
        algo=algo_,
        agent=agent,
        sampler=sampler_,
        n_steps=n_steps,
        seed=seed,
        log_interval_steps=32,
        affinity=affinity,
        checkpoint=policy or CheckpointPolicy(every_itrs=1, keep_last=2),
        resume=resume,
    )


class Announcing(MinibatchRl):
    """Prints each finished iteration, and optionally sleeps after it so a signal can arrive in between."""

    delay_s = 0.0

    def save_checkpoint(self, itr):  # type: ignore[override]
        info = super().save_checkpoint(itr)
        print(f"ITR {itr}", flush=True)
        time.sleep(self.delay_s)
        return info


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("algo")
    parser.add_argument("run_parent")
    parser.add_argument("--sampler", default="serial")
    parser.add_argument("--n-steps", type=int, default=320)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    Announcing.delay_s = args.delay
    runner = build_runner(args.algo, args.n_steps, args.sampler, resume=args.resume, runner_cls=Announcing)
    with logger_context(args.run_parent, 0, "ckpt", override_prefix=True, resume=True):
        logger.set_console_output(False)  # stdout carries only the ITR lines; debug.log has the rest
        runner.train()
    print("DONE", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
