"""Runs that heal themselves: a flaky CartPole under each parallel sampler with ``worker_restarts``, beside
the same run with no faults.

Each run trains for ``--steps`` env steps on :class:`flaky_cartpole.FlakyCartPole`, whose every step fails
with probability ``1 / --every`` (``raise``: an exception in the worker; ``exit``: ``os._exit`` in the
worker, as a crash in native code) with ``worker_restarts=--worker-restarts``, and once with no fault
(``none``). Samplers: ``cpu`` (CpuSampler), ``gpu`` (GpuSampler, served on the CPU), ``alternating``
(AlternatingSampler, served on the CPU, two workers per core), all with A2C and CartPole's tuned A2C config
(batch 5 x 8); ``async_cpu`` (AsyncCpuSampler) with asynchronous DQN and CartPole's tuned DQN config
(batch 32 x 8). Every run logs to its own folder; the table gives, per run, the steps trained, the
restarts (the last ``WorkerRestarts`` of progress.csv, and the restart lines of debug.log), the child
processes left after the run (0 expected), the wall time and its ratio to the no-fault run of the same
sampler. A run that ends with an error prints it in the table; the script then exits 1.

    python benchmarks/worker_restarts.py
    python benchmarks/worker_restarts.py --samplers cpu --faults none,raise --steps 20000

Default ``--every 5000``: with ``--steps 50000`` about 10 faults, within the 20 restarts. At 1 in 2,000
steps a 50k-step run has about 25 faults (Poisson), which 20 restarts survive in under a fifth of the
runs; that needs ``--worker-restarts 40``.
"""

from __future__ import annotations

import argparse
import copy
import csv
import os
import sys
import tempfile
import time
from pathlib import Path

import psutil
import torch

from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.dqn.dqn import DQN
from rlrun.algos.pg.a2c import A2C
from rlrun.experiments.configs.cartpole import CONFIGS
from rlrun.runners.async_rl import AsyncRl
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.async_.cpu_sampler import AsyncCpuSampler
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.parallel.gpu.alternating_sampler import AlternatingSampler
from rlrun.samplers.parallel.gpu.sampler import GpuSampler
from rlrun.utils.launching.affinity import default_affinity
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context

sys.path.insert(0, str(Path(__file__).resolve().parent))
from flaky_cartpole import FAULTS, FlakyCartPole  # noqa: E402

SAMPLERS = ("cpu", "gpu", "alternating", "async_cpu")
RESTART_LINE = "Sampler worker restart "  # in the warning each restart logs (rlrun.samplers.parallel.restarts)


def build_runner(kind: str, env_kwargs: dict, steps: int, restarts: int, seed: int, workers: int, log_every: int):
    torch.manual_seed(seed)
    if kind == "async_cpu":
        config = copy.deepcopy(CONFIGS["dqn"])
        sampler = AsyncCpuSampler(
            EnvCls=FlakyCartPole, env_kwargs=env_kwargs, worker_restarts=restarts, **config["sampler"]
        )
        return AsyncRl(
            algo=DQN(**config["algo"]),
            agent=DqnAgent(**config["agent"]),
            sampler=sampler,
            n_steps=steps,
            seed=seed,
            log_interval_steps=log_every,
        )
    config = copy.deepcopy(CONFIGS["a2c"])
    SamplerCls = {"cpu": CpuSampler, "gpu": GpuSampler, "alternating": AlternatingSampler}[kind]
    sampler = SamplerCls(EnvCls=FlakyCartPole, env_kwargs=env_kwargs, worker_restarts=restarts, **config["sampler"])
    return MinibatchRl(
        algo=A2C(**config["algo"]),
        agent=CategoricalPgAgent(**config["agent"]),
        sampler=sampler,
        n_steps=steps,
        seed=seed,
        log_interval_steps=log_every,
        affinity=default_affinity(workers, alternating=kind == "alternating"),
    )


def run_one(kind: str, fault: str, args: argparse.Namespace, log_dir: Path) -> dict[str, object]:
    """One training run; its steps, restarts, restart lines in debug.log, wall time, and error if any."""
    env_kwargs = dict(every=args.every, fault=fault)
    runner = build_runner(kind, env_kwargs, args.steps, args.worker_restarts, args.seed, args.workers, args.log_every)
    run_id = f"{kind}_{fault}"
    error = ""
    start = time.perf_counter()
    with logger.quiet_console():
        try:
            with logger_context(str(log_dir), run_id, f"restarts_{run_id}", {}, override_prefix=True) as run_dir:
                runner.train()
        except Exception as e:  # reported in the table: a run past its budget ends like this
            error = f"{type(e).__name__}: {str(e).splitlines()[0][:100]}"
            run_dir = str(log_dir / f"run_{run_id}")
    wall = time.perf_counter() - start
    left = [p for p in psutil.Process().children(recursive=True) if not _multiprocessing_helper(p)]
    rows = list(csv.DictReader(open(os.path.join(run_dir, "progress.csv")))) if error == "" else []
    last = rows[-1] if rows else {}
    debug_log = Path(run_dir, "debug.log")
    lines = debug_log.read_text().count(RESTART_LINE) if debug_log.exists() else 0
    return dict(
        kind=kind,
        fault=fault,
        steps=int(float(last.get("Diagnostics/CumSteps", 0) or 0)),
        restarts=last.get("Diagnostics/WorkerRestarts", ""),
        log_lines=lines,
        wall=wall,
        error=error,
        left=len(left),
        run_dir=run_dir,
    )


def _multiprocessing_helper(process: psutil.Process) -> bool:
    """multiprocessing's resource tracker and fork server, which outlive samplers by design."""
    try:
        cmdline = " ".join(process.cmdline())
    except psutil.Error:
        return True  # gone meanwhile
    return "resource_tracker" in cmdline or "forkserver" in cmdline


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samplers", default=",".join(SAMPLERS), help=f"comma-separated, of {SAMPLERS}")
    parser.add_argument("--faults", default="none,raise,exit", help=f"comma-separated, of {FAULTS}")
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--every", type=int, default=5000, help="a step fails with probability 1/EVERY")
    parser.add_argument("--worker-restarts", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2, help="workers (cores, for alternating)")
    parser.add_argument("--log-every", type=int, default=10_000, help="env steps between log rows")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-dir", default=None, help="where the runs log (default: a temporary folder)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    kinds = [k for k in args.samplers.split(",") if k]
    faults = [f for f in args.faults.split(",") if f]
    for name, values, allowed in (("--samplers", kinds, SAMPLERS), ("--faults", faults, FAULTS)):
        if set(values) - set(allowed):
            parser.error(f"{name}: unknown {sorted(set(values) - set(allowed))}; choose from {allowed}")
    log_dir = Path(args.log_dir or tempfile.mkdtemp(prefix="worker_restarts_"))
    print(
        f"FlakyCartPole: a step fails with probability 1/{args.every}; {args.steps:,} steps per run; "
        f"worker_restarts={args.worker_restarts}; {args.workers} workers; seed {args.seed}; logs in {log_dir}",
        flush=True,
    )
    # One short run first, so the first timed run does not pay the imports and first-use costs.
    run_one(
        kinds[0], "none", argparse.Namespace(**{**vars(args), "steps": 2000, "log_every": 1000}), log_dir / "warmup"
    )
    header = (
        f"{'sampler':<12} {'fault':<6} {'steps':>7} {'restarts':>8} {'logged':>6} {'left':>4} {'wall s':>7} "
        f"{'/ none':>7}  error"
    )
    print(header, flush=True)
    failed = False
    for kind in kinds:
        base_wall = None
        for fault in faults:
            r = run_one(kind, fault, args, log_dir)
            if fault == "none":
                base_wall = float(r["wall"])
            ratio = f"{float(r['wall']) / base_wall:.2f}" if base_wall and not r["error"] else "-"
            print(
                f"{kind:<12} {fault:<6} {r['steps']:>7} {r['restarts']!s:>8} {r['log_lines']:>6} {r['left']:>4} "
                f"{float(r['wall']):>7.1f} {ratio:>7}  {r['error']}",
                flush=True,
            )
            failed |= bool(r["error"]) or bool(r["left"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
