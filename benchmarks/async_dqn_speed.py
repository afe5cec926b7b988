"""Environment steps per second of asynchronous DQN (AsyncRl + AsyncCpuSampler) against synchronous DQN
(MinibatchRl + CpuSampler) on Atari Pong, at the same replay ratio, measured one after the other in one run.

    python benchmarks/async_dqn_speed.py                      # 3000 steps each, learning from 1000
    python benchmarks/async_dqn_speed.py --n_steps 20000 --min_steps_learn 5000

Both use rlpyt's async-CPU example settings (8 envs x 5 steps, replay ratio 8, batch 32; ``--batch_T`` and
``--replay_ratio`` change them), each runner's default affinity (sync: one sampler worker per CPU; async:
the optimiser keeps one CPU, the workers take the others; one torch thread for each optimiser) and the
same seed. Speed is counted over the learning phase only: from the first log row after
``min_steps_learn`` to the end, so start-up and the replay's warm-up do not count. It prints each run's
steps/s and replay ratio, and the ratio async / sync.

It also times the synchronous run's two phases per batch during learning: sampling ``s`` (every worker
busy, so ``s * workers`` core-seconds) and optimising ``o`` (one torch thread). Overlapping them cannot beat
``(s + o) / max(o, (s * workers + o) / cores)``: the optimiser alone takes ``o``, and the cores must
still do all the work. The script prints that bound beside the measured ratio. On 2 cores it is 1.5 at
best (when ``s = o / 2``); at replay ratio 8 a batch's optimisation dwarfs its sampling, and the bound is
close to 1.

    python benchmarks/async_dqn_speed.py --batch_T 16 --replay_ratio 0.25   # sampling and optimising balanced
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

from rlrun.agents.dqn.atari.atari_dqn_agent import AtariDqnAgent
from rlrun.algos.dqn.dqn import DQN
from rlrun.envs.atari.atari_env import AtariEnv
from rlrun.runners.async_rl import AsyncRl
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.async_.cpu_sampler import AsyncCpuSampler
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.utils.launching.affinity import affinity_for_sampler
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context
from rlrun.utils.plotting import read_progress


def timed(method: Callable[..., Any], totals: list[float], counts: Callable[[int], bool]) -> Callable[..., Any]:
    """``method`` that adds its wall time to ``totals`` for the calls whose first argument (itr) ``counts``."""

    def wrapper(itr: int, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return method(itr, *args, **kwargs)
        finally:
            if counts(itr):
                totals.append(time.perf_counter() - start)

    return wrapper


def run(
    kind: str, n_steps: int, min_steps_learn: int, replay_ratio: float, batch_T: int, folder: str
) -> tuple[float, float, dict[str, list[float]]]:
    """``(steps per second over the learning phase, replay ratio over it, phase times)`` of one run.

    The phase times (sync only) are the seconds each learning-phase batch spent sampling and optimising.
    """
    SamplerCls, RunnerCls = (AsyncCpuSampler, AsyncRl) if kind == "async" else (CpuSampler, MinibatchRl)
    sampler = SamplerCls(
        EnvCls=AtariEnv, env_kwargs=dict(game="pong"), batch_T=batch_T, batch_B=8, max_decorrelation_steps=0
    )
    algo = DQN(replay_ratio=replay_ratio, min_steps_learn=min_steps_learn, replay_size=20_000, batch_size=32)
    runner = RunnerCls(
        algo=algo, agent=AtariDqnAgent(), sampler=sampler, n_steps=n_steps, seed=0, log_interval_steps=min_steps_learn
    )
    phases: dict[str, list[float]] = {"sample": [], "optimize": []}
    if kind == "sync":
        learning = lambda itr: itr * batch_T * 8 >= min_steps_learn  # noqa: E731
        sampler.obtain_samples = timed(sampler.obtain_samples, phases["sample"], learning)  # type: ignore[method-assign]
        algo.optimize_agent = timed(algo.optimize_agent, phases["optimize"], learning)  # type: ignore[method-assign]
    with logger.quiet_console():
        with logger_context(folder, 0, kind, {}, override_prefix=True) as run_dir:
            runner.train()
    p = read_progress(run_dir)
    steps, times, updates = p["Diagnostics/CumSteps"], p["Diagnostics/CumTime (s)"], p["Diagnostics/CumUpdates"]
    first = next(i for i, s in enumerate(steps) if s >= min_steps_learn)
    speed = (steps[-1] - steps[first]) / (times[-1] - times[first])
    ratio = (updates[-1] - updates[first]) * algo.batch_size / (steps[-1] - steps[first])
    return speed, ratio, phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n_steps", type=int, default=3000)
    parser.add_argument("--min_steps_learn", type=int, default=1000)
    parser.add_argument("--replay_ratio", type=float, default=8)
    parser.add_argument("--batch_T", type=int, default=5, help="steps per env per batch (8 envs)")
    args = parser.parse_args()
    if args.n_steps < 2 * args.min_steps_learn:
        parser.error("n_steps must be at least twice min_steps_learn (the speed is measured after learning starts).")
    updates = args.replay_ratio * args.batch_T * 8 / 32  # per batch, in synchronous DQN
    if updates < 1 or updates != int(updates):
        parser.error(
            f"synchronous DQN makes a whole number of updates of 32 per batch of {args.batch_T * 8} steps (at least "
            f"one), so it cannot run at replay ratio {args.replay_ratio:g}, where it would make {updates:g}: choose "
            "--batch_T and --replay_ratio so that replay_ratio * batch_T * 8 / 32 is a whole number."
        )
    with tempfile.TemporaryDirectory() as folder:
        results = {
            kind: run(kind, args.n_steps, args.min_steps_learn, args.replay_ratio, args.batch_T, folder)
            for kind in ("sync", "async")
        }
    for kind, (speed, ratio, _) in results.items():
        print(f"{kind:5s} DQN, Pong, 8 envs x {args.batch_T} steps: {speed:8.1f} env steps/s, replay ratio {ratio:.2f}")
    phases = results["sync"][2]
    s = sum(phases["sample"]) / max(len(phases["sample"]), 1)
    o = sum(phases["optimize"]) / max(len(phases["optimize"]), 1)
    cores = len(os.sched_getaffinity(0))
    workers = min(len(affinity_for_sampler(None)["workers_cpus"]), 8)  # the default affinity, 8 envs
    bound = (s + o) / max(o, (s * min(workers, cores) + o) / cores)
    print(f"sync per batch: sampling {s * 1e3:.1f} ms on {workers} workers, optimising {o * 1e3:.1f} ms on one thread")
    print(
        f"async / sync steps per second: {results['async'][0] / results['sync'][0]:.2f}"
        f"  (bound from the sync phases on {cores} cores: {bound:.2f}; load {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    main()
