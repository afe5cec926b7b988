"""DQN on an Atari game with the serial sampler and periodic evaluation (rlpyt's example_1).

    python examples/example_1.py --game pong --run_ID 0 --cuda_idx 0
    python examples/example_1.py --n_steps 2000   # a smoke run on the CPU
    python examples/example_1.py --resume         # continue data/example_1/run_0 after Ctrl-C

DQN's defaults, as in rlpyt: a replay of the last 1M steps, in a frame replay that stores each
104x80 frame once (about 8.3 kB a step: 7.8 GiB when full, which takes 1M steps).
``--replay_size`` lowers it for smaller machines.

Evaluation: 10 eval envs share 5 whole episodes each time, within at most 10k steps.
"""

from __future__ import annotations

import argparse
import glob
import os

from rlrun.agents.dqn.atari.atari_dqn_agent import AtariDqnAgent
from rlrun.algos.dqn.dqn import DQN
from rlrun.envs.atari.atari_env import AtariEnv, AtariTrajInfo
from rlrun.runners.checkpoint import CheckpointPolicy
from rlrun.runners.minibatch_rl import MinibatchRlEval
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging.context import logger_context

LOG_DIR = os.path.join("data", "example_1")  # one fixed folder, so that --resume finds the run again


def newest_run(run_ID: int) -> str:
    """The ID of the newest run folder of ``run_ID`` under LOG_DIR (``0``, ``0-2``, ...)."""
    runs = glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}")) + glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}-*"))
    if not runs:
        return str(run_ID)
    return os.path.basename(max(runs, key=os.path.getmtime)).removeprefix("run_")


def build_and_train(
    game="pong",
    run_ID=0,
    cuda_idx=None,
    n_steps=int(50e6),
    log_interval_steps=int(1e3),
    replay_size=int(1e6),
    resume=False,
):
    sampler = SerialSampler(
        EnvCls=AtariEnv,
        TrajInfoCls=AtariTrajInfo,  # adds GameScore: the unclipped score
        env_kwargs=dict(game=game),
        eval_env_kwargs=dict(game=game),
        batch_T=4,
        batch_B=1,
        max_decorrelation_steps=0,
        eval_n_envs=10,
        eval_max_steps=int(10e3),
        eval_max_trajectories=5,
    )
    algo = DQN(min_steps_learn=int(1e3), replay_size=replay_size)  # otherwise DQN's defaults
    agent = AtariDqnAgent()
    runner = MinibatchRlEval(
        algo=algo,
        agent=agent,
        sampler=sampler,
        n_steps=n_steps,
        log_interval_steps=log_interval_steps,
        affinity=dict(cuda_idx=cuda_idx),
        # A checkpoint at every log row, without the replay (up to 7.8 GiB): a resumed run refills it.
        checkpoint=CheckpointPolicy(replay=False),
        resume=resume,
    )
    run_name = newest_run(run_ID) if resume else run_ID  # a later run of the same ID took run_<ID>-2, ...
    with logger_context(LOG_DIR, run_name, f"dqn_{game}", dict(game=game), snapshot_mode="last", resume=resume):
        return runner.train()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", help="Atari game", default="pong")
    parser.add_argument("--run_ID", help="run identifier (logging)", type=int, default=0)
    parser.add_argument("--cuda_idx", help="gpu to use", type=int, default=None)
    parser.add_argument("--n_steps", help="env steps to train", type=int, default=int(50e6))
    parser.add_argument("--log_interval_steps", type=int, default=int(1e3))
    parser.add_argument("--replay_size", type=int, default=int(1e6), help="steps kept in the replay")
    parser.add_argument("--resume", action="store_true", help="continue run_<run_ID> from its newest checkpoint")
    args = parser.parse_args()
    build_and_train(
        args.game, args.run_ID, args.cuda_idx, args.n_steps, args.log_interval_steps, args.replay_size, args.resume
    )
