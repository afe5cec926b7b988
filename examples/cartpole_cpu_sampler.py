"""Train PPO on CartPole-v1 with the CPU-parallel sampler: one worker process per core.

    python examples/cartpole_cpu_sampler.py                    # 100k env steps, one worker per usable CPU
    python examples/cartpole_cpu_sampler.py --n_workers 2 --n_steps 20000
    python examples/cartpole_cpu_sampler.py --start_method spawn
    python examples/cartpole_cpu_sampler.py --resume           # continue after Ctrl-C, from the checkpoint

The same run as examples/quick_start.py (same seed, same samples) with the envs and the agent's
action sampling spread over worker processes that write into one shared batch. The algorithm trains
in this process; workers read the new weights from shared memory before each batch.
"""

from __future__ import annotations

import argparse
import glob
import os

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.ppo import PPO
from rlrun.envs.gym import make
from rlrun.experiments.configs.cartpole import CONFIGS
from rlrun.runners.minibatch_rl import MinibatchRlEval
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.utils.logging.context import logger_context

LOG_DIR = os.path.join("data", "cartpole_cpu_sampler")  # one fixed folder, so that --resume finds the run again


def newest_run(run_ID: int) -> str:
    """The ID of the newest run folder of ``run_ID`` under LOG_DIR (``0``, ``0-2``, ...)."""
    runs = glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}")) + glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}-*"))
    if not runs:
        return str(run_ID)
    return os.path.basename(max(runs, key=os.path.getmtime)).removeprefix("run_")


def build_and_train(
    n_steps: int = 100_000,
    seed: int = 0,
    run_ID: int = 0,
    n_workers: int | None = None,
    start_method: str | None = None,
    log_interval_steps: int = 10_000,
    resume: bool = False,
):
    config = CONFIGS["ppo"]
    sampler = CpuSampler(
        EnvCls=make,
        env_kwargs=dict(id="CartPole-v1"),
        batch_T=config["sampler"]["batch_T"],  # 32 steps in each of 8 envs per iteration
        batch_B=config["sampler"]["batch_B"],
        max_decorrelation_steps=0,
        eval_n_envs=4,
        eval_max_steps=4 * 3 * 501,
        eval_max_trajectories=10,
        start_method=start_method,  # None: fork on Linux, spawn elsewhere
    )
    # None: one unpinned worker per usable CPU. A dict names the workers (and may pin them). Either way the
    # runner trains with the torch threads the workers leave (1 when they fill the CPUs): fast on a shared machine.
    affinity = None if n_workers is None else dict(workers_cpus=[[i] for i in range(n_workers)], set_affinity=False)
    runner = MinibatchRlEval(
        algo=PPO(**config["algo"]),
        agent=CategoricalPgAgent(),
        sampler=sampler,
        n_steps=n_steps,
        seed=seed,
        log_interval_steps=log_interval_steps,
        affinity=affinity,
        checkpoint=True,  # at every log row, so that --resume continues after Ctrl-C
        resume=resume,
    )
    run_name = newest_run(run_ID) if resume else run_ID  # a later run of the same ID took run_<ID>-2, ...
    config = dict(n_steps=n_steps, seed=seed)
    with logger_context(LOG_DIR, run_name, "ppo_cartpole_cpu", config, snapshot_mode="last", resume=resume):
        result = runner.train()
    print(f"Final evaluation return: {result['ReturnAverage']:.1f} after {int(result['Diagnostics/CumSteps'])} steps")
    return result


if __name__ == "__main__":  # needed under spawn: workers import this file
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n_steps", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--run_ID", type=int, default=0)
    parser.add_argument("--n_workers", type=int, default=None, help="default: one per usable CPU")
    parser.add_argument("--start_method", choices=["fork", "spawn", "forkserver"], default=None)
    parser.add_argument("--log_interval_steps", type=int, default=10_000)
    parser.add_argument("--resume", action="store_true", help="continue run_<run_ID> from its newest checkpoint")
    args = parser.parse_args()
    build_and_train(
        args.n_steps,
        args.seed,
        args.run_ID,
        args.n_workers,
        args.start_method,
        args.log_interval_steps,
        args.resume,
    )
