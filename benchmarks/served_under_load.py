"""GpuSampler with one worker beside 0 to N busy processes: measured, and predicted two ways.

A served layout with one worker is two processes of ours taking turns: the master acts while the worker
waits, then the worker steps its envs while the master waits. Beside busy processes in our scheduler
group that pair is not one busy process, and ``sampler="auto"`` predicts it with
``Costs.turn_taking_share``. This benchmark shows what that share buys, workload by workload and load by
load: for each it runs auto's probes, then times ``GpuSampler`` with one worker, ``SerialSampler`` and
``CpuSampler`` with one worker per core (``--rounds`` rounds of ``--seconds`` each, medians), and prints the
pair's measured steps/s beside two predictions:

- ``as one busy``: the pair's CPU work at one busy process's share of a core (``Costs.share(1)``), the
  model before ``turn_taking_share``;
- ``auto``: the model as it is (``cost_model.predict``).

The workloads are ``benchmarks/auto_layout.py``'s; its neighbours are busy loops started in this command's
session (``benchmarks/contention.py``), so they share the CPU with ours per process.

    python benchmarks/served_under_load.py                                     # about 8 minutes on 2 cores
    python benchmarks/served_under_load.py --only pong --neighbours 0,4 --out pong.txt
    python benchmarks/served_under_load.py --quick --only busy2ms --neighbours 0,1   # a smoke run, seconds
"""

from __future__ import annotations

import argparse
import signal
import statistics
import sys
import time

import torch
from auto_layout import time_layout, workloads
from contention import Neighbours, check_stop, load_line, note_stop_signal

from rlrun.samplers.auto import ProbeSettings, call_sizes
from rlrun.samplers.auto.cost_model import Costs, Layout, predict
from rlrun.samplers.auto.measure import measure_costs, usable_cores

LAYOUTS = (Layout("gpu", 1), Layout("serial"), Layout("cpu", 2))


def as_one_busy_process(costs: Costs, batch_B: int, batch_T: int) -> float:
    """GpuSampler with one worker as the model predicted it before ``turn_taking_share``: the master's call
    and the worker's env steps each at one busy process's share of a core."""
    work = batch_B * (costs.env_step_s + costs.collector_s) + costs.agent_cpu(batch_B)
    step = work / costs.share(1) + costs.served_step(1)
    return batch_B * batch_T / (batch_T * step + costs.round_trip(1))


def run(name: str, neighbours: int, seconds: float, rounds: int, settings: ProbeSettings) -> str:
    workload = workloads()[name]
    B, T = workload.batch_B, workload.batch_T
    cores = usable_cores()
    with Neighbours(neighbours):
        if neighbours:
            time.sleep(0.5)  # the neighbours running before the probes look at the load
        costs = measure_costs(
            workload.EnvCls, workload.env_kwargs, workload.new_agent(), call_sizes(B, cores), T, cores, None, settings
        )
        torch.set_num_threads(1)
        layouts = tuple(layout for layout in LAYOUTS if layout.workers <= cores)
        timings: dict[Layout, list[float]] = {layout: [] for layout in layouts}
        for _ in range(rounds):
            for layout in layouts:
                check_stop()
                timings[layout].append(time_layout(workload, layout, seconds))
    measured = {layout: statistics.median(times) for layout, times in timings.items()}
    env = B * (costs.env_step_s + costs.collector_s)
    pair = costs.turn_taking_share(costs.agent_cpu(B), env)
    gpu1 = measured[LAYOUTS[0]]
    old = as_one_busy_process(costs, B, T)
    new = predict(LAYOUTS[0], costs, B, T).steps_per_s
    others = "  ".join(
        f"{layout.label} {measured[layout]:,.0f} (pred {predict(layout, costs, B, T).steps_per_s:,.0f})"
        for layout in layouts[1:]
    )
    return (
        f"{name:<11} {neighbours:>2} busy  share(1) {costs.share(1):.2f}  pair {pair:.2f}  "
        f"turns {costs.agent_cpu(B) * 1e3:.2f}/{env * 1e3:.2f} ms | gpu, 1 worker {gpu1:8,.0f}  "
        f"as one busy {old:8,.0f} ({old / gpu1:.2f})  auto {new:8,.0f} ({new / gpu1:.2f}) | {others}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="pong,halfcheetah,cartpole,busy2ms,cnn_cheap")
    parser.add_argument("--neighbours", default="0,2,4", help="comma-separated counts of busy neighbours")
    parser.add_argument("--seconds", type=float, default=1.5, help="wall seconds a layout is timed per round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", default=None, help="also write the report to this file")
    parser.add_argument("--quick", action="store_true", help="smoke run: 0.3 s per layout, short probes")
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.rounds = 0.3, 1
    settings = (
        ProbeSettings(0.05, 0.02, 0.05, 0.05, 4, 0.05, cpu_sampler_seconds=0.05) if args.quick else ProbeSettings()
    )
    signal.signal(signal.SIGTERM, note_stop_signal)
    available = workloads()
    names = [n for n in args.only.split(",") if n in available]
    counts = [int(n) for n in args.neighbours.split(",")]
    header = (
        f"served_under_load: {', '.join(names)}; neighbours {counts}; {args.rounds} rounds of {args.seconds:g} s "
        f"(medians); {usable_cores()} usable CPUs; torch {torch.__version__}; {load_line()} at the start\n"
        "(ratio) = prediction / measurement; turns = the master's call / the worker's env steps, CPU ms per step"
    )
    print(header, flush=True)
    started = time.perf_counter()
    lines = []
    for name in names:
        for n in counts:
            lines.append(run(name, n, args.seconds, args.rounds, settings))
            print(lines[-1], flush=True)
    footer = f"total {time.perf_counter() - started:.0f} s; {load_line()} at the end"
    print(footer)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join([header, *lines, footer]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
