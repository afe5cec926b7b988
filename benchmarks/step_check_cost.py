"""What the per-step value checks of the collectors cost, beside the env step they guard, in one run.

The collectors write each observation with ``store_observation`` (dtype and shape guard) and call
``check_finite_batch`` once per time step (NaN/inf in float observations and in rewards); see
:mod:`rlrun.samplers.step_checks`. The target is at most 3% of AtariEnv's step time. Two envs:
Pong through ``AtariEnv`` (uint8 frames: the NaN check skips them) and CartPole-v1 through
``GymEnvWrapper`` (float32 observations: the NaN check runs every step), each with ``--batch-B`` envs.

- **micro**: CPU time per env step of what the checks add, on real observations of those envs: a
  loop over B envs writing with ``store_observation`` plus one ``check_finite_batch``, minus the same
  loop with the plain ``dest[b] = o`` it replaced; over the CPU time of one env step (B envs stepped
  with random actions). This is the number the target is about.
- **sampler**: one ``SerialSampler`` (``ResetCollector``; ``AtariFfAgent`` or ``CategoricalPgAgent``
  with random weights) collecting batch after batch, with the checks and with them patched out (a
  plain write and no check) in turn; what the checks add is the difference in CPU time per env step,
  shown over the env's step time and over the sampler's own time per env step. In the sampler's loop
  the interpreter's caches are colder than in the tight micro loop, so this is the larger figure.

Every figure is a median over ``--repeats`` rounds of CPU time of this process (torch on 1 thread),
so other load on the machine does not enter it.

    python benchmarks/step_check_cost.py
    python benchmarks/step_check_cost.py --only pong --seconds 2 --repeats 7
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

import rlrun.samplers.collectors as collectors
from rlrun.agents.pg.atari import AtariFfAgent
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.envs.atari.atari_env import AtariEnv, AtariTrajInfo
from rlrun.envs.gym import make
from rlrun.envs.traj_info import TrajInfo
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.samplers.step_checks import check_finite_batch, has_floating_fields, store_observation
from rlrun.utils.buffer import buffer_from_example

CPU_CLOCK = time.process_time
TARGET = 0.03  # of AtariEnv's step time


def env_setup(name: str) -> tuple[Callable[[], Any], dict, type, Callable[[], Any]]:
    """``(EnvCls, env_kwargs, TrajInfoCls, new_agent)`` for ``pong`` or ``cartpole``."""
    if name == "pong":
        return AtariEnv, dict(game="pong"), AtariTrajInfo, AtariFfAgent
    return make, dict(id="CartPole-v1"), TrajInfo, CategoricalPgAgent


# -------------------------------------------------------------------------------------------- micro


class MicroCost:
    """The collector's per-time-step work on B real observations, with and without the checks."""

    def __init__(self, name: str, batch_B: int) -> None:
        EnvCls, env_kwargs, _, _ = env_setup(name)
        self.envs = [EnvCls(**env_kwargs) for _ in range(batch_B)]
        self.rng = np.random.default_rng(0)
        for seed, env in enumerate(self.envs):
            env.seed(seed)
            env.reset()
        self.observations = [env.step(env.action_space.sample()).observation for env in self.envs]
        self.dest = buffer_from_example(self.observations[0], batch_B)
        self.reward = np.zeros(batch_B, dtype=np.float32)
        self.finite_obs = self.dest if has_floating_fields(self.dest) else None  # what collect_batch decides
        self.env_ranks = list(range(batch_B))

    def env_step_seconds(self, seconds: float) -> float:
        """CPU seconds per env step of stepping the B envs with random actions."""
        steps, start = 0, CPU_CLOCK()
        while CPU_CLOCK() - start < seconds:
            for env in self.envs:
                o, _r, done, _info = env.step(env.action_space.sample())
                if done:
                    env.reset()
            steps += len(self.envs)
        return (CPU_CLOCK() - start) / steps

    def plain_seconds(self, n: int) -> float:
        """CPU seconds per env step of the writes the checks replaced."""
        dest, observations = self.dest, self.observations
        start = CPU_CLOCK()
        for _ in range(n):
            for b, o in enumerate(observations):
                dest[b] = o
        return (CPU_CLOCK() - start) / (n * len(observations))

    def checked_seconds(self, n: int) -> float:
        """CPU seconds per env step of the checked writes and the per-time-step finiteness check."""
        dest, observations, envs, env_ranks = self.dest, self.observations, self.envs, self.env_ranks
        start = CPU_CLOCK()
        for t in range(n):
            where = f"step() at itr 0, t {t}"
            for b, o in enumerate(observations):
                store_observation(dest, b, o, env=envs[b], env_rank=env_ranks[b], where=where)
            check_finite_batch(self.finite_obs, self.reward, envs=envs, env_ranks=env_ranks, where=where)
        return (CPU_CLOCK() - start) / (n * len(observations))

    def close(self) -> None:
        for env in self.envs:
            env.close()


def calls_for(seconds: float, run: Callable[[int], float], batch_B: int) -> int:
    """How many time steps ``run`` (which returns CPU seconds per env step) takes in about ``seconds``."""
    per_time_step = run(200) * batch_B
    return max(200, int(seconds / max(per_time_step, 1e-9)))


# --------------------------------------------------------------------------------------- end to end


def _plain_store(dest: Any, b: int, value: Any, *, env: Any, env_rank: int, where: str) -> None:
    dest[b] = value


def _no_check(*args: Any, **kwargs: Any) -> None:
    return None


@contextlib.contextmanager
def checks_patched_out() -> Iterator[None]:
    """The collectors' checks replaced by what they guard: a plain write, and nothing."""
    saved = collectors.store_observation, collectors.check_finite_batch
    collectors.store_observation, collectors.check_finite_batch = _plain_store, _no_check
    try:
        yield
    finally:
        collectors.store_observation, collectors.check_finite_batch = saved


def new_sampler(name: str, batch_B: int, batch_T: int) -> tuple[SerialSampler, Any]:
    EnvCls, env_kwargs, TrajInfoCls, new_agent = env_setup(name)
    sampler = SerialSampler(
        EnvCls=EnvCls,
        env_kwargs=env_kwargs,
        TrajInfoCls=TrajInfoCls,
        batch_T=batch_T,
        batch_B=batch_B,
        max_decorrelation_steps=0,
    )
    torch.manual_seed(0)
    agent = new_agent()
    sampler.initialize(agent, seed=0)
    return sampler, agent


class ToggledSampler:
    """One sampler collecting batches with the checks and without them in turn, batch by batch, so
    both see the same envs, agent and machine state and drifts of the machine's speed cancel."""

    def __init__(self, name: str, batch_B: int, batch_T: int) -> None:
        self.sampler, self.agent = new_sampler(name, batch_B, batch_T)
        self.itr = 0

    def _batch(self) -> float:
        self.agent.sample_mode(self.itr)
        start = CPU_CLOCK()
        self.sampler.obtain_samples(self.itr)
        self.itr += 1
        return CPU_CLOCK() - start

    def __call__(self, seconds: float) -> tuple[float, float]:
        """CPU seconds per env step ``(with checks, without)`` over about ``seconds`` in all: the medians
        over pairs of consecutive batches, so that a batch slowed by other load does not count."""
        pairs = []
        n, start = 0, CPU_CLOCK()
        while CPU_CLOCK() - start < seconds or n < 2:
            times = {}
            for checked in (n % 2 == 0, n % 2 == 1):  # which goes first alternates too
                if checked:
                    times[True] = self._batch()
                else:
                    with checks_patched_out():
                        times[False] = self._batch()
            pairs.append((times[True], times[False]))
            n += 1
        size = self.sampler.batch_spec.size
        added = statistics.median(w - wo for w, wo in pairs) / size
        without = statistics.median(wo for _, wo in pairs) / size
        return without + added, without

    def close(self) -> None:
        self.sampler.shutdown()


# ------------------------------------------------------------------------------------------- report


def measure(name: str, args: argparse.Namespace) -> dict[str, float]:
    micro = MicroCost(name, args.batch_B)
    toggled = ToggledSampler(name, args.batch_B, args.batch_T)
    try:
        n_plain = calls_for(args.seconds / 4, micro.plain_seconds, args.batch_B)
        n_checked = calls_for(args.seconds / 4, micro.checked_seconds, args.batch_B)
        toggled(args.warmup)
        rounds = []
        for i in range(args.repeats):
            env_s = micro.env_step_seconds(args.seconds / 2)
            plain_s, checked_s = micro.plain_seconds(n_plain), micro.checked_seconds(n_checked)
            with_s, without_s = toggled(args.seconds * 2)
            rounds.append((env_s, checked_s - plain_s, with_s, without_s))
            print(
                f"  {name} round {i + 1}: env step {env_s * 1e6:.1f} us; micro: checks add "
                f"{(checked_s - plain_s) * 1e6:.2f} us per env step (write {plain_s * 1e6:.2f} us -> "
                f"{checked_s * 1e6:.2f} us); sampler: {with_s * 1e6:.1f} us per env step with checks, "
                f"{without_s * 1e6:.1f} us without",
                flush=True,
            )
    finally:
        toggled.close()
        micro.close()

    def summary(values: list[float]) -> tuple[float, float, float]:
        return statistics.median(values), min(values), max(values)

    return dict(
        env_us=statistics.median(r[0] for r in rounds) * 1e6,
        micro_us=statistics.median(r[1] for r in rounds) * 1e6,
        micro=summary([added / env for env, added, _, _ in rounds]),
        e2e_us=statistics.median(w - wo for _, _, w, wo in rounds) * 1e6,
        e2e_env=summary([(w - wo) / env for env, _, w, wo in rounds]),
        e2e_sampler=summary([w / wo - 1 for _, _, w, wo in rounds]),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch-B", dest="batch_B", type=int, default=8)
    parser.add_argument("--batch-T", dest="batch_T", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds of each measurement per round")
    parser.add_argument("--repeats", type=int, default=5, help="rounds")
    parser.add_argument("--warmup", type=float, default=0.5, help="CPU seconds each sampler runs before the rounds")
    parser.add_argument("--only", default="pong,cartpole", help="comma-separated subset of pong,cartpole")
    parser.add_argument("--check", action="store_true", help="exit 1 when Pong's micro cost is above 3%%")
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n]
    unknown = sorted(set(names) - {"pong", "cartpole"})
    if unknown:
        parser.error(f"unknown --only env(s) {unknown}; choose from pong, cartpole")

    torch.set_num_threads(1)
    print(
        f"batch_B={args.batch_B}, batch_T={args.batch_T}, torch threads 1, {args.repeats} rounds; {os.cpu_count()} CPUs, "
        f"load average {'/'.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    results = {name: measure(name, args) for name in names}

    def cell(stat: tuple[float, float, float]) -> str:
        median, lo, hi = stat
        return f"{median:+.2%} ({lo:+.2%}..{hi:+.2%})"

    print("\nWhat the checks add per env step (medians over rounds; ranges in brackets):")
    print(
        f"{'env':<9} {'env step':>9} {'micro':>8} {'/ env step':>25} {'sampler':>8} {'/ env step':>25} {'/ sampler':>25}"
    )
    for name, r in results.items():
        print(
            f"{name:<9} {r['env_us']:>7.1f}us {r['micro_us']:>6.2f}us {cell(r['micro']):>25} {r['e2e_us']:>6.2f}us "
            f"{cell(r['e2e_env']):>25} {cell(r['e2e_sampler']):>25}"
        )
    print(
        "(micro: the checked writes and check minus the plain writes, in a tight loop; sampler: SerialSampler CPU time\n"
        " per env step with the checks minus without, batch by batch in turn, over the env's step time and over the\n"
        " sampler's own time per env step, agent included)"
    )
    if "pong" in results:
        cost = max(results["pong"]["micro"][0], results["pong"]["e2e_env"][0])
        verdict = "ok" if cost <= TARGET else "MISSED"
        print(
            f"\nPong: the checks cost {cost:.2%} of AtariEnv's step time (the larger median), target <= {TARGET:.0%}: {verdict}"
        )
        if args.check and verdict != "ok":
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
