"""What rlrun's collectors and buffers cost per env step: ``SerialSampler`` against a bare loop.

Both step ``--batch-B`` CartPole-v1 envs with the same policy network (``CategoricalPgAgent``'s MLP):

- ``rlrun``: ``SerialSampler`` with ``ResetCollector`` filling ``[T, B]`` batches, as a runner calls it
  (``obtain_samples``), with every per-step check it makes in training;
- ``bare``: a Gymnasium ``SyncVectorEnv`` of the same envs, ``model(obs)`` under ``no_grad`` and
  ``torch.multinomial`` on the probabilities, writing nothing: the least any framework can do.

Each method runs ``--seconds`` per round, in turn, for ``--repeats`` rounds in one process with one torch
thread; the ratio is that of the two methods' steps per second over all their rounds. Short rounds,
many of them, keep the ratio steady on a noisy machine: on the 2-core VM, whose speed drifts by a
third over seconds, 40 rounds of 0.25 s gave 0.81-0.82 in three runs where 5 rounds of 3 s gave
0.73-0.84 (the same code). ``--profile`` prints where the sampler's time goes (cProfile, top functions
by own time) and the function calls per time step of each method: a count that does not drift, though
not a cost (a ``list.append`` counts as one call, as does a Python function's).

    python benchmarks/framework_overhead.py
    python benchmarks/framework_overhead.py --profile
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np
import torch

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.envs.gym import make
from rlrun.samplers.serial.sampler import SerialSampler

TARGET = 0.85  # the target: within 15% of the bare loop


def rlrun_stepper(batch_T: int, batch_B: int, seed: int) -> tuple[Callable[[], int], CategoricalPgAgent]:
    sampler = SerialSampler(EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=batch_T, batch_B=batch_B)
    agent = CategoricalPgAgent()
    sampler.initialize(agent, seed=seed)
    agent.sample_mode(0)
    itr = [0]

    def advance() -> int:
        sampler.obtain_samples(itr[0])
        itr[0] += 1
        return batch_T * batch_B

    return advance, agent


def bare_stepper(model: torch.nn.Module, batch_T: int, batch_B: int, seed: int) -> Callable[[], int]:
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1") for _ in range(batch_B)])
    obs, _ = envs.reset(seed=seed)
    n_actions = int(envs.single_action_space.n)
    prev_action = torch.zeros(batch_B, n_actions)
    prev_reward = torch.zeros(batch_B)
    state = {"obs": obs}

    @torch.no_grad()
    def advance() -> int:
        for _ in range(batch_T):
            pi, _value = model(torch.from_numpy(state["obs"]), prev_action, prev_reward)
            action = torch.multinomial(pi, 1).squeeze(-1).numpy()
            state["obs"], _r, _term, _trunc, _info = envs.step(action)
        return batch_T * batch_B

    return advance


def run(advance: Callable[[], int], seconds: float) -> tuple[int, float]:
    """``(steps, elapsed seconds)`` of calling ``advance`` for at least ``seconds``."""
    steps, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        steps += advance()
    return steps, elapsed


def rate(advance: Callable[[], int], seconds: float) -> float:
    steps, elapsed = run(advance, seconds)
    return steps / elapsed


def calls_per_time_step(advance: Callable[[], int], batch_T: int, batches: int = 20) -> float:
    """Function calls (Python and builtin, as cProfile counts them) per time step of ``batches`` batches:
    a measure of per-step work that, unlike time, does not drift with the machine."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(batches):
        advance()
    profiler.disable()
    return pstats.Stats(profiler).total_calls / (batches * batch_T)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch-B", type=int, default=8)
    parser.add_argument("--batch-T", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=0.25, help="per method and round")
    parser.add_argument("--repeats", type=int, default=40, help="rounds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="store_true", help="profile the sampler and print the top functions")
    parser.add_argument("--check", action="store_true", help=f"exit 1 when rlrun/bare < {TARGET}")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)

    rlrun_advance, agent = rlrun_stepper(args.batch_T, args.batch_B, args.seed)
    bare_advance = bare_stepper(agent.model, args.batch_T, args.batch_B, args.seed)
    for advance in (rlrun_advance, bare_advance):  # warm up
        rate(advance, 0.5)

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        rate(rlrun_advance, args.seconds)
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(25)
        rlrun_calls, bare_calls = (
            calls_per_time_step(advance, args.batch_T) for advance in (rlrun_advance, bare_advance)
        )
        print(f"Python calls per time step of the batch (cProfile): rlrun {rlrun_calls:.0f}, bare {bare_calls:.0f}")

    totals = {"rlrun": [0, 0.0], "bare": [0, 0.0]}
    rates: dict[str, list[float]] = {"rlrun": [], "bare": []}
    for _ in range(args.repeats):
        for name, advance in (("rlrun", rlrun_advance), ("bare", bare_advance)):
            steps, elapsed = run(advance, args.seconds)
            totals[name][0] += steps
            totals[name][1] += elapsed
            rates[name].append(steps / elapsed)
    overall = {name: steps / elapsed for name, (steps, elapsed) in totals.items()}
    ratio = overall["rlrun"] / overall["bare"]
    round_ratios = [r / b for r, b in zip(rates["rlrun"], rates["bare"])]
    quartiles = statistics.quantiles(round_ratios, n=4) if len(round_ratios) > 1 else round_ratios * 3
    print(
        f"CartPole-v1, B={args.batch_B}, T={args.batch_T}, {args.repeats} rounds of {args.seconds:g} s each, "
        "1 torch thread"
    )
    for name, values in rates.items():
        print(f"  {name:6s} {overall[name]:9,.0f} steps/s  (rounds {min(values):,.0f}-{max(values):,.0f})")
    print(
        f"  rlrun / bare: {ratio:.2f}  (target >= {TARGET}; per-round ratios' quartiles "
        f"{quartiles[0]:.2f}, {quartiles[1]:.2f}, {quartiles[2]:.2f})"
    )
    return 1 if args.check and ratio < TARGET else 0


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    sys.exit(main())
