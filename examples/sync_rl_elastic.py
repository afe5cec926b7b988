"""SyncRl that heals itself under torchrun: restarted after a failure, it resumes from its newest checkpoint.

    # one machine, two ranks, up to 2 restarts:
    torchrun --nproc-per-node 2 --max-restarts 2 examples/sync_rl_elastic.py --log_dir runs/elastic
    # two machines, one rank each (run on both; HOST0 is the first machine; runs/ on a shared file system):
    torchrun --nnodes 2 --nproc-per-node 1 --max-restarts 2 --rdzv-backend c10d \
        --rdzv-endpoint HOST0:29400 --rdzv-id elastic_a2c examples/sync_rl_elastic.py --log_dir runs/elastic

A2C on CartPole-v1, each rank with a SerialSampler. Rank 0 writes a checkpoint after every log row,
and every start (the first one too) runs with ``resume=True``: a fresh folder starts at iteration 0,
a restarted job continues after its newest checkpoint, with ``progress.csv`` cut back to that
checkpoint's rows. The run folder must be on a file system that every machine sees (docs/sync_rl.md,
"Elastic runs"). benchmarks/elastic_restart.py kills a rank of this script and times the restart.
"""

from __future__ import annotations

import argparse
import os

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.gym import make
from rlrun.runners.checkpoint import CheckpointPolicy
from rlrun.runners.sync_rl import SyncRl
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging.context import logger_context


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log_dir", required=True, help="the folder of the run (shared by every machine)")
    parser.add_argument("--n_steps", type=float, default=200_000, help="env steps over all ranks")
    parser.add_argument("--batch_T", type=int, default=16)
    parser.add_argument("--batch_B", type=int, default=4, help="envs per rank")
    parser.add_argument("--log_interval_steps", type=float, default=10_000, help="steps between log rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--collective_timeout", type=float, default=600.0, help="seconds")
    return parser


def build_runner(args: argparse.Namespace) -> SyncRl:
    return SyncRl(
        algo=A2C(),
        agent=CategoricalPgAgent(),
        sampler=SerialSampler(make, dict(id="CartPole-v1"), batch_T=args.batch_T, batch_B=args.batch_B),
        n_steps=args.n_steps,
        seed=args.seed,
        affinity=dict(master_torch_threads=1, set_affinity=False),
        log_interval_steps=args.log_interval_steps,
        checkpoint=CheckpointPolicy(every_logs=1, keep_last=2),
        resume=True,  # a fresh folder starts at iteration 0; a restart continues after the newest checkpoint
        collective_timeout=args.collective_timeout,
    )


def main(args: argparse.Namespace) -> None:
    runner = build_runner(args)
    log_dir = os.path.abspath(args.log_dir)
    with logger_context(log_dir, 0, "sync_rl_elastic", vars(args), override_prefix=True, resume=True):
        runner.train()


if __name__ == "__main__":
    main(build_parser().parse_args())
