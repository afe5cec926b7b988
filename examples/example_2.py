"""SAC on a MuJoCo task, everything in one process (rlpyt's example_2).

    python examples/example_2.py --env_id Hopper-v3 --run_ID 0 --cuda_idx 0
    python examples/example_2.py --env_id HalfCheetah-v5 --n_steps 50000
    python examples/example_2.py --n_steps 300 --min_steps_learn 100 --log_interval_steps 100   # smoke run
    python examples/example_2.py --resume   # continue after Ctrl-C, from the checkpoint

Needs the MuJoCo extra (``pip install -e ".[mujoco]"``). rlpyt's id ``Hopper-v3`` runs as Gymnasium's
``Hopper-v5``, with a warning (``rlrun.envs.gym.make``); write the v5 id to silence it.

SAC with its defaults, as in rlpyt: one env, one step and one gradient step (batch 256) per
iteration, a 1M-step replay, learning from step 10k, a learned entropy temperature. Actions reach
the agent in ``[-1, 1]`` and are mapped onto the task's bounds by ``make``. Every
``--log_interval_steps`` 10 eval envs play up to 50 whole episodes (at most 51k steps) with the
policy's mean action.
"""

from __future__ import annotations

import argparse
import glob
import os

from rlrun.agents.qpg.sac_agent import SacAgent
from rlrun.algos.qpg.sac import SAC
from rlrun.envs.gym import make as gym_make
from rlrun.runners.minibatch_rl import MinibatchRlEval
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging.context import logger_context

LOG_DIR = os.path.join("data", "example_2")  # one fixed folder, so that --resume finds the run again


def newest_run(run_ID: int) -> str:
    """The ID of the newest run folder of ``run_ID`` under LOG_DIR (``0``, ``0-2``, ...)."""
    runs = glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}")) + glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}-*"))
    if not runs:
        return str(run_ID)
    return os.path.basename(max(runs, key=os.path.getmtime)).removeprefix("run_")


def build_and_train(
    env_id="Hopper-v3",
    run_ID=0,
    cuda_idx=None,
    n_steps=int(1e6),
    log_interval_steps=int(1e4),
    min_steps_learn=int(1e4),
    eval_max_trajectories=50,
    seed=None,
    resume=False,
):
    sampler = SerialSampler(
        EnvCls=gym_make,
        env_kwargs=dict(id=env_id),
        eval_env_kwargs=dict(id=env_id),
        batch_T=1,  # one time step per iteration
        batch_B=1,  # one env
        max_decorrelation_steps=0,
        eval_n_envs=10,
        eval_max_steps=int(51e3),
        eval_max_trajectories=eval_max_trajectories,
    )
    algo = SAC(min_steps_learn=min_steps_learn)  # otherwise SAC's defaults
    agent = SacAgent()
    runner = MinibatchRlEval(
        algo=algo,
        agent=agent,
        sampler=sampler,
        n_steps=n_steps,
        log_interval_steps=log_interval_steps,
        affinity=dict(cuda_idx=cuda_idx),
        seed=seed,  # None: a fresh seed, logged
        checkpoint=True,  # at every log row, the replay in it (small here), so that --resume continues
        resume=resume,
    )
    config = dict(env_id=env_id)
    run_name = newest_run(run_ID) if resume else run_ID  # a later run of the same ID took run_<ID>-2, ...
    with logger_context(LOG_DIR, run_name, f"sac_{env_id}", config, snapshot_mode="last", resume=resume):
        return runner.train()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env_id", help="environment ID", default="Hopper-v3")
    parser.add_argument("--run_ID", help="run identifier (logging)", type=int, default=0)
    parser.add_argument("--cuda_idx", help="gpu to use", type=int, default=None)
    parser.add_argument("--n_steps", help="env steps to train", type=int, default=int(1e6))
    parser.add_argument("--log_interval_steps", type=int, default=int(1e4))
    parser.add_argument("--min_steps_learn", type=int, default=int(1e4), help="env steps before the first update")
    parser.add_argument("--eval_max_trajectories", type=int, default=50, help="episodes per evaluation (at most)")
    parser.add_argument("--seed", type=int, default=None, help="the run's seed (default: a fresh one, logged)")
    parser.add_argument("--resume", action="store_true", help="continue run_<run_ID> from its newest checkpoint")
    args = parser.parse_args()
    build_and_train(
        args.env_id,
        args.run_ID,
        args.cuda_idx,
        args.n_steps,
        args.log_interval_steps,
        args.min_steps_learn,
        args.eval_max_trajectories,
        args.seed,
        args.resume,
    )
