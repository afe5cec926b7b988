"""Where a CpuSampler batch's wall time goes: each worker's work, its wake-up, and the master's turn.

Runs example_3's configuration (Pong, ``batch_B=16``, ``batch_T=5``, AtariFfAgent, 2 workers) for
``--batches`` batches. Every worker writes, into shared memory, the moment it got its turn and the
moment it arrived back; the master notes when it opened each round and when it had every worker
back. All times are ``time.monotonic()``, which is one clock for all processes. Printed, as means over
the batches after ``--skip``:

- the period between rounds (and the steps per second it gives);
- each worker's wake-up delay after the master opened the round, and its work (turn to arrival);
- the master's delay after the last arrival, and its time from there to opening the next round;
- how far the two workers' work differs within a batch, and each worker's idle share.

It wraps the workers' ends of the protocol before they start, so it needs the fork start method (Linux).

    python benchmarks/sampler_round_trip.py
    python benchmarks/sampler_round_trip.py --pin --batch-T 20
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time

import numpy as np
import torch

from rlrun.agents.pg.atari import AtariFfAgent
from rlrun.envs.atari.atari_env import AtariEnv, AtariTrajInfo
from rlrun.samplers.parallel import protocol, worker
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.utils.launching.affinity import default_affinity, make_affinity


class RoundClock:
    """Shared ``[worker, batch, (turn, arrival)]`` timestamps, written by the workers' wrapped pipe ends."""

    def __init__(self, n_workers: int, n_batches: int) -> None:
        self.n_batches = n_batches
        self._raw = mp.RawArray("d", n_workers * n_batches * 2)
        self.rank: int | None = None  # set in each worker, before its first turn
        self.batch = -1

    @property
    def times(self) -> np.ndarray:
        return np.frombuffer(self._raw, dtype=np.float64).reshape(-1, self.n_batches, 2)

    def install(self) -> None:
        """Wrap ``WorkerEnd`` and ``initialize_worker`` in this process; forked workers inherit the wrappers."""
        clock, next_command, report, init = (
            self,
            protocol.WorkerEnd.next_command,
            protocol.WorkerEnd.report,
            worker.initialize_worker,
        )

        def timed_next_command(end, parent):
            command = next_command(end, parent)
            clock.batch += 1
            if 0 <= clock.batch < clock.n_batches:
                clock.times[clock.rank, clock.batch, 0] = time.monotonic()
            return command

        def timed_report(end, message):
            if 0 <= clock.batch < clock.n_batches:  # batch -1 is the ready report
                clock.times[clock.rank, clock.batch, 1] = time.monotonic()
            return report(end, message)

        def ranked_init(rank, *args, **kwargs):
            clock.rank = rank
            return init(rank, *args, **kwargs)

        protocol.WorkerEnd.next_command, protocol.WorkerEnd.report = timed_next_command, timed_report
        worker.initialize_worker = ranked_init


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="pong")
    parser.add_argument("--batch-B", dest="batch_B", type=int, default=16)
    parser.add_argument("--batch-T", dest="batch_T", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batches", type=int, default=400)
    parser.add_argument("--skip", type=int, default=50, help="first batches left out (warm-up)")
    parser.add_argument("--pin", action="store_true", help="pin the workers with make_affinity")
    args = parser.parse_args(argv)
    if args.skip >= args.batches:
        parser.error("--skip must be smaller than --batches")

    torch.set_num_threads(1)
    clock = RoundClock(args.workers, args.batches)
    clock.install()
    if args.pin:
        affinity = make_affinity(n_gpu=0, n_cpu_core=args.workers, cpu_per_run=args.workers)
    else:
        affinity = default_affinity(args.workers)
    sampler = CpuSampler(
        EnvCls=AtariEnv,
        TrajInfoCls=AtariTrajInfo,
        env_kwargs=dict(game=args.game),
        batch_T=args.batch_T,
        batch_B=args.batch_B,
        max_decorrelation_steps=0,
        start_method="fork",
    )
    agent = AtariFfAgent()
    sampler.initialize(agent, affinity=affinity, seed=0)
    opened, back = np.zeros(args.batches), np.zeros(args.batches)
    try:
        for itr in range(args.batches):
            agent.sample_mode(itr)
            opened[itr] = time.monotonic()
            sampler.obtain_samples(itr)
            back[itr] = time.monotonic()
    finally:
        sampler.shutdown()

    s = slice(args.skip, None)
    times, opened, back = clock.times[:, s], opened[s], back[s]
    period = float(np.diff(opened).mean())
    wake = times[:, :, 0] - opened
    work = times[:, :, 1] - times[:, :, 0]
    last_arrival = times[:, :, 1].max(axis=0)
    us, ms = 1e6, 1e3
    print(
        f"{args.game}, batch_B={args.batch_B}, batch_T={args.batch_T}, {args.workers} workers "
        f"({'pinned' if args.pin else 'not pinned'}), {len(opened)} batches"
    )
    print(f"period between rounds   {period * ms:8.2f} ms  ({args.batch_B * args.batch_T / period:,.0f} steps/s)")
    for rank in range(args.workers):
        print(
            f"worker {rank}: wakes {wake[rank].mean() * us:6.0f} us after the open, works {work[rank].mean() * ms:6.2f} ms, "
            f"idle {1 - work[rank].mean() / period:5.1%}"
        )
    print(f"master wakes            {(back - last_arrival).mean() * us:8.0f} us after the last arrival")
    print(f"master to next open     {(opened[1:] - back[:-1]).mean() * us:8.0f} us")
    print(f"work spread per batch   {(work.max(axis=0) - work.min(axis=0)).mean() * ms:8.2f} ms (slowest - fastest)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
