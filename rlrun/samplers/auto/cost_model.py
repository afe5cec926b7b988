"""Predicted sampling speed (env steps per second) of each sampler layout, from measured costs.

Pure functions of :class:`Costs`, so the model is tested on costs set by hand. What each layout pays per
batch of ``batch_T`` steps of ``batch_B`` envs (``env`` = one env step plus the collector's work on it,
CPU seconds; ``agent(b)`` = one ``agent.step`` on ``b`` observations):

- ``serial``: per step, ``batch_B`` env steps then ``agent(batch_B)``, all in this process, and the
  collector's fixed work per time step (``collector_step_s``);
- ``cpu`` with W workers: each worker steps its ``ceil(batch_B / W)`` envs and acts for them on the CPU,
  and pays its collector's fixed work per time step;
  per batch one round trip to every worker; the slowest worker sets the pace;
- ``gpu`` (served) with W workers: per step the workers step their envs, then the master acts for all
  ``batch_B`` envs on the run's device; a served step's signals and copies (``served_step``) per step;
- ``alternating`` on W cores (2W workers, two groups of ``batch_B / 2`` envs): the master acts for one
  group while the other steps, if the group is back before the master needs it and each has a core
  (:func:`alternating_overlaps`): per step, the master's two turns (its calls and half of the serving
  work of all 2W workers, ``served_master``). Otherwise the groups' steps wait for the master's turns:
  the two turns, then the two groups' env steps side by side, and one wake-up of their workers.
  With the agent on the CPU the master's turn is slowed while the other group's workers work beside it
  (by ``share(W + 1)`` for that part of the turn), and all their CPU work together bounds the cycle.

Load from other processes enters as measured capacity: one busy process of ours got ``capacity_one`` of
a core, ``cores`` of them together got ``capacity_all`` cores; ``k`` busy processes then each run
``min(capacity_one, capacity_all / k)`` of the time (more beyond ``cores`` processes when the load
shares the CPU per process; see :meth:`Costs.share`). Measuring beats counting other processes: Linux's
autogroups give each session a share whatever its process count, so more workers need not get more
CPU beside another session's load. Measured round trips already carry the load they were measured under.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Kind",
    "KINDS",
    "AgentCost",
    "Costs",
    "Layout",
    "Prediction",
    "alternating_overlaps",
    "predict",
    "predict_all",
    "scheduler_slice",
    "served_parts",
    "slowest_of",
    "split_envs",
]

Kind = Literal["serial", "cpu", "gpu", "alternating"]
KINDS: tuple[Kind, ...] = ("serial", "cpu", "gpu", "alternating")


def _doublings(workers: int) -> float:
    return math.log2(max(1, workers))


def scheduler_slice(cores: int) -> float:
    """Linux's base scheduling slice, in seconds: 0.75 ms times ``1 + log2(CPUs)``, CPUs counted up to 8
    (1.5 ms on 2 CPUs, 3 ms on 8 or more). A process woken beside busy ones may wait about this long for
    a core (see :meth:`Costs.turn_taking_share`)."""
    return 0.75e-3 * (1 + int(math.log2(max(1, min(cores, 8)))))


@dataclass(frozen=True)
class AgentCost:
    """Seconds of one ``agent.step`` by batch size, measured at a few sizes: linear between them, and
    beyond the largest along the slope of the last two (never below the smallest's cost)."""

    points: tuple[tuple[int, float], ...]

    def __post_init__(self) -> None:
        if not self.points:
            raise ValueError("AgentCost needs at least one (batch size, seconds) point.")
        object.__setattr__(self, "points", tuple(sorted((int(b), float(s)) for b, s in self.points)))

    @classmethod
    def linear(cls, fixed_s: float, per_obs_s: float) -> AgentCost:
        """A call that costs ``fixed_s + b * per_obs_s`` (for synthetic costs)."""
        return cls(((1, fixed_s + per_obs_s), (1024, fixed_s + 1024 * per_obs_s)))

    def __call__(self, batch: int) -> float:
        points = self.points
        if batch <= points[0][0] or len(points) == 1:
            return points[0][1]
        for (b0, s0), (b1, s1) in zip(points, points[1:]):
            if batch <= b1:
                return s0 + (s1 - s0) * (batch - b0) / (b1 - b0)
        (b0, s0), (b1, s1) = points[-2], points[-1]
        return s1 + max(0.0, (s1 - s0) / (b1 - b0)) * (batch - b1)


@dataclass(frozen=True)
class Costs:
    """What one run costs on this machine, as :mod:`rlrun.samplers.auto.measure` measures it."""

    env_step_s: float  # CPU seconds per env step, resets spread over the steps
    env_step_spread: float  # relative standard deviation of one env step's time
    collector_s: float  # CPU seconds of the collector's own work per env step (buffers, checks); see measure
    agent_cpu: AgentCost  # agent.step on the CPU, one torch thread: what a CpuSampler worker pays
    agent_device: AgentCost  # agent.step on the run's device (the same as agent_cpu without a GPU)
    device_is_cpu: bool  # the master's agent calls take a CPU core
    round_trip_s: float  # master -> every worker -> master, with one worker
    round_trip_per_worker_s: float  # what each further worker adds to a round trip
    cores: int  # CPUs this process may use
    # A served step's machinery beyond one round trip, with one worker: step buffers, signals.
    served_step_s: float = 0.0
    # What each doubling of the served workers adds to it: the master wakes for workers that come back
    # apart, and more of them come back together as their number grows (see measure.served_step_costs).
    served_step_per_doubling_s: float = 0.0
    # The collector's own CPU seconds per time step whatever its envs (its loop, the step's bookkeeping),
    # paid by each process that runs a collector (serial, a CpuSampler worker); see measure.collector_costs.
    collector_step_s: float = 0.0
    # The master's own CPU seconds of a served step with one worker (gathering, copies, sending), the agent
    # call not counted; the rest of ``served_step`` is waiting for the workers to wake. None: all of it.
    served_master_s: float | None = None
    served_master_per_doubling_s: float = 0.0  # what each doubling of the workers adds to the master's own work
    served_worker_s: float = 0.0  # a served worker's own CPU seconds per step beyond its envs (signals, its loop)
    # A CpuSampler worker's CPU seconds per time step beyond its parts (shared buffers, the batch's end, the
    # caches it shares), from a CpuSampler run with the most workers (measure.cpu_worker_extra).
    cpu_worker_s: float = 0.0
    capacity_one: float = 1.0  # the cores' worth of work one busy process of ours got done (1.0 on a quiet machine)
    capacity_all: float | None = None  # the same for ``cores`` busy processes of ours together (None: all)
    reset_s: float = 0.0  # one env reset, for the table (already spread into env_step_s)
    memory_per_env_bytes: int = 0
    memory_available_bytes: int = 0

    def round_trip(self, workers: int) -> float:
        return self.round_trip_s + self.round_trip_per_worker_s * max(0, workers - 1)

    def served_step(self, workers: int) -> float:
        """One served time step's signals and copies, the agent call not counted."""
        return self.round_trip(workers) + self.served_step_s + self.served_step_per_doubling_s * _doublings(workers)

    def served_master(self, workers: int) -> float:
        """The master's own share of :meth:`served_step` with ``workers`` workers: what it cannot overlap
        with another group's turn."""
        whole = self.served_step(workers)
        if self.served_master_s is None:
            return whole
        return min(whole, self.served_master_s + self.served_master_per_doubling_s * _doublings(workers))

    def share(self, busy: int) -> float:
        """The share of a core each of ``busy`` processes of ours gets beside the other load: what one
        got alone (beside load in our own group, its fair share), or the cores all of them got, split
        ``busy`` ways, whichever is less. Beyond ``cores``
        processes, where the load shares the CPU per process (:attr:`load_per_process`), more processes
        of ours take more of it: ``busy`` of them beside ``L`` busy others get ``cores * busy / (busy + L)``
        cores together, scaled to what ``cores`` of them got."""
        busy = max(1, busy)
        together = self.cores if self.capacity_all is None else self.capacity_all
        one = self.capacity_one
        if self.load_per_process:
            others = self._others_per_process()
            # Over a run the scheduler balances its queues, and one process gets its fair share,
            # cores / (1 + L), whatever a 0.2 s probe read: beside 2 busy loops on 2 cores it read 0.47-0.83
            # of a core, as it sat beside one loop for its whole time or had a core to itself, where
            # SerialSampler ran at 0.57-0.93 (median 0.68) of its quiet speed. Over the 43 loaded workloads
            # of the auto_layout reports of 2026-12-04/05 the fair share was within 8% of SerialSampler's
            # loaded / quiet speed at the median (8 beyond 15%), the probe within 15% (20 beyond), and the
            # larger of the two within 12% (15 beyond).
            one = self.fair_share
            if busy > self.cores:
                together *= busy * (self.cores + others) / (self.cores * (busy + others))
        return min(1.0, one, together / busy)

    def turn_taking_share(self, turn_a: float, turn_b: float) -> float:
        """The share of a core each of two processes of ours gets while they take turns, one working while
        the other waits for it (a served sampler's master and its one worker), with turns of ``turn_a`` and
        ``turn_b`` CPU seconds.

        Beside load in our own group, a process that waits is no busy loop: the scheduler shares the cores
        out max-min fairly, and a process that asks for less than its fair share gets all it asks. The pair
        runs at speed ``s`` (1: as on a quiet machine) when its busier side, a fraction ``f`` of the turns,
        gets ``s * f`` of a core: ``L`` busy others get ``x`` each, ``L * x + s = cores`` with ``s * f = x``,
        so ``s = min(1, cores / (L * f + 1))`` (``f = 1``, one busy process: the fair share). That holds
        for turns of several milliseconds; a turn much shorter than the scheduler's slice
        (:func:`scheduler_slice`) waits on each wake-up for a busy neighbour's slice, and the pair
        competes like one busy process (:meth:`share`). The turns weigh the two by the shorter one's
        length against the slice. Beside 2 and 4 busy loops on the 2-core VM
        (``benchmarks/served_under_load.py``), ``GpuSampler`` with one worker ran Pong (turns of 2 and 4 ms)
        at 0.67 and 0.53 of its quiet speed (0.82, 0.54 and 0.38 beside 2, 4 and 6 in another run), where
        one busy process got 0.64 and 0.39 of a core (the rule: 0.84 and 0.52), and HalfCheetah (turns of
        0.08 and 0.5 ms) at 0.64 and 0.41, as one busy process does.
        """
        busy = self.share(1)
        total = turn_a + turn_b
        if not self.load_per_process or total <= 0.0:
            return busy
        larger = max(turn_a, turn_b) / total
        fair = max(busy, min(1.0, self.cores / (self._others_per_process() * larger + 1.0)))
        weight = min(1.0, min(turn_a, turn_b) / scheduler_slice(self.cores))
        return 1.0 / (weight / fair + (1.0 - weight) / busy)

    def _others_per_process(self) -> float:
        """``L``, the busy processes that, sharing the CPU per process, leave ``capacity_all`` cores to
        ``cores`` processes of ours: ``cores * cores / (cores + L) = capacity_all``."""
        together = self.cores if self.capacity_all is None else self.capacity_all
        return max(0.0, self.cores * self.cores / max(together, 1e-9) - self.cores)

    @property
    def load_per_process(self) -> bool:
        """Whether the other load shares the CPU with ours per process (it runs in our scheduler group: the
        same session, or a kernel without autogroups), rather than per session. Told apart by what one
        process of ours got: per process, no more than ``cores / (1 + L)`` of a core for the ``L`` that
        the probe with ``cores`` processes implies; per session, a whole core while other sessions are
        busy (its group's share).

        The line sits at 1.25 times the fair share, where the two overlap least. On the 2-core VM, with
        the median of 3 probe rounds, the ratio read 0.74-1.39 beside 2 busy loops in our session (3 of 16
        readings above 1.25; 15 of 38 loaded runs of ``benchmarks/auto_layout.py`` read 1.16-1.31, which a
        line at 1.15 took for another session's load) and 1.28-2.08 beside 2 busy loops each in a session
        of its own (``benchmarks/load_kind_probe.py``)."""
        if self._others_per_process() < 0.1 * self.cores:  # (nearly) nothing else runs: the question does not arise
            return False
        return self.capacity_one <= 1.25 * self.fair_share

    @property
    def fair_share(self) -> float:
        """The share of a core one busy process gets beside ``L`` busy others sharing the CPU per process:
        ``cores / (1 + L)``, at most a core."""
        return min(1.0, self.cores / (1.0 + self._others_per_process()))

    @property
    def other_load(self) -> float:
        """The cores other processes kept from ours (0 on a quiet machine)."""
        return max(0.0, self.cores - (self.cores if self.capacity_all is None else self.capacity_all))


@dataclass(frozen=True)
class Layout:
    """A sampler kind with its workers (for ``alternating``: cores, two workers on each)."""

    kind: Kind
    workers: int = 0

    @property
    def processes(self) -> int:
        return 2 * self.workers if self.kind == "alternating" else self.workers

    @property
    def label(self) -> str:
        if self.kind == "serial":
            return "serial"
        if self.kind == "alternating":
            return f"alternating, {self.workers} cores x 2 workers"
        return f"{self.kind}, {self.workers} worker{'s' * (self.workers != 1)}"


@dataclass(frozen=True)
class Prediction:
    steps_per_s: float
    bound: str  # what limits it, in a few words
    envs_per_worker: tuple[int, ...] = ()


def split_envs(batch_B: int, workers: int) -> list[int]:
    """Envs per worker as the parallel samplers split them: as even as can be, the first ones one more."""
    base, extra = divmod(batch_B, workers)
    return [base + (i < extra) for i in range(workers)]


def slowest_of(mean_s: float, spread: float, workers: int, steps: int) -> float:
    """Expected time of the slowest of ``workers`` workers each summing ``steps`` env steps of relative
    spread ``spread``: ``mean * (1 + spread * sqrt(2 ln W / steps))`` (the normal maximum's bound)."""
    if workers <= 1 or steps <= 0 or spread <= 0:
        return mean_s
    return mean_s * (1.0 + spread * math.sqrt(2.0 * math.log(workers) / steps))


def served_parts(costs: Costs, workers: int, batch_B: int) -> tuple[float, float]:
    """Seconds per time step of a GpuSampler's slowest worker's env steps and of its master's agent call,
    each at the share of a core it gets (the rest of a step is :meth:`Costs.served_step`)."""
    b = split_envs(batch_B, workers)[0]
    env = costs.env_step_s + costs.collector_s
    worker_work, acting = slowest_of(b * env, costs.env_step_spread, workers, b), costs.agent_device(batch_B)
    if workers == 1 and costs.device_is_cpu:  # one process of ours runs at a time: master and worker take turns
        pair = costs.turn_taking_share(acting, worker_work)
        return worker_work / pair, acting / pair
    return worker_work / costs.share(workers), acting / (costs.share(1) if costs.device_is_cpu else 1.0)


def cpu_worker_parts(costs: Costs, workers: int, batch_B: int, batch_T: int) -> float:
    """CPU seconds per time step of a CpuSampler's slowest worker from the parts timed alone: its envs'
    steps, its collector's work and its agent call (the rest is :attr:`Costs.cpu_worker_s`)."""
    b = split_envs(batch_B, workers)[0]
    env = costs.env_step_s + costs.collector_s
    slowest = slowest_of(b * env, costs.env_step_spread, workers, batch_T * b)
    return slowest + costs.collector_step_s + costs.agent_cpu(b)


def predict(layout: Layout, costs: Costs, batch_B: int, batch_T: int) -> Prediction:
    """Steps per second of ``layout`` sampling ``batch_T`` x ``batch_B`` batches with ``costs``."""
    env = costs.env_step_s + costs.collector_s
    B, T = batch_B, batch_T
    if layout.kind == "serial":
        cpu = B * env + costs.collector_step_s + (costs.agent_device(B) if costs.device_is_cpu else 0.0)
        device = 0.0 if costs.device_is_cpu else costs.agent_device(B)
        step = cpu / costs.share(1) + device
        bound = "env steps" if 2 * B * env >= cpu + device else "the agent's call"
        return Prediction(B / step, f"{bound}, one process")
    W = layout.workers
    if layout.kind == "cpu":
        split = split_envs(B, W)
        b = split[0]
        step = (cpu_worker_parts(costs, W, B, T) + costs.cpu_worker_s) / costs.share(W)
        batch = T * step + costs.round_trip(W)
        bound = "round trips" if costs.round_trip(W) > T * step else f"{b} envs + agent({b}) per worker"
        return Prediction(B * T / batch, bound, tuple(split))
    if layout.kind == "gpu":
        split = split_envs(B, W)
        workers, master = served_parts(costs, W, B)
        step = workers + master + costs.served_step(W)
        batch = T * step + costs.round_trip(W)
        bound = "the served call" if master > workers else "the workers' env steps"
        return Prediction(B * T / batch, bound, tuple(split))
    # alternating: two groups of B/2 envs, each group on W workers (one per core), served in turn. The
    # master's turn for a group: its agent call and half of a step's serving work for all 2W workers.
    # Overlapped (``alternating_overlaps``) a step is the two turns; otherwise the two turns, then the
    # groups' steps side by side with their wake-up.
    half = B // 2
    split = split_envs(half, W)
    b = split[0]
    group_work = slowest_of(b * env, costs.env_step_spread, W, b)
    group = group_work / costs.share(W + 1)
    serving = costs.served_master(2 * W) / 2
    turn = costs.agent_device(half) + serving
    # The workers' part: their steps and own serving work, and the wake-up beyond the master's work.
    wake_up = max(costs.served_worker_s, costs.served_step(W) - costs.served_master(W))
    overlapped = alternating_overlaps(turn, group_work + wake_up, W, costs.cores)
    if costs.device_is_cpu:
        # Overlapped, the master's turn shares the cores with the other group's W workers while they work;
        # otherwise it runs alone.
        overlap = (group_work + costs.served_worker_s) / turn if overlapped and turn > 0 else 0.0  # <= 1
        turn *= (1.0 - overlap) / costs.share(1) + overlap / costs.share(W + 1)
    else:  # the call runs on the device; the master's own work still takes a core
        turn += serving * (1.0 / costs.share(1) - 1.0)
    master_cycle = 2.0 * turn
    group_cycle = group + wake_up
    cycle = master_cycle if overlapped else master_cycle + group_cycle
    if costs.device_is_cpu:  # every process's CPU work shares the cores: the 2W workers and the master
        busy = 2 * W + 1
        capacity = busy * costs.share(busy)
        work = B * env + 2.0 * (costs.agent_cpu(half) + serving + W * costs.served_worker_s)
        cycle = max(cycle, work / capacity)
    batch = T * cycle + costs.round_trip(2 * W)
    bound = "the master's turns" if overlapped or master_cycle >= group_cycle else "the workers' env steps"
    return Prediction(B * T / batch, bound, tuple(split + split))


def alternating_overlaps(turn_s: float, group_s: float, cores_per_group: int, cores: int) -> bool:
    """Whether an alternating sampler's groups step while the master serves the other group.

    They do when a group is back before the master needs it (the master's turn is at least the group's
    step and wake-up, so the master never sleeps for it) and the master and a group's workers each have a
    core. Otherwise the master waits for each group, and the group it just woke waits on the master's
    core. On the 2-core VM (2026-12-05; the master's and the workers' CPU time per step beside the wall
    time, ``benchmarks/auto_layout.py``'s workloads): with a group on 1 core, CartPole's master turns of
    about 200 us against groups of about 160 us ran at the master's pace (its CPU time per step, 385 us,
    was the wall time, 388-403 us), while HalfCheetah (turns of about 280 us, groups of 370 us) and Pong
    (1.8 ms, 2.0 ms) ran at about the two turns plus one group's step (932 us and 5.6 ms a step). With
    a group on each of 2 cores (3 busy processes on 2 cores) none of the three overlapped.
    """
    return turn_s >= group_s and cores_per_group + 1 <= cores


def predict_all(layouts: Sequence[Layout], costs: Costs, batch_B: int, batch_T: int) -> list[Prediction]:
    return [predict(layout, costs, batch_B, batch_T) for layout in layouts]
