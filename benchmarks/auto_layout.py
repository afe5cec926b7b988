"""sampler="auto" against every layout it could have picked: measured and predicted steps/s, side by side.

For each workload, on a quiet machine and then beside ``--neighbours`` busy processes (made as in
``benchmarks/contention.py``): auto's probes measure the costs (what ``sampler="auto"`` does at
start-up) and predict every layout of the grid; then every layout of the grid is timed in turn, each
collecting batches as a runner would for ``--seconds`` of wall time after two warm-up batches, once per
round for ``--rounds`` rounds in turn (the median is reported).
Printed per workload and machine: each layout's measured and predicted steps/s and their ratio, auto's
choice, and its measured speed as a share of the best layout measured. Beside it, the same share for the
layout that was fastest in each round: what a choice made by timing every layout once would get, the
bound that the measurement's own noise puts on any choice.
Before the probes, the screen that auto runs first when told a run's length
(``rlrun.samplers.auto.screen``) times the workload's SerialSampler and estimates the probes' time: the
report gives that speed against the grid's serial, and the estimate against the probes' time.

Workloads (``--only`` picks some):
- ``cartpole``: CartPole-v1, the MLP ``CategoricalPgAgent``, ``batch_B=8``, ``batch_T=32`` (the PPO config);
- ``pong``: Pong through ``AtariEnv``, ``AtariFfAgent`` (the A3C CNN), ``batch_B=16``, ``batch_T=5`` (example_3);
- ``busy2ms``: a ``BusyEnv`` burning 2 ms of CPU a step, the MLP agent, ``batch_B=8``, ``batch_T=8``;
- ``halfcheetah``: HalfCheetah-v5 (when MuJoCo is installed), ``MujocoFfAgent``, ``batch_B=8``, ``batch_T=32``;
- ``cnn_cheap``: a free ``BusyEnv`` with 4x84x84 uint8 frames, ``AtariFfAgent``, ``batch_B=16``, ``batch_T=5``.

Every agent acts with one torch thread, as sampler workers do. Targets (``--check`` exits 1 when one is
missed): auto's layout reaches 0.95 of the best measured on every workload, quiet and loaded; every
prediction is within 20% of its measurement.

    python benchmarks/auto_layout.py --out benchmarks/results/auto_layout.txt     # about 9 minutes on 2 cores
    python benchmarks/auto_layout.py --quick --only cartpole,busy2ms                # a smoke run, seconds
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from contention import Neighbours, check_stop, load_line, note_stop_signal  # noqa: E402

from rlrun.samplers.auto import Constraints, Costs, Layout, ProbeSettings, call_sizes, candidates, choose  # noqa: E402
from rlrun.samplers.auto.apply import layout_affinity, sampler_class  # noqa: E402
from rlrun.samplers.auto.busy_env import BusyEnv  # noqa: E402
from rlrun.samplers.auto.cost_model import predict  # noqa: E402
from rlrun.samplers.auto.measure import measure_costs, usable_cores  # noqa: E402
from rlrun.samplers.auto.screen import screen_run  # noqa: E402

PREDICTION_TOLERANCE = 0.20
AUTO_SHARE_TARGET = 0.95


@dataclass(frozen=True)
class Workload:
    name: str
    EnvCls: Callable[..., Any]
    env_kwargs: dict[str, Any]
    new_agent: Callable[[], Any]
    batch_B: int
    batch_T: int
    TrajInfoCls: type | None = None


def workloads() -> dict[str, Workload]:
    from rlrun.agents.pg.atari import AtariFfAgent
    from rlrun.agents.pg.categorical import CategoricalPgAgent
    from rlrun.envs.atari.atari_env import AtariEnv, AtariTrajInfo
    from rlrun.envs.gym import make

    found = {
        "cartpole": Workload("cartpole", make, dict(id="CartPole-v1"), CategoricalPgAgent, 8, 32),
        "pong": Workload("pong", AtariEnv, dict(game="pong"), AtariFfAgent, 16, 5, AtariTrajInfo),
        "busy2ms": Workload("busy2ms", BusyEnv, dict(step_seconds=0.002), CategoricalPgAgent, 8, 8),
        "cnn_cheap": Workload(
            "cnn_cheap",
            BusyEnv,
            dict(observation_shape=(4, 84, 84), image=True, n_actions=6),
            AtariFfAgent,
            16,
            5,
        ),
    }
    try:
        import mujoco  # noqa: F401

        from rlrun.agents.pg.mujoco import MujocoFfAgent

        found["halfcheetah"] = Workload("halfcheetah", make, dict(id="HalfCheetah-v5"), MujocoFfAgent, 8, 32)
    except ImportError:
        pass
    return found


def time_layout(workload: Workload, layout: Layout, seconds: float) -> float:
    """Wall-clock steps/s of ``layout`` collecting batches (after two warm-up batches)."""
    kwargs: dict[str, Any] = dict(
        EnvCls=workload.EnvCls,
        env_kwargs=workload.env_kwargs,
        batch_T=workload.batch_T,
        batch_B=workload.batch_B,
        max_decorrelation_steps=0,
    )
    if workload.TrajInfoCls is not None:
        kwargs["TrajInfoCls"] = workload.TrajInfoCls
    torch.manual_seed(0)
    sampler = sampler_class(layout.kind)(**kwargs)
    agent = workload.new_agent()
    sampler.initialize(agent, affinity=layout_affinity(layout), seed=0)
    torch.set_num_threads(1)  # the runner would apply the affinity's master threads; the model assumes one
    try:
        for itr in range(2):
            agent.sample_mode(itr)
            sampler.obtain_samples(itr)
        itr, steps = 2, 0
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds or itr < 4:
            agent.sample_mode(itr)
            sampler.obtain_samples(itr)
            itr, steps = itr + 1, steps + workload.batch_B * workload.batch_T
        return steps / elapsed
    finally:
        sampler.shutdown()


@dataclass
class Row:
    layout: Layout
    predicted: float
    measured: float  # the median over rounds
    spread: float = 0.0  # (slowest round to fastest) / median: how far the measurement itself moved


def round_pick_shares(timings: dict[Layout, list[float]]) -> list[float]:
    """What a choice made by measuring gets, one share per round: the layout fastest in that round, its
    median over all rounds as a share of the best median. This is the ceiling for any choice that rests
    on one measurement of every layout (here ``--seconds`` each, far more than auto's probes): where a
    round's fastest is not the best, the measurement's own noise has already cost that much."""
    medians = {layout: statistics.median(times) for layout, times in timings.items()}
    best = max(medians.values())
    rounds = min(len(times) for times in timings.values())
    picks = (max(timings, key=lambda layout: timings[layout][r]) for r in range(rounds))
    return [medians[layout] / best for layout in picks]


@dataclass
class ScreenCheck:
    """The screen auto runs before its probes (``rlrun.samplers.auto.screen``): its timing of the run's
    SerialSampler and its estimate of the probes' time, beside what the grid and the probes took."""

    serial_steps_per_s: float
    seconds: float  # the screen's own wall time, its SerialSampler's start included
    probe_estimate_s: float
    probe_s: float


@dataclass
class Result:
    workload: str
    machine: str
    costs: Costs
    rows: list[Row]
    choice: Layout
    choice_text: str
    round_picks: list[float]  # round_pick_shares of the grid's timings
    screen: ScreenCheck | None = None

    @property
    def best(self) -> Row:
        return max(self.rows, key=lambda r: r.measured)

    @property
    def auto_share(self) -> float:
        chosen = next(r for r in self.rows if r.layout == self.choice)
        return chosen.measured / self.best.measured


def run_workload(workload: Workload, machine: str, args: argparse.Namespace) -> Result:
    cores = usable_cores()
    constraints = Constraints(workload.batch_B, workload.batch_T)
    settings = (
        ProbeSettings() if not args.quick else ProbeSettings(0.05, 0.02, 0.05, 0.05, 4, 0.05, cpu_sampler_seconds=0.05)
    )
    threads = torch.get_num_threads()
    sizes = call_sizes(workload.batch_B, cores)
    # What auto does first when told the run's length: time the run's SerialSampler and estimate the full probes'
    # time. With n_steps=0 the one-env bound never settles it, so the SerialSampler always runs; the report
    # compares its speed with the grid's serial and the estimate with the probes' time.
    screen_started = time.perf_counter()
    screen = screen_run(
        workload.EnvCls, workload.env_kwargs, workload.new_agent(), workload.batch_B, workload.batch_T, 0, cores,
        sizes, settings,
    )  # fmt: skip
    screen_s = time.perf_counter() - screen_started
    probes_started = time.perf_counter()
    costs = measure_costs(
        workload.EnvCls,
        workload.env_kwargs,
        workload.new_agent(),
        sizes,
        workload.batch_T,
        cores,
        None,
        settings,
    )
    probes_s = time.perf_counter() - probes_started  # auto's start-up cost, the choice's table not counted
    torch.set_num_threads(threads)
    choice = choose(costs, constraints)
    layouts, _ = candidates(costs, constraints)
    # Every layout once per round, in turn, and the median over rounds: a drift of the machine's speed
    # or a passing process then disturbs one round of every layout, not all rounds of one.
    timings: dict[Layout, list[float]] = {layout: [] for layout in layouts}
    for round_ in range(args.rounds):
        for layout in layouts:
            check_stop()
            measured = time_layout(workload, layout, args.seconds)
            timings[layout].append(measured)
            print(
                f"    {workload.name:<11} {machine:<18} round {round_ + 1} {layout.label:<32} {measured:9,.0f} steps/s",
                flush=True,
            )
    rows = [
        Row(
            layout,
            predict(layout, costs, workload.batch_B, workload.batch_T).steps_per_s,
            statistics.median(times),
            (max(times) - min(times)) / statistics.median(times),
        )
        for layout, times in timings.items()
    ]
    text = f"{choice.format()}\n  auto's probes took {probes_s:.2f} s, estimated beforehand at {screen.probe_s:.2f} s"
    serial_screen = ScreenCheck(1.0 / screen.step_s, screen_s, screen.probe_s, probes_s)
    return Result(workload.name, machine, costs, rows, choice.layout, text, round_pick_shares(timings), serial_screen)


def report(results: list[Result]) -> tuple[str, list[str]]:
    lines: list[str] = []
    misses: list[str] = []
    for result in results:
        lines.append(f"\n== {result.workload}, {result.machine}")
        lines.append(result.choice_text)
        lines.append(f"  {'layout':<32} {'measured':>9} {'predicted':>10} {'pred/meas':>9} {'rounds spread':>13}")
        for row in sorted(result.rows, key=lambda r: -r.measured):
            mark = "*" if row.layout == result.choice else " "
            ratio = row.predicted / row.measured
            lines.append(
                f"{mark} {row.layout.label:<32} {row.measured:9,.0f} {row.predicted:10,.0f} {ratio:9.2f}"
                f" {100 * row.spread:12.0f}%"
            )
            if abs(ratio - 1.0) > PREDICTION_TOLERANCE:
                misses.append(f"{result.workload} {result.machine} {row.layout.label}: predicted/measured {ratio:.2f}")
        serial = next((row for row in result.rows if row.layout.kind == "serial"), None)
        if result.screen is not None and serial is not None:
            lines.append(
                f"  the screen ({result.screen.seconds:.2f} s): serial at {result.screen.serial_steps_per_s:,.0f} steps/s,"
                f" {result.screen.serial_steps_per_s / serial.measured:.2f}x the grid's serial"
            )
        share = result.auto_share
        lines.append(f"  auto's choice / best measured ({result.best.layout.label}): {share:.2f}")
        picks = ", ".join(f"{p:.2f}" for p in result.round_picks)
        lines.append(f"  each round's fastest / best measured: {picks}")
        if share < AUTO_SHARE_TARGET:
            misses.append(f"{result.workload} {result.machine}: auto at {share:.2f} of the best")
    shares = [r.auto_share for r in results]
    errors = [abs(row.predicted / row.measured - 1.0) for r in results for row in r.rows]
    lines.append("\nSummary:")
    for r in results:
        lines.append(f"  {r.workload:<11} {r.machine:<18} auto {r.choice.label:<32} share of best {r.auto_share:.2f}")
    lines.append(f"auto's least share of the best: {min(shares):.2f} (target >= {AUTO_SHARE_TARGET})")
    lines.append(f"largest prediction error: {100 * max(errors):.0f}% (target <= {100 * PREDICTION_TOLERANCE:.0f}%)")
    lines.append(f"median prediction error: {100 * statistics.median(errors):.0f}%")
    screens = [r.screen for r in results if r.screen is not None]
    if screens:
        estimates = [sc.probe_estimate_s / sc.probe_s for sc in screens]
        seconds = [sc.seconds for sc in screens]
        lines.append(
            f"the screen: {min(seconds):.2f}-{max(seconds):.2f} s; its estimate / the probes' time:"
            f" {min(estimates):.2f}-{max(estimates):.2f} (median {statistics.median(estimates):.2f})"
        )
    # A prediction cannot be judged closer than the measurement repeats: the rounds' spread says how far that is.
    for machine in dict.fromkeys(r.machine for r in results):
        spreads = [row.spread for r in results if r.machine == machine for row in r.rows]
        lines.append(
            f"rounds spread, {machine}: median {100 * statistics.median(spreads):.0f}%, largest {100 * max(spreads):.0f}%"
        )
    # The same noise bounds the choice: a pick from one round's timings is what measuring would choose.
    for machine in dict.fromkeys(r.machine for r in results):
        picks = [p for r in results if r.machine == machine for p in r.round_picks]
        below = sum(p < AUTO_SHARE_TARGET for p in picks)
        lines.append(
            f"one round's fastest, {machine}: least share of the best {min(picks):.2f},"
            f" {below} of {len(picks)} below {AUTO_SHARE_TARGET}"
        )
    return "\n".join(lines), misses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=None, help="comma-separated workloads (default: all available)")
    parser.add_argument("--seconds", type=float, default=2.0, help="wall seconds each layout is timed per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; each layout's median over them is reported")
    parser.add_argument("--neighbours", type=int, default=2, help="busy processes beside the loaded runs")
    parser.add_argument("--no-loaded", action="store_true", help="only the quiet machine")
    parser.add_argument("--no-quiet", action="store_true", help="only beside the busy neighbours")
    parser.add_argument("--quick", action="store_true", help="smoke run: 0.3 s per layout, short probes")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--out", default=None, help="also write the report to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.rounds = 0.3, 1
    available = workloads()
    names = args.only.split(",") if args.only else list(available)
    unknown = [n for n in names if n not in available]
    if unknown:
        parser.error(f"unknown or unavailable workload(s) {unknown}; choose from {', '.join(available)}")
    machines = ([] if args.no_quiet else [("quiet", 0)]) + (
        [] if args.no_loaded else [(f"{args.neighbours} busy neighbours", args.neighbours)]
    )
    if not machines:
        parser.error("--no-quiet and --no-loaded leave nothing to measure")
    signal.signal(signal.SIGTERM, note_stop_signal)
    signal.signal(signal.SIGINT, note_stop_signal)
    header = (
        f"auto_layout: {', '.join(names)}; {args.rounds} rounds of {args.seconds:g} s per layout (medians); "
        f"{usable_cores()} usable CPUs; "
        f"torch {torch.__version__}; {load_line()} at the start"
    )
    print(header, flush=True)
    started = time.perf_counter()
    results: list[Result] = []
    for name in names:
        for machine, n in machines:
            with Neighbours(n):
                if n:
                    time.sleep(0.5)  # the neighbours running before the probes look at the load
                results.append(run_workload(available[name], machine, args))
    text, misses = report(results)
    text += f"\n\ntotal {time.perf_counter() - started:.0f} s; {load_line()} at the end"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(header + "\n" + text + "\n")
    if args.check and misses:
        print("FAIL: " + "; ".join(misses))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
