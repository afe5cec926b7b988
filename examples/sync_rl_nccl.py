"""SyncRl on every GPU of this machine with NCCL, one command; checks that the ranks' parameters agree.

    python examples/sync_rl_nccl.py                               # one rank per visible GPU, NCCL
    python examples/sync_rl_nccl.py --n_gpu 2 --n_steps 2000000   # longer
    python examples/sync_rl_nccl.py --cpu --n_ranks 2             # the same run on CPUs with gloo
    python examples/sync_rl_nccl.py --resume                      # continue after Ctrl-C, from the checkpoint

A2C on CartPole-v1 with a CpuSampler in each rank (the machine's cores split between the ranks by
``make_affinity(..., gpu_per_run=n_gpu)``); the model trains on the rank's GPU, and DDP averages the
gradients over NCCL. At the end every rank hashes its parameters, and the script prints whether all
hashes agree, the training speed and the return. It exits 1 if the parameters differ.

NCCL needs one GPU per rank: with a single GPU the run has one rank (no gradient averaging); use
``--cpu --n_ranks 2`` to exercise two ranks there. Not yet run on a CUDA machine in rlrun's tests (written
and tested on CPUs, where the test runs ``--cpu``).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
import sys
import time

import torch
import torch.distributed as dist

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.gym import make
from rlrun.runners.sync_rl import SyncRl
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.utils.launching.affinity import make_affinity
from rlrun.utils.logging.context import logger_context

LOG_DIR = os.path.join("data", "sync_rl_nccl")  # one fixed folder, so that --resume finds the run again


def newest_run(run_ID: int) -> str:
    """The ID of the newest run folder of ``run_ID`` under LOG_DIR (``0``, ``0-2``, ...)."""
    runs = glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}")) + glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}-*"))
    if not runs:
        return str(run_ID)
    return os.path.basename(max(runs, key=os.path.getmtime)).removeprefix("run_")


class CheckedSyncRl(SyncRl):
    """SyncRl that compares a hash of every rank's parameters after the last iteration."""

    params_agree: bool | None = None

    def store_diagnostics(self, itr, traj_infos, opt_info):
        super().store_diagnostics(itr, traj_infos, opt_info)
        if itr == self.n_itr - 1 and self.world_size > 1:
            h = hashlib.sha256()
            for tensor in self.agent.state_dict().values():
                h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
            digests: list[str | None] = [None] * self.world_size
            dist.all_gather_object(digests, h.hexdigest())
            self.params_agree = len(set(digests)) == 1


def cpu_affinities(n_ranks: int) -> list[dict]:
    cores = os.cpu_count() or 1
    per_rank = max(1, cores // n_ranks)
    return [
        dict(
            master_torch_threads=1,
            workers_cpus=[[(rank * per_rank + i) % cores] for i in range(max(1, per_rank - 1))],
            set_affinity=cores >= 2 * n_ranks,
        )
        for rank in range(n_ranks)
    ]


def build_and_train(
    cpu: bool, n_ranks: int, n_gpu: int | None, n_steps: int, batch_B: int, run_ID: int, resume: bool = False
) -> int:
    if cpu:
        affinity: list[dict] | dict = cpu_affinities(n_ranks)
    else:
        if not torch.cuda.is_available():
            print("No CUDA device is visible: run with --cpu (gloo), or on a machine with GPUs.", file=sys.stderr)
            return 2
        n_gpu = torch.cuda.device_count() if n_gpu is None else n_gpu
        affinity = make_affinity(n_cpu_core=os.cpu_count() or 1, n_gpu=n_gpu, gpu_per_run=n_gpu)
        if isinstance(affinity, dict):
            affinity = [affinity]
    n_ranks = len(affinity)
    sampler = CpuSampler(make, dict(id="CartPole-v1"), batch_T=16, batch_B=batch_B, max_decorrelation_steps=0)
    algo = A2C(learning_rate=1e-3, clip_grad_norm=0.5, normalize_advantage=True, gae_lambda=0.95)
    runner = CheckedSyncRl(
        algo=algo,
        agent=CategoricalPgAgent(),
        sampler=sampler,
        n_steps=n_steps,
        log_interval_steps=max(n_steps // 5, 1),
        affinity=affinity,
        seed=run_ID,
        checkpoint=True,  # at every log row, so that --resume continues after Ctrl-C
        resume=resume,
    )
    start = time.perf_counter()
    run_name = newest_run(run_ID) if resume else run_ID  # a later run of the same ID took run_<ID>-2, ...
    name, config = f"a2c_cartpole_{runner.backend}", dict(n_ranks=n_ranks)
    with logger_context(LOG_DIR, run_name, name, config, snapshot_mode="last", resume=resume):
        row = runner.train()
    seconds = time.perf_counter() - start
    print(
        f"ranks: {n_ranks}, backend: {runner.backend}, steps: {runner.n_itr * runner.itr_batch_size}, "
        f"wall: {seconds:.1f} s, steps/s: {runner.n_itr * runner.itr_batch_size / seconds:.0f}, "
        f"return: {row.get('ReturnAverage', float('nan')):.1f}, "
        f"parameters identical across ranks: {'n/a (one rank)' if runner.params_agree is None else runner.params_agree}"
    )
    return 1 if runner.params_agree is False else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cpu", action="store_true", help="train on CPUs with gloo instead of GPUs with NCCL")
    parser.add_argument("--n_ranks", type=int, default=2, help="ranks with --cpu")
    parser.add_argument("--n_gpu", type=int, default=None, help="GPUs (ranks) to use; default: all visible")
    parser.add_argument("--n_steps", type=int, default=200_000, help="env steps over all ranks")
    parser.add_argument("--batch_B", type=int, default=8, help="envs per rank")
    parser.add_argument("--run_ID", type=int, default=0)
    parser.add_argument("--resume", action="store_true", help="continue run_<run_ID> from its newest checkpoint")
    args = parser.parse_args()
    sys.exit(build_and_train(args.cpu, args.n_ranks, args.n_gpu, args.n_steps, args.batch_B, args.run_ID, args.resume))
