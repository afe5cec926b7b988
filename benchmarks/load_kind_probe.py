"""How sampler="auto" tells load in its own session from another session's, and how far its probe moves.

``Costs.load_per_process`` compares what one busy process of ours got (``capacity_one``) with the fair
share ``cores / (1 + L)``, ``L`` the busy others that the probe of ``cores`` processes implies. Beside
load in our scheduler group the ratio is about 1; beside load in other sessions (Linux's autogroups) one
process of ours gets its group's share, well above it. This prints that ratio, as auto computes it (the
median of 3 rounds of probes), ``--repeats`` times beside 2 and 3 busy loops started in this session and in
sessions of their own, with CartPole and with a ``BusyEnv`` of 0.5 ms a step.

    python benchmarks/load_kind_probe.py --out benchmarks/results/load_kind.txt   # about 2 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import sys
import time

from contention import Neighbours, load_line

from rlrun.envs.gym import make
from rlrun.samplers.auto.busy_env import BusyEnv
from rlrun.samplers.auto.cost_model import AgentCost, Costs
from rlrun.samplers.auto.measure import median_capacities, time_capacity, usable_cores


def ratio(capacity_one: float, capacity_all: float, cores: int) -> tuple[float, bool]:
    """``capacity_one`` over the fair share, and whether auto takes the load as shared per process."""
    free = AgentCost.linear(0.0, 0.0)
    costs = Costs(
        env_step_s=0.0,
        env_step_spread=0.0,
        collector_s=0.0,
        agent_cpu=free,
        agent_device=free,
        device_is_cpu=True,
        round_trip_s=0.0,
        round_trip_per_worker_s=0.0,
        cores=cores,
        capacity_one=capacity_one,
        capacity_all=min(float(cores), capacity_all),
    )
    return capacity_one / costs.fair_share, costs.load_per_process


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=0.2, help="each probe's wall seconds (auto's)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    cores = usable_cores()
    lines = [
        f"load_kind_probe: {cores} usable CPUs; {args.repeats} readings each; {load_line()} at the start",
        "ratio = capacity_one / fair share (* = auto takes the load as its own session's)",
    ]
    print(lines[0], flush=True)
    for name, env in (("cartpole", make(id="CartPole-v1")), ("busy0.5ms", BusyEnv(step_seconds=0.0005))):
        env.seed(0)
        for own, n in ((False, 2), (False, 3), (True, 2), (True, 3)):
            with Neighbours(n, own_sessions=own):
                time.sleep(0.5)
                readings = []
                for _ in range(args.repeats):
                    rounds = [
                        (time_capacity(env, 1, args.seconds), time_capacity(env, cores, args.seconds)) for _ in range(3)
                    ]
                    value, per_process = ratio(*median_capacities(rounds), cores)
                    readings.append(f"{value:.2f}{'*' if per_process else ''}")
            where = "in sessions of their own" if own else "in this session"
            lines.append(f"{name:<10} {n} busy loops {where:<24} {' '.join(readings)}")
            print(lines[-1], flush=True)
        env.close()
    lines.append(f"{load_line()} at the end")
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
