"""A2C on an Atari game over several GPUs with SyncRl (rlpyt's example_7).

    python examples/example_7.py --game pong                    # 2 GPUs, one rank each (NCCL)
    python examples/example_7.py --n_gpu 4                      # 4 GPUs
    python examples/example_7.py --cpu_ranks 2 --n_steps 2000   # 2 ranks on CPUs (gloo): a smoke run
    python examples/example_7.py --resume                       # continue after Ctrl-C, from the checkpoint
    torchrun --nproc_per_node 2 examples/example_7.py           # ranks started by torchrun instead

The whole stack (a served sampler, the agent, A2C) is replicated in one process per GPU; each rank
collects its own batches, and DistributedDataParallel averages the gradients, so all ranks keep the
same parameters. Batch sizes are per rank: one iteration trains on ``n_gpu`` batches of 5 x 16 steps.
``make_affinity(..., gpu_per_run=n_gpu)`` gives each rank its GPU and a share of the cores. See
docs/sync_rl.md.
"""

from __future__ import annotations

import argparse
import glob
import os

from rlrun.agents.pg.atari import AtariFfAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.atari.atari_env import AtariEnv, AtariTrajInfo
from rlrun.runners.sync_rl import SyncRl
from rlrun.samplers.parallel.gpu.collectors import GpuWaitResetCollector
from rlrun.samplers.parallel.gpu.sampler import GpuSampler
from rlrun.utils.launching.affinity import make_affinity
from rlrun.utils.logging.context import logger_context

LOG_DIR = os.path.join("data", "example_7")  # one fixed folder, so that --resume finds the run again


def newest_run(run_ID: int) -> str:
    """The ID of the newest run folder of ``run_ID`` under LOG_DIR (``0``, ``0-2``, ...)."""
    runs = glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}")) + glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}-*"))
    if not runs:
        return str(run_ID)
    return os.path.basename(max(runs, key=os.path.getmtime)).removeprefix("run_")


def build_and_train(
    game="pong",
    run_ID=0,
    n_gpu=2,
    cpu_ranks=0,
    n_steps=int(50e6),
    log_interval_steps=int(1e5),
    max_decorrelation_steps=400,
    resume=False,
):
    if cpu_ranks:
        # Each rank: its sampler's workers and its training on CPUs, unpinned; gloo averages gradients.
        affinity = [dict(workers_cpus=[[0]], master_torch_threads=1, set_affinity=False) for _ in range(cpu_ranks)]
    else:
        affinity = make_affinity(
            run_slot=0,
            n_cpu_core=os.cpu_count() or 1,  # rlpyt's example: 16 cores and 8 GPUs across all experiments
            n_gpu=n_gpu,
            gpu_per_run=n_gpu,  # one rank per GPU
        )
    sampler = GpuSampler(
        EnvCls=AtariEnv,
        TrajInfoCls=AtariTrajInfo,
        env_kwargs=dict(game=game),
        CollectorCls=GpuWaitResetCollector,
        batch_T=5,
        batch_B=16,
        max_decorrelation_steps=max_decorrelation_steps,
    )
    algo = A2C()  # Run with defaults.
    agent = AtariFfAgent()
    runner = SyncRl(
        algo=algo,
        agent=agent,
        sampler=sampler,
        n_steps=n_steps,
        log_interval_steps=log_interval_steps,
        affinity=affinity,
        checkpoint=True,  # at every log row, so that --resume continues after Ctrl-C
        resume=resume,
    )
    config = dict(game=game)
    name = "a2c_" + game
    run_name = newest_run(run_ID) if resume else run_ID  # a later run of the same ID took run_<ID>-2, ...
    with logger_context(LOG_DIR, run_name, name, config, snapshot_mode="last", resume=resume):
        return runner.train()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", help="Atari game", default="pong")
    parser.add_argument("--run_ID", help="run identifier (logging)", type=int, default=0)
    parser.add_argument("--n_gpu", help="GPUs to parallelize the run across (one rank each)", type=int, default=2)
    parser.add_argument("--cpu_ranks", help="train on CPUs with this many ranks instead", type=int, default=0)
    parser.add_argument("--n_steps", help="env steps over all ranks", type=int, default=int(50e6))
    parser.add_argument("--log_interval_steps", type=int, default=int(1e5))
    parser.add_argument("--max_decorrelation_steps", type=int, default=400)
    parser.add_argument("--resume", action="store_true", help="continue run_<run_ID> from its newest checkpoint")
    args = parser.parse_args()
    build_and_train(
        game=args.game,
        run_ID=args.run_ID,
        n_gpu=args.n_gpu,
        cpu_ranks=args.cpu_ranks,
        n_steps=args.n_steps,
        log_interval_steps=args.log_interval_steps,
        max_decorrelation_steps=args.max_decorrelation_steps,
        resume=args.resume,
    )
