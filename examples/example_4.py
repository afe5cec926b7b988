"""A2C with a recurrent (LSTM) agent on an Atari game (rlpyt's example_4).

    python examples/example_4.py --game pong                              # GpuSampler, as rlpyt's
    python examples/example_4.py --sample_mode cpu --n_parallel 2         # 2 worker processes
    python examples/example_4.py --sample_mode gpu --cuda_idx 0           # workers step envs, the GPU acts
    python examples/example_4.py --sample_mode serial --n_steps 640 --log_interval_steps 320   # a smoke run
    python examples/example_4.py --resume   # continue after Ctrl-C, from the checkpoint

The agent learns from single frames (``num_img_obs=1``): its LSTM carries the history that stacked
frames would give a feedforward agent. A2C trains it on each whole ``[T, B]`` batch, starting every
env's sequence from the recurrent state it had when the batch was sampled. By default an env that
is done waits for the next batch to reset (wait-reset collectors) and its remaining steps are masked
out of the loss. ``--mid_batch_reset True`` picks the collectors that reset at once, as in rlpyt: the
agent records each episode start, and the replay restarts the state there (see docs/recurrent_pg.md).

Samplers: serial (envs and agent in this process), cpu (each worker runs its envs and a copy of the
agent), gpu (workers step envs, this process acts for all of them: on the GPU with --cuda_idx, else
the CPU), alternating (gpu with two groups of workers taking turns).
"""

from __future__ import annotations

import argparse
import glob
import os

from rlrun.agents.pg.atari import AtariLstmAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.atari.atari_env import AtariEnv, AtariTrajInfo
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.collectors import ResetCollector, WaitResetCollector
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.parallel.gpu.alternating_sampler import AlternatingSampler
from rlrun.samplers.parallel.gpu.collectors import GpuResetCollector, GpuWaitResetCollector
from rlrun.samplers.parallel.gpu.sampler import GpuSampler
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging.context import logger_context

LOG_DIR = os.path.join("data", "example_4")  # one fixed folder, so that --resume finds the run again


def newest_run(run_ID: int) -> str:
    """The ID of the newest run folder of ``run_ID`` under LOG_DIR (``0``, ``0-2``, ...)."""
    runs = glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}")) + glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}-*"))
    if not runs:
        return str(run_ID)
    return os.path.basename(max(runs, key=os.path.getmtime)).removeprefix("run_")


SAMPLERS = {"serial": SerialSampler, "cpu": CpuSampler, "gpu": GpuSampler, "alternating": AlternatingSampler}
# (reset at once, wait for the batch end): the agent acts in the workers, or in this process (served).
COLLECTORS = {
    "serial": (ResetCollector, WaitResetCollector),
    "cpu": (ResetCollector, WaitResetCollector),
    "gpu": (GpuResetCollector, GpuWaitResetCollector),
    "alternating": (GpuResetCollector, GpuWaitResetCollector),
}


def build_and_train(
    game="pong",
    run_ID=0,
    cuda_idx=None,
    mid_batch_reset=False,
    n_parallel=2,
    sample_mode="gpu",
    n_steps=int(50e6),
    log_interval_steps=int(1e5),
    resume=False,
):
    if sample_mode not in SAMPLERS:
        raise SystemExit(f"--sample_mode {sample_mode!r} is not available; choose from {sorted(SAMPLERS)}.")
    affinity = dict(cuda_idx=cuda_idx, workers_cpus=list(range(n_parallel)))
    if sample_mode == "alternating":  # two workers per CPU, one of each group
        affinity.update(workers_cpus=affinity["workers_cpus"] * 2, alternating=True)
    Collector = COLLECTORS[sample_mode][0 if mid_batch_reset else 1]
    print(f"To satisfy mid_batch_reset={mid_batch_reset}, using {Collector.__name__}.")
    sampler = SAMPLERS[sample_mode](
        EnvCls=AtariEnv,
        TrajInfoCls=AtariTrajInfo,
        env_kwargs=dict(game=game, num_img_obs=1),  # single frames: the LSTM remembers
        CollectorCls=Collector,
        batch_T=20,  # a longer horizon than feedforward A2C's 5: the sequences the LSTM trains on
        batch_B=16,
        max_decorrelation_steps=400,
    )
    algo = A2C()
    agent = AtariLstmAgent()
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
    config = dict(game=game, sample_mode=sample_mode, mid_batch_reset=mid_batch_reset)
    run_name = newest_run(run_ID) if resume else run_ID  # a later run of the same ID took run_<ID>-2, ...
    with logger_context(LOG_DIR, run_name, f"a2c_{game}", config, snapshot_mode="last", resume=resume):
        return runner.train()


def str2bool(text: str) -> bool:
    """``True``/``False`` (also 1/0, yes/no) as a bool; rlpyt's ``type=bool`` read any text as True."""
    value = text.strip().lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected True or False, got {text!r}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", help="Atari game", default="pong")
    parser.add_argument("--run_ID", help="run identifier (logging)", type=int, default=0)
    parser.add_argument("--cuda_idx", help="gpu to use", type=int, default=None)
    parser.add_argument(
        "--mid_batch_reset",
        help="reset done envs mid-batch (refused for recurrent agents)",
        type=str2bool,
        default=False,
    )
    parser.add_argument("--n_parallel", help="number of sampler workers", type=int, default=2)
    parser.add_argument("--sample_mode", help="which sampler", choices=sorted(SAMPLERS), default="gpu")
    parser.add_argument("--n_steps", help="env steps to train", type=int, default=int(50e6))
    parser.add_argument("--log_interval_steps", type=int, default=int(1e5))
    parser.add_argument("--resume", action="store_true", help="continue run_<run_ID> from its newest checkpoint")
    args = parser.parse_args()
    build_and_train(
        game=args.game,
        run_ID=args.run_ID,
        cuda_idx=args.cuda_idx,
        mid_batch_reset=args.mid_batch_reset,
        n_parallel=args.n_parallel,
        sample_mode=args.sample_mode,
        n_steps=args.n_steps,
        log_interval_steps=args.log_interval_steps,
        resume=args.resume,
    )
