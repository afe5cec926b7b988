"""DQN on an Atari game, asynchronous, with a CPU-parallel sampler: the sampler process starts workers that
step envs and act, while this process optimises (rlpyt's examples/atari_dqn_async_cpu.py).

    python examples/atari_dqn_async_cpu.py --game pong --run_ID 0
    python examples/atari_dqn_async_cpu.py --resume     # continue data/atari_dqn_async_cpu/run_0 after Ctrl-C
    python examples/atari_dqn_async_cpu.py --n_steps 2000 --min_steps_learn 500 --replay_size 5000 \\
        --log_interval_steps 1000 --eval_max_steps 2000      # a smoke run

rlpyt's settings: 8 envs x 5 steps per batch, replay ratio 8, learning from 10k steps, a 100k-step
replay, an evaluation (2 envs, 4 episodes, at most 10k steps) every 10k steps, 2M steps. The optimiser
takes one core (and the GPU, if torch sees one); the sampler's workers the other cores.

It checkpoints at every log row, without the replay (AsyncRl never saves it: docs/checkpoints.md); a
resumed run refills the replay with ``min_steps_learn`` steps before it trains again.
"""

from __future__ import annotations

import argparse
import glob
import os

from atari_dqn_async_serial import async_affinity

from rlrun.agents.dqn.atari.atari_dqn_agent import AtariDqnAgent
from rlrun.algos.dqn.dqn import DQN
from rlrun.envs.atari.atari_env import AtariEnv, AtariTrajInfo
from rlrun.runners.async_rl import AsyncRlEval
from rlrun.runners.checkpoint import CheckpointPolicy
from rlrun.samplers.async_.cpu_sampler import AsyncCpuSampler
from rlrun.utils.logging.context import logger_context

LOG_DIR = os.path.join("data", "atari_dqn_async_cpu")  # one fixed folder, so that --resume finds the run again


def newest_run(run_ID: int) -> str:
    """The ID of the newest run folder of ``run_ID`` under LOG_DIR (``0``, ``0-2``, ...)."""
    runs = glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}")) + glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}-*"))
    if not runs:
        return str(run_ID)
    return os.path.basename(max(runs, key=os.path.getmtime)).removeprefix("run_")


def build_and_train(
    game="pong",
    run_ID=0,
    n_steps=int(2e6),
    log_interval_steps=int(1e4),
    min_steps_learn=int(1e4),
    replay_size=int(1e5),
    eval_max_steps=int(10e3),
    resume=False,
):
    sampler = AsyncCpuSampler(
        EnvCls=AtariEnv,
        TrajInfoCls=AtariTrajInfo,
        env_kwargs=dict(game=game),
        batch_T=5,
        batch_B=8,
        max_decorrelation_steps=100,
        eval_env_kwargs=dict(game=game),
        eval_n_envs=2,
        eval_max_steps=eval_max_steps,
        eval_max_trajectories=4,
    )
    algo = DQN(replay_ratio=8, min_steps_learn=min_steps_learn, replay_size=replay_size)
    agent = AtariDqnAgent()
    runner = AsyncRlEval(
        algo=algo,
        agent=agent,
        sampler=sampler,
        n_steps=n_steps,
        log_interval_steps=log_interval_steps,
        affinity=async_affinity(),
        checkpoint=CheckpointPolicy(replay=False),  # AsyncRl leaves the replay out in any case
        resume=resume,
    )
    config = dict(game=game)
    run_name = newest_run(run_ID) if resume else run_ID  # a later run of the same ID took run_<ID>-2, ...
    with logger_context(LOG_DIR, run_name, "async_dqn_" + game, config, resume=resume):
        return runner.train()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", help="Atari game", default="pong")
    parser.add_argument("--run_ID", help="run identifier (logging)", type=int, default=0)
    parser.add_argument("--n_steps", type=int, default=int(2e6))
    parser.add_argument("--log_interval_steps", type=int, default=int(1e4))
    parser.add_argument("--min_steps_learn", type=int, default=int(1e4))
    parser.add_argument("--replay_size", type=int, default=int(1e5))
    parser.add_argument("--eval_max_steps", type=int, default=int(10e3))
    parser.add_argument("--resume", action="store_true", help="continue run_<run_ID> from its newest checkpoint")
    args = parser.parse_args()
    build_and_train(**vars(args))
