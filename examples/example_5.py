"""DQN on an Atari game with the served (GPU) sampler: workers step envs, this process acts (rlpyt's example_5).

    python examples/example_5.py --game pong --cuda_idx 0 --n_parallel 8
    python examples/example_5.py --n_steps 1000 --log_interval_steps 500   # a smoke run on the CPU
    python examples/example_5.py --resume                                  # continue after Ctrl-C, from the checkpoint

More envs (``batch_B``) make each batched forward pass for action selection cheaper per env; a
larger ``batch_size`` in the algorithm does the same for training. Both can change what learns well.
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
from rlrun.samplers.parallel.gpu.sampler import GpuSampler
from rlrun.utils.logging.context import logger_context

LOG_DIR = os.path.join("data", "example_5")  # one fixed folder, so that --resume finds the run again


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
    n_parallel=2,
    n_steps=int(50e6),
    log_interval_steps=int(1e3),
    replay_size=None,
    eval_max_steps=int(10e3),
    resume=False,
):
    config = dict(
        env=dict(game=game),
        # rlpyt's DQN stored each Atari frame once in a 1M-step replay. Until rlrun's frame replay lands,
        # its uniform replay stores whole 4-frame observations (33 kB a step): 100k steps take 3.1 GiB.
        algo=dict(batch_size=128, replay_size=int(1e5) if replay_size is None else replay_size),
        sampler=dict(batch_T=2, batch_B=32),
    )
    sampler = GpuSampler(
        EnvCls=AtariEnv,
        TrajInfoCls=AtariTrajInfo,
        env_kwargs=dict(game=game),
        eval_env_kwargs=dict(game=game),
        max_decorrelation_steps=0,
        eval_n_envs=10,
        eval_max_steps=eval_max_steps,
        eval_max_trajectories=5,
        **config["sampler"],  # many envs, so that one forward pass serves many
    )
    algo = DQN(**config["algo"])
    agent = AtariDqnAgent()
    runner = MinibatchRlEval(
        algo=algo,
        agent=agent,
        sampler=sampler,
        n_steps=n_steps,
        log_interval_steps=log_interval_steps,
        affinity=dict(cuda_idx=cuda_idx, workers_cpus=list(range(n_parallel))),
        # A checkpoint at every log row, without the replay (3.1 GiB at 100k steps): a resumed run refills it.
        checkpoint=CheckpointPolicy(replay=False),
        resume=resume,
    )
    run_name = newest_run(run_ID) if resume else run_ID  # a later run of the same ID took run_<ID>-2, ...
    with logger_context(LOG_DIR, run_name, f"dqn_{game}", config, snapshot_mode="last", resume=resume):
        return runner.train()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", help="Atari game", default="pong")
    parser.add_argument("--run_ID", help="run identifier (logging)", type=int, default=0)
    parser.add_argument("--cuda_idx", help="gpu to use", type=int, default=None)
    parser.add_argument("--n_parallel", help="number of sampler workers", type=int, default=2)
    parser.add_argument("--n_steps", help="env steps to train", type=int, default=int(50e6))
    parser.add_argument("--log_interval_steps", type=int, default=int(1e3))
    parser.add_argument("--replay_size", type=int, default=None, help="replay steps (default 100k)")
    parser.add_argument("--eval_max_steps", type=int, default=int(10e3), help="env steps per evaluation, at most")
    parser.add_argument("--resume", action="store_true", help="continue run_<run_ID> from its newest checkpoint")
    args = parser.parse_args()
    build_and_train(
        args.game,
        args.run_ID,
        args.cuda_idx,
        args.n_parallel,
        args.n_steps,
        args.log_interval_steps,
        args.replay_size,
        args.eval_max_steps,
        args.resume,
    )
