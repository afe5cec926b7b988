"""The cost model's prediction for costs given by hand: another machine's, measured there.

The defaults are the GPU machine's (one H200, 16 cores; docs/performance.md): Pong's env step at
0.29 ms of CPU (env-only 51k steps/s on 15 cores), one action-server call of the Atari CNN at 0.55 ms
flat up to 64 observations (0.68 ms at 256), and the same CNN on one CPU core at 1.30 ms for 4
observations, 7.32 ms for 60 and 42.6 ms for 256. The round trip and the served step's signals were
not measured there; the defaults are assumptions (a quiet Linux machine's pipes), printed with the
table, and ``rlrun tune-sampler`` run there prints the measured ones.

    python -m rlrun.samplers.auto.project                          # Pong, B = 4 envs per worker, T=5
    python -m rlrun.samplers.auto.project --batch-B 60 --workers 15
    python -m rlrun.samplers.auto.project --capacity 12             # 15 busy processes get 12 cores
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from rlrun.samplers.auto.cost_model import KINDS, AgentCost, Costs, Kind, Layout, predict

__all__ = ["GPU_MACHINE_CPU_AGENT", "GPU_MACHINE_CALL", "ProjectedRow", "gpu_machine_costs", "project", "project_served", "main"]  # fmt: skip

GPU_MACHINE_CPU_AGENT = AgentCost(((4, 1.30e-3), (8, 1.37e-3), (60, 7.32e-3), (256, 42.6e-3)))
GPU_MACHINE_CALL = AgentCost(((8, 0.55e-3), (64, 0.55e-3), (256, 0.681e-3)))


@dataclass(frozen=True)
class ProjectedRow:
    layout: Layout
    batch_B: int
    steps_per_s: float
    bound: str
    sync_s: float  # a served step's signals (served layouts), else the batch's round trip


def gpu_machine_costs(
    env_step_s: float = 0.29e-3,
    call_s: float | None = None,
    cores: int = 16,
    round_trip_s: float = 50e-6,
    per_worker_s: float = 5e-6,
    served_s: float = 100e-6,
    capacity: float | None = None,
) -> Costs:
    """Costs of Pong on the GPU machine; ``call_s`` replaces the measured call curve by a flat cost, and
    ``capacity`` is the cores ``cores`` busy processes get together (default: all of them)."""
    device = GPU_MACHINE_CALL if call_s is None else AgentCost(((1, call_s), (64, call_s), (256, call_s * 1.24)))
    return Costs(
        env_step_s=env_step_s,
        env_step_spread=0.1,
        collector_s=0.0,  # the env-only rate it comes from was timed through rlrun's AtariEnv alone
        agent_cpu=GPU_MACHINE_CPU_AGENT,
        agent_device=device,
        device_is_cpu=False,
        round_trip_s=round_trip_s,
        round_trip_per_worker_s=per_worker_s,
        cores=cores,
        served_step_s=served_s,
        capacity_all=capacity,
    )


def project(
    costs: Costs,
    workers: Sequence[int],
    batch_T: int = 5,
    batch_B: int | None = None,
    envs_per_worker: int = 4,
    kinds: Sequence[Kind] = ("gpu", "cpu", "alternating"),
) -> list[ProjectedRow]:
    """Each kind at each worker count; ``batch_B`` fixed, or ``envs_per_worker`` x workers."""
    rows = []
    for w in workers:
        B = batch_B if batch_B is not None else envs_per_worker * w
        for kind in kinds:
            if kind == "alternating" and (B % 2 or w > B // 2):
                continue
            layout = Layout(kind, w)
            p = predict(layout, costs, B, batch_T)
            sync = costs.served_step(w) if kind in ("gpu", "alternating") else costs.round_trip(w)
            rows.append(ProjectedRow(layout, B, p.steps_per_s, p.bound, sync))
    return rows


def project_served(
    env_step_s: float,
    call_s: float,
    batch_B: int,
    workers: Sequence[int],
    cores: int = 16,
    batch_T: int = 5,
) -> list[ProjectedRow]:
    """GpuSampler's projection for a flat ``call_s`` and ``batch_B`` envs split over each worker count."""
    costs = gpu_machine_costs(env_step_s, call_s, cores)
    return project(costs, workers, batch_T, batch_B, kinds=("gpu",))


def format_rows(rows: Sequence[ProjectedRow], costs: Costs) -> str:
    lines = [
        f"projection: env step {costs.env_step_s * 1e3:.3f} ms; served call "
        + ", ".join(f"{s * 1e3:.3f} ms@{b}" for b, s in costs.agent_device.points)
        + f"; round trip {costs.round_trip_s * 1e6:.0f} us +{costs.round_trip_per_worker_s * 1e6:.0f} us/worker; "
        f"served step +{costs.served_step_s * 1e6:.0f} us; {costs.cores} cores, "
        f"{costs.cores if costs.capacity_all is None else costs.capacity_all:g} usable together",
        f"{'workers':>7} {'batch_B':>7} {'layout':<32} {'predicted steps/s':>17}  limited by",
    ]
    for row in rows:
        lines.append(
            f"{row.layout.workers:>7} {row.batch_B:>7} {row.layout.label:<32} {row.steps_per_s:17,.0f}  {row.bound}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env-step-ms", type=float, default=0.29, help="CPU ms per env step (default: Pong there)")
    parser.add_argument("--call-ms", type=float, default=None, help="a flat served call (default: the measured curve)")
    parser.add_argument("--cores", type=int, default=16)
    parser.add_argument("--capacity", type=float, default=None, help="cores all busy processes get together")
    parser.add_argument("--round-trip-us", type=float, default=50.0, help="(assumed)")
    parser.add_argument("--per-worker-us", type=float, default=5.0, help="(assumed)")
    parser.add_argument("--served-us", type=float, default=100.0, help="(assumed)")
    parser.add_argument("--workers", default="1,2,4,8,15", help="comma-separated worker counts")
    parser.add_argument("--batch-B", type=int, default=None, help="fixed envs (default: --envs-per-worker x workers)")
    parser.add_argument("--envs-per-worker", type=int, default=4)
    parser.add_argument("--batch-T", type=int, default=5)
    parser.add_argument("--kinds", default="gpu,cpu,alternating")
    args = parser.parse_args(argv)
    costs = gpu_machine_costs(
        args.env_step_ms * 1e-3,
        None if args.call_ms is None else args.call_ms * 1e-3,
        args.cores,
        args.round_trip_us * 1e-6,
        args.per_worker_us * 1e-6,
        args.served_us * 1e-6,
        args.capacity,
    )
    names = args.kinds.split(",")
    unknown = [name for name in names if name not in KINDS]
    if unknown:
        parser.error(f"--kinds: {unknown} not among {', '.join(KINDS)}")
    kinds = [kind for kind in KINDS if kind in names]
    workers = [int(w) for w in args.workers.split(",")]
    print(format_rows(project(costs, workers, args.batch_T, args.batch_B, args.envs_per_worker, kinds), costs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
