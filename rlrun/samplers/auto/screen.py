"""Whether a run is long enough for auto's full probes to pay for themselves.

Timing every cost the model needs takes three to six seconds (more for envs that start slowly), and a
run that samples for less than that cannot win it back: on the 2-core VM a 20k-step PPO CartPole run
sampled for 0.7 s of its 3.7 s, and auto's 3.3 s of probes made it take 1.9 times as long as Serial.

The most a layout can save: no candidate layout on ``C`` usable cores samples faster than ``C`` times
Serial. Split over workers, a step's CPU work stays the same or grows (each worker's smaller agent call
and its own collector loop), and at most ``C`` processes of ours get a core each (beside other load,
``C`` of them get at most ``C`` times what one gets). So at most ``(1 - 1/C)`` of the run's sampling time
on Serial (``n_steps`` times Serial's step) can be saved. Auto measures every layout only when that is at
least :data:`PAYBACK` times what the probes would take (:meth:`ProbeSettings.estimate_seconds`); else it
keeps Serial and says why.

Serial's step is found in two stages, the cheap one first:

1. one env, made and stepped for 0.02 s of CPU time. Serial's step costs at least that env step (its
   agent call and collector come on top), so when this lower bound already makes the run long enough,
   auto goes on to the probes at once: on Pong the second stage would start 16 envs, 3-4 s on the 2-core
   VM, for a run of hours;
2. otherwise the run's own SerialSampler (its ``batch_B`` envs, a copy of its agent, its ``batch_T``),
   for a few batches, timed in wall-clock seconds under the machine's present load. When auto keeps
   Serial, this is its prediction.

The bound is generous (quiet CartPole's best layout saved nothing), so probing runs only where it can
plausibly pay. An agent on a GPU is always measured in full: serving it moves the agent's calls off the
CPU, which the bound does not cover.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from rlrun.samplers.auto.measure import ProbeSettings, run_serial, time_env, usable_cores

__all__ = ["PAYBACK", "Screen", "screen_run"]

PAYBACK = 2.0  # probe only when the most a layout could save is at least this many times the probes' time
BOUND_SECONDS = 0.02  # CPU seconds of the one env's steps (at least 64 steps)
SCREEN_SECONDS = 0.05  # wall seconds of the SerialSampler's timed batches (at least two batches)


@dataclass(frozen=True)
class Screen:
    """The run's SerialSampler as timed before the full probes, and what follows for the run."""

    n_steps: int  # env steps the run samples
    step_s: float  # wall seconds per env step of its SerialSampler, here and now
    start_s: float  # wall seconds the SerialSampler took to start (envs made, agent initialised)
    cores: int  # the most workers a layout may have: C in the bound
    probe_s: float  # what the full probes would take, estimated (ProbeSettings.estimate_seconds)
    lower_bound: bool = False  # step_s is one env step alone, in CPU time: less than serial's step

    @property
    def sampling_s(self) -> float:
        """How long the run samples with a SerialSampler."""
        return self.n_steps * self.step_s

    @property
    def saving_s(self) -> float:
        """The most any layout could save of :attr:`sampling_s`."""
        return self.sampling_s * (1.0 - 1.0 / max(1, self.cores))

    @property
    def worth_probing(self) -> bool:
        return self.saving_s >= PAYBACK * self.probe_s

    def format(self) -> str:
        """One line: what was timed and the verdict."""
        verdict = "measuring every layout" if self.worth_probing else "keeping serial without further probes"
        us = self.step_s * 1e6
        if self.lower_bound:
            timed = f"of at least {us:.1f} us each (one env step alone) sample for at least"
        else:
            timed = f"at {us:.1f} us a step on serial (measured, wall clock) sample for about"
        return (
            f"{self.n_steps:,} steps {timed} {self.sampling_s:.1f} s; on {self.cores} core{'s' * (self.cores != 1)}"
            f" {self.saving_s:.1f} s of it could be saved at most, against about {self.probe_s:.1f} s to measure"
            f" every layout: {verdict}"
        )


def screen_run(
    EnvCls: Callable[..., Any],
    env_kwargs: dict[str, Any],
    agent: Any,
    batch_B: int,
    batch_T: int,
    n_steps: int,
    max_workers: int,
    batch_sizes: Iterable[int],
    settings: ProbeSettings,
) -> Screen:
    """Bound the run's sampling time by one env step, and where that does not settle it time the run's
    SerialSampler (with a copy of ``agent``, which stays untouched); estimate what :func:`measure_costs`
    would take with the same ``batch_sizes`` and ``max_workers`` (:class:`Screen`)."""
    cores = usable_cores()

    def estimate(env_start_s: float, step_s: float) -> float:
        return settings.estimate_seconds(batch_B, batch_T, batch_sizes, cores, max_workers, env_start_s, step_s)

    started = time.perf_counter()
    env = EnvCls(**env_kwargs)
    try:
        make_s = time.perf_counter() - started  # the first env's: module and ROM loads too, so an upper bound
        env_s, _, _ = time_env(env, BOUND_SECONDS)
    finally:
        env.close()
    bound = Screen(n_steps, env_s, make_s, max_workers, estimate(make_s, env_s), lower_bound=True)
    if bound.worth_probing:
        return bound
    run = run_serial(
        EnvCls, env_kwargs, copy.deepcopy(agent), batch_B, batch_T, SCREEN_SECONDS, clock=time.perf_counter
    )
    return Screen(n_steps, run.step_s, run.start_s, max_workers, estimate(run.start_s / batch_B, run.step_s))
