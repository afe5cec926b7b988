"""A2C on an Atari game, with a choice of sampler (rlpyt's example_3).

    python examples/example_3.py --game pong --sample_mode serial
    python examples/example_3.py --game pong --sample_mode cpu --n_parallel 2   # 2 worker processes
    python examples/example_3.py --sample_mode gpu --cuda_idx 0          # workers step envs, the GPU acts
    python examples/example_3.py --sample_mode alternating               # two worker groups take turns
    python examples/example_3.py --n_steps 400 --log_interval_steps 80   # a smoke run
    python examples/example_3.py --resume                                # continue after Ctrl-C, from the checkpoint

serial: envs and agent in this process. cpu: each worker runs its envs and the agent. gpu: workers
step envs, this process acts for all of them in one batch (on the GPU with --cuda_idx, else the
CPU). alternating: gpu with two groups of workers, so acting for one group overlaps the other's steps.
"""

from __future__ import annotations

import argparse
import glob
import os

from rlrun.agents.pg.atari import AtariFfAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.atari.atari_env import AtariEnv, AtariTrajInfo
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.parallel.gpu.alternating_sampler import AlternatingSampler
from rlrun.samplers.parallel.gpu.sampler import GpuSampler
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging.context import logger_context

LOG_DIR = os.path.join("data", "example_3")  # one fixed folder, so that --resume finds the run again


def newest_run(run_ID: int) -> str:
    """The ID of the newest run folder of ``run_ID`` under LOG_DIR (``0``, ``0-2``, ...)."""
    runs = glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}")) + glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}-*"))
    if not runs:
        return str(run_ID)
    return os.path.basename(max(runs, key=os.path.getmtime)).removeprefix("run_")


SAMPLERS = {"serial": SerialSampler, "cpu": CpuSampler, "gpu": GpuSampler, "alternating": AlternatingSampler}


def build_and_train(
    game="pong",
    run_ID=0,
    cuda_idx=None,
    sample_mode="serial",
    n_parallel=2,
    n_steps=int(50e6),
    log_interval_steps=int(1e5),
    resume=False,
):
    if sample_mode not in SAMPLERS:
        raise SystemExit(f"--sample_mode {sample_mode!r} is not available; choose from {sorted(SAMPLERS)}.")
    affinity = dict(cuda_idx=cuda_idx, workers_cpus=list(range(n_parallel)))
    if sample_mode == "alternating":  # two workers per CPU, one of each group
        affinity.update(workers_cpus=affinity["workers_cpus"] * 2, alternating=True)
    sampler = SAMPLERS[sample_mode](
        EnvCls=AtariEnv,
        TrajInfoCls=AtariTrajInfo,
        env_kwargs=dict(game=game),
        batch_T=5,  # 5 steps in each of 16 envs per iteration
        batch_B=16,
        max_decorrelation_steps=400,
    )
    algo = A2C()
    agent = AtariFfAgent()
    runner = MinibatchRl(
        algo=algo,
        agent=agent,
        sampler=sampler,
        n_steps=n_steps,
        log_interval_steps=log_interval_steps,
        affinity=affinity,
        checkpoint=True,  # at every log row, so that --resume continues after Ctrl-C
        resume=resume,
    )
    config = dict(game=game, sample_mode=sample_mode)
    run_name = newest_run(run_ID) if resume else run_ID  # a later run of the same ID took run_<ID>-2, ...
    with logger_context(LOG_DIR, run_name, f"a2c_{game}_{sample_mode}", config, snapshot_mode="last", resume=resume):
        return runner.train()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", help="Atari game", default="pong")
    parser.add_argument("--run_ID", help="run identifier (logging)", type=int, default=0)
    parser.add_argument("--cuda_idx", help="gpu to use", type=int, default=None)
    parser.add_argument("--sample_mode", help="which sampler", choices=sorted(SAMPLERS), default="serial")
    parser.add_argument("--n_parallel", help="number of sampler workers", type=int, default=2)
    parser.add_argument("--n_steps", help="env steps to train", type=int, default=int(50e6))
    parser.add_argument("--log_interval_steps", type=int, default=int(1e5))
    parser.add_argument("--resume", action="store_true", help="continue run_<run_ID> from its newest checkpoint")
    args = parser.parse_args()
    build_and_train(
        args.game,
        args.run_ID,
        args.cuda_idx,
        args.sample_mode,
        args.n_parallel,
        args.n_steps,
        args.log_interval_steps,
        args.resume,
    )
