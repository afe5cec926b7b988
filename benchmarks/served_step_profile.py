"""Where a served sampler's step goes: waiting for observations, the agent's call, and the handoffs.

Runs ``GpuSampler`` (or ``--alternating``) on Pong with ``--workers`` workers and ``--batch-B`` envs, the
agent on ``--device``, and times, in the master, every phase of ``ActionServing.serve_batch``:

- ``wait obs``: ``pool.gather_observations``, from asking to having every worker's observations (the
  workers' env steps that the master did not overlap, plus the signals' latency);
- ``agent``: ``agent.step`` on the step buffer's rows (inputs to the device, forward, sample, outputs
  back to the CPU; on CUDA it ends synchronised, as the outputs are host tensors);
- ``send``: ``pool.send_actions``, one message per worker;
- ``rest``: the master's own copies and bookkeeping, the round's time minus the three.

Printed: the mean per step of each, in ms, and the steps per second. It answers what a layout model must
charge per served step beyond env stepping, and which part a faster server would cut.

    python benchmarks/served_step_profile.py                       # CPU agent, 2 workers, B=8
    python benchmarks/served_step_profile.py --device cuda --workers 15 --batch-B 60
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable
from typing import TypeVar

import torch

from rlrun.agents.pg.atari import AtariFfAgent
from rlrun.envs.atari.atari_env import AtariEnv, AtariTrajInfo
from rlrun.samplers.parallel.gpu.alternating_sampler import AlternatingSampler
from rlrun.samplers.parallel.gpu.sampler import GpuSampler
from rlrun.utils.launching.affinity import default_affinity

R = TypeVar("R")
PHASES = ("wait obs", "agent", "send")


class PhaseClock:
    """Seconds spent in each wrapped call, summed while ``on``."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.on = False

    def wrap(self, phase: str, fn: Callable[..., R]) -> Callable[..., R]:
        @functools.wraps(fn)
        def timed(*args: object, **kwargs: object) -> R:
            if not self.on:
                return fn(*args, **kwargs)
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[phase] += time.perf_counter() - start

        return timed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-B", type=int, default=8)
    parser.add_argument("--batch-T", type=int, default=5)
    parser.add_argument("--device", default="cpu", help="the agent's device: cpu or cuda")
    parser.add_argument("--alternating", action="store_true", help="AlternatingSampler (two workers per core)")
    parser.add_argument("--batches", type=int, default=200, help="timed batches, after 20 of warm-up")
    parser.add_argument("--game", default="pong")
    args = parser.parse_args(argv)

    torch.set_num_threads(1)
    torch.manual_seed(0)
    kwargs = dict(
        EnvCls=AtariEnv,
        TrajInfoCls=AtariTrajInfo,
        env_kwargs=dict(game=args.game),
        batch_T=args.batch_T,
        batch_B=args.batch_B,
        max_decorrelation_steps=50,
    )
    SamplerCls = AlternatingSampler if args.alternating else GpuSampler
    sampler = SamplerCls(**kwargs)
    agent = AtariFfAgent()
    sampler.initialize(agent, affinity=default_affinity(args.workers, alternating=args.alternating), seed=0)
    try:
        if args.device != "cpu":
            agent.to_device(args.device)  # after the workers forked: none of them starts CUDA
        clock = PhaseClock()
        pool = sampler.pool
        assert pool is not None
        pool.gather_observations = clock.wrap("wait obs", pool.gather_observations)  # type: ignore[method-assign]
        pool.send_actions = clock.wrap("send", pool.send_actions)  # type: ignore[method-assign]
        agent.step = clock.wrap("agent", agent.step)  # type: ignore[method-assign]
        for itr in range(20):
            agent.sample_mode(itr)
            sampler.obtain_samples(itr)
        clock.on = True
        start = time.perf_counter()
        for itr in range(20, 20 + args.batches):
            agent.sample_mode(itr)
            sampler.obtain_samples(itr)
        wall = time.perf_counter() - start
    finally:
        sampler.shutdown()
    steps = args.batches * args.batch_T  # master steps (each serves batch_B envs)
    per_step = {phase: 1e3 * seconds / steps for phase, seconds in clock.seconds.items()}
    round_ms = 1e3 * wall / steps
    print(
        f"{SamplerCls.__name__}, pong, {args.workers} workers, batch_B={args.batch_B}, agent on {args.device}, "
        f"{args.batches} batches of {args.batch_T} steps"
    )
    print(f"steps/s: {args.batches * args.batch_T * args.batch_B / wall:,.0f}; per master step {round_ms:.3f} ms:")
    for phase, ms in per_step.items():
        print(f"  {phase:<9} {ms:7.3f} ms  ({ms / round_ms:4.0%})")
    rest = round_ms - sum(per_step.values())
    print(f"  {'rest':<9} {rest:7.3f} ms  ({rest / round_ms:4.0%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
