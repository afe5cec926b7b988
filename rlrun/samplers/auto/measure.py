"""Timing probes for ``sampler="auto"``: what an env step, an agent call, a collector step, a round trip
to worker processes, a served step and a CpuSampler worker's overhead cost on this machine now, in three
to six seconds (11 to 18 for Atari, whose envs start slowly).

Env and agent costs are CPU seconds of this process (``time.process_time``, one torch thread, as a
sampler worker runs), so other processes' load does not inflate them. The load enters as capacity:
one, and then one per usable core, forked processes of ours step copies of the env for 0.2 s of wall
time, and report the CPU time the scheduler gave them (so only the cores other processes leave count,
whatever the scheduler's grouping) and their steps per CPU second (processes that slow each other down
through shared caches, memory or SMT siblings count as fewer cores); see :func:`capacities`. Round
trips are wall-clock times through real pipes to forked processes, so they carry the scheduling delays
of the load they were measured under. An agent on a GPU is timed in wall-clock time (its call returns
CPU tensors, so the time includes the device's work and copies).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import multiprocessing as mp
import os
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import psutil
import torch

from rlrun.samplers.auto.cost_model import AgentCost, Costs, cpu_worker_parts, served_parts, split_envs

__all__ = [
    "ProbeSettings",
    "probe_sizes",
    "measure_costs",
    "time_capacity",
    "CapacityProbe",
    "capacities",
    "median_capacities",
    "ServedStep",
    "served_step_costs",
    "SamplerRun",
    "run_sampler",
    "cpu_worker_extra",
    "SerialRun",
    "run_serial",
    "time_collector",
    "collector_costs",
    "time_env",
    "time_agent",
    "time_round_trip",
]

CPU_CLOCK = time.process_time


@dataclass(frozen=True)
class ProbeSettings:
    """How long each probe runs (CPU seconds for env and agent, wall seconds for round trips)."""

    env_seconds: float = 0.2
    agent_seconds: float = 0.05  # per batch size
    collector_seconds: float = 0.2
    round_trip_seconds: float = 0.1  # per worker count
    probe_envs: int = 8  # envs of the collector probe (a SerialSampler); its overhead per env step carries over
    served_seconds: float = 0.2
    capacity_seconds: float = 0.2  # per probe, with one and with all cores busy
    capacity_rounds: int = 3  # pairs of capacity probes; their median (one round's hiccup misled auto, below)
    # Time served steps (a GpuSampler with the run's envs); off when no served layout is a candidate.
    served: bool = True
    # Time a CpuSampler with the run's envs and a copy of its agent; off when no CPU layout is a candidate.
    cpu_sampler: bool = True
    cpu_sampler_seconds: float = 0.3

    def estimate_seconds(
        self,
        batch_B: int,
        batch_T: int,
        batch_sizes: Iterable[int],
        cores: int,
        max_workers: int,
        env_start_s: float,
        step_s: float,
    ) -> float:
        """About how long :func:`measure_costs` takes with these settings and the same ``batch_sizes``,
        ``cores`` and ``max_workers``: each probe's own time, a fork per probe process, and for each sampler
        it starts, its envs' start (``env_start_s`` each) and its warm-up and at least two timed batches
        (``step_s`` per env step), as a SerialSampler of the run's measured them (:func:`run_serial`)."""
        fork_s = 0.015  # a forked probe process's start and end; round trips and capacity probes read 10-20 ms
        total = self.env_seconds + len(probe_sizes(batch_sizes)) * self.agent_seconds
        round_trips = 2 if max_workers > 1 else 1
        total += round_trips * (self.round_trip_seconds + fork_s)
        capacity_probes = self.capacity_rounds * (2 if cores > 1 else 1)
        total += capacity_probes * (self.capacity_seconds + fork_s)
        n_probe = max(1, min(self.probe_envs, batch_B))
        samplers = [(n, self.collector_seconds) for n in sorted({max(1, n_probe // 4), n_probe})]
        if self.served:
            samplers += [(batch_B, self.served_seconds)] * len({1, max(1, min(max_workers, batch_B))})
        if self.cpu_sampler and min(max_workers, batch_B) > 1:
            samplers.append((batch_B, self.cpu_sampler_seconds))
        for envs, seconds in samplers:
            batch_s = envs * batch_T * step_s
            total += envs * env_start_s + batch_s + max(seconds, 2 * batch_s)
        return total


def probe_sizes(batch_sizes: Iterable[int]) -> list[int]:
    """The batch sizes :func:`measure_costs` times the agent at: the layouts' call sizes, and 1."""
    return sorted(set(batch_sizes) | {1})


def usable_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def time_env(env: Any, seconds: float) -> tuple[float, float, float]:
    """``(seconds per step with resets spread in, relative spread of one step, seconds per reset)``.

    Steps in chunks of 16 with random actions; the spread of one step is the chunks' relative standard
    deviation times sqrt(16).
    """
    chunk = 16
    actions = [env.action_space.sample() for _ in range(chunk)]  # drawn beforehand: a sampler's agent draws them
    env.reset()
    reset_s: list[float] = []
    chunk_s: list[float] = []
    steps = 0
    total = 0.0
    start = CPU_CLOCK()
    while CPU_CLOCK() - start < seconds or len(chunk_s) < 4:
        t0 = CPU_CLOCK()
        for action in actions:
            done = env.step(action).done
            if done:
                r0 = CPU_CLOCK()
                env.reset()
                reset_s.append(CPU_CLOCK() - r0)
        elapsed = CPU_CLOCK() - t0
        chunk_s.append(elapsed)
        total += elapsed
        steps += chunk
    if not reset_s:  # no episode ended: time a reset on its own (not spread into the steps)
        r0 = CPU_CLOCK()
        env.reset()
        reset_s.append(CPU_CLOCK() - r0)
        per_reset = reset_s[0]
    else:
        per_reset = statistics.fmean(reset_s)
    mean = statistics.fmean(chunk_s)
    spread = statistics.pstdev(chunk_s) / mean * chunk**0.5 if mean > 0 else 0.0
    return total / steps, min(spread, 3.0), per_reset


def agent_inputs(env: Any, batch: int) -> tuple[Any, Any, torch.Tensor]:
    """``(observation, prev_action, prev_reward)`` for ``batch`` envs, as torch tensors."""
    from rlrun.utils.buffer import buffer_from_example, torchify_buffer

    observation = env.reset()
    obs = buffer_from_example(observation, (batch,))
    obs[:] = observation
    action = buffer_from_example(env.action_space.null_value(), (batch,))
    return torchify_buffer(obs), torchify_buffer(action), torch.zeros(batch)


def time_agent(
    agent: Any, env: Any, batch_sizes: Iterable[int], seconds: float, device: torch.device | None = None
) -> AgentCost:
    """Seconds per ``agent.step`` at each batch size: CPU time on the CPU, wall time on ``device``."""
    clock: Callable[[], float] = CPU_CLOCK if device is None else time.perf_counter
    points = []
    for batch in sorted(set(batch_sizes)):
        inputs = agent_inputs(env, batch)
        agent.reset()
        agent.step(*inputs)  # warm-up: first-call allocations, cuDNN's choice of kernels
        calls = 0
        start = clock()
        while (elapsed := clock() - start) < seconds or calls < 3:
            agent.step(*inputs)
            calls += 1
        points.append((batch, elapsed / calls))
    agent.reset()
    return AgentCost(tuple(points))


def _echo(connection: Connection) -> None:
    """A probe worker: answers every message with one byte, until the pipe closes."""
    try:
        while connection.recv_bytes() != b"q":
            connection.send_bytes(b"r")
    except (EOFError, OSError):
        pass


def time_round_trip(workers: int, seconds: float) -> float:
    """Wall seconds of one round: a message to each of ``workers`` forked processes and all replies back."""
    ctx = mp.get_context("fork")
    ends = []
    processes = []
    try:
        for _ in range(workers):
            mine, theirs = ctx.Pipe()
            process = ctx.Process(target=_echo, args=(theirs,), daemon=True)
            process.start()
            theirs.close()
            ends.append(mine)
            processes.append(process)

        def one_round() -> None:
            for end in ends:
                end.send_bytes(b"c")
            for end in ends:
                end.recv_bytes()

        for _ in range(5):  # the first rounds pay for the processes' start
            one_round()
        rounds = 0
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds or rounds < 20:
            one_round()
            rounds += 1
        return elapsed / rounds
    finally:
        for end in ends:
            try:
                end.send_bytes(b"q")  # each child also holds the others' ends (fork), so closing is no signal
            except OSError:
                pass
            end.close()
        for process in processes:
            process.join(2.0)
            if process.is_alive():
                process.kill()
                process.join()


def _step_for(env: Any, seconds: float, report: Connection) -> None:
    """A capacity probe: steps (its forked copy of) ``env`` for ``seconds`` of wall time, then sends its
    env steps, the CPU seconds it got and the wall seconds it took."""
    actions = [env.action_space.sample() for _ in range(16)]
    steps = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        for action in actions:
            if env.step(action).done:
                env.reset()
        steps += len(actions)
    report.send((steps, time.process_time() - cpu_start, time.perf_counter() - start))
    report.close()


@dataclass(frozen=True)
class CapacityProbe:
    """What ``processes`` busy processes of ours got together: ``share``, the cores' worth of CPU time the
    scheduler gave them (the sum of each one's CPU seconds over its wall seconds), and ``steps_per_cpu_s``,
    their env steps per CPU second (lower than one process's alone when they slow each other down)."""

    processes: int
    share: float
    steps_per_cpu_s: float


def time_capacity(env: Any, processes: int, seconds: float) -> CapacityProbe:
    """Run ``processes`` forked processes, each stepping a copy of ``env`` for ``seconds``, and say what
    they got (:class:`CapacityProbe`). Less than ``processes`` cores when other processes take CPU."""
    ctx = mp.get_context("fork")
    pipes = [ctx.Pipe(duplex=False) for _ in range(processes)]
    children = [ctx.Process(target=_step_for, args=(env, seconds, send), daemon=True) for _, send in pipes]
    for child in children:
        child.start()
    for _, send in pipes:
        send.close()  # the children hold them now: one that dies ends its wait below (EOFError), no hang
    try:
        reports = []
        for child, (receive, _) in zip(children, pipes):
            if not receive.poll(seconds + 10.0):  # a child stopped or starved far past its stepping time
                raise RuntimeError(
                    f"sampler='auto': a capacity probe process did not report within {seconds + 10.0:.0f} s "
                    "(the machine is too busy to measure); pick the sampler by hand, or retry on a quieter machine."
                )
            try:
                reports.append(receive.recv())
            except EOFError:
                child.join(2.0)
                raise RuntimeError(
                    f"sampler='auto': a capacity probe process exited (code {child.exitcode}) while stepping a "
                    "forked copy of the env; the env fails outside the process that made it (does it hold a "
                    "handle, thread or socket that fork does not copy?). Pick the sampler by hand."
                ) from None
    finally:
        for child in children:
            child.join(2.0)
            if child.is_alive():
                child.kill()
                child.join()
    share = sum(cpu / wall for _, cpu, wall in reports)
    steps, cpu = sum(r[0] for r in reports), sum(r[1] for r in reports)
    return CapacityProbe(processes, share, steps / cpu if cpu > 0 else 0.0)


def capacities(one: CapacityProbe, every: CapacityProbe) -> tuple[float, float]:
    """``(capacity_one, capacity_all)`` for the cost model from a probe with one process and one with a
    process per core. The CPU-time share is what the scheduler gives; with every core busy it is scaled by
    how much slower each step ran than with one process (shared caches, memory bandwidth, SMT siblings).
    Measuring the share rather than steps times a step's cost measured in this process keeps a forked
    probe's cold start (copy-on-write faults, cold caches) out of it: under load the old measure read
    0.50 of a core for one process where SerialSampler got 0.68 of its quiet speed."""
    slowdown = min(1.0, every.steps_per_cpu_s / one.steps_per_cpu_s) if one.steps_per_cpu_s > 0 else 1.0
    return min(1.0, one.share), min(float(every.processes), every.share * slowdown)


@dataclass(frozen=True)
class SerialRun:
    """A SerialSampler's timed batches (:func:`run_serial`): ``start_s``, the wall seconds its start took
    (its envs made, the agent initialised), and ``step_s``, seconds per env step by ``clock``."""

    start_s: float
    step_s: float


def run_serial(
    EnvCls: Callable[..., Any],
    env_kwargs: dict[str, Any],
    agent: Any,
    n_envs: int,
    batch_T: int,
    seconds: float,
    clock: Callable[[], float] = CPU_CLOCK,
) -> SerialRun:
    """Sample with a SerialSampler of ``n_envs`` envs and ``agent`` (initialised here: pass a copy) for
    ``seconds`` by ``clock`` and at least two batches after one warm-up batch: env, agent and collector
    together."""
    from rlrun.samplers.serial.sampler import SerialSampler

    started = time.perf_counter()
    sampler = SerialSampler(
        EnvCls=EnvCls, env_kwargs=env_kwargs, batch_T=batch_T, batch_B=n_envs, max_decorrelation_steps=0
    )
    sampler.initialize(agent, seed=0)
    try:
        start_s = time.perf_counter() - started
        agent.sample_mode(0)
        sampler.obtain_samples(0)  # warm-up
        itr, steps = 1, 0
        start = clock()
        while (elapsed := clock() - start) < seconds or itr < 3:
            sampler.obtain_samples(itr)
            itr, steps = itr + 1, steps + n_envs * batch_T
        return SerialRun(start_s, elapsed / steps)
    finally:
        sampler.shutdown()


def time_collector(
    EnvCls: Callable[..., Any], env_kwargs: dict[str, Any], agent: Any, n_envs: int, batch_T: int, seconds: float
) -> float:
    """CPU seconds per env step of a SerialSampler with ``n_envs`` envs: env, agent and collector together."""
    return run_serial(EnvCls, env_kwargs, agent, n_envs, batch_T, seconds).step_s


def collector_costs(residuals: dict[int, float], env_s: float) -> tuple[float, float]:
    """``(per time step, per env step)``: the collector's own CPU seconds, from its residual work per time
    step (the probe's time less its env steps and agent call) with two env counts. Most of it comes once
    a time step, whatever the envs: on the 2-core VM a CartPole collector's residual was 24-29 us a step
    with 1, 2 or 4 envs, a HalfCheetah one's 114 us with 1 env and 17-20 us more per env. Counted per
    env step from 8 envs, it made 2 workers of 4 envs look 25-30% faster than they ran.

    The sampler loop can run faster than its parts timed alone (warm caches): a negative share per env
    is kept, down to half an env step; the share per time step is at least 0. One env count gives the
    share per env step alone (as before the split)."""
    counts = sorted(residuals)
    if len(counts) == 1:
        n = counts[0]
        return 0.0, max(-0.5 * env_s, residuals[n] / n)
    small, large = counts[0], counts[-1]
    per_env = max(-0.5 * env_s, (residuals[large] - residuals[small]) / (large - small))
    per_step = max(0.0, residuals[small] - per_env * small)
    return per_step, per_env


@dataclass(frozen=True)
class ServedStep:
    """What serving costs beyond the agent's calls and the env steps, from :func:`served_step_costs`:
    ``step_s`` per time step with one worker, its round trip not counted, and ``per_doubling_s`` what
    each doubling of the workers adds; ``master_s`` the master's own CPU work in it with one worker
    (gathering, copies, signals), and ``master_per_doubling_s`` what each doubling adds to that;
    ``worker_s`` each worker's own CPU work per time step beyond its envs (signals, its collector's loop)."""

    step_s: float
    per_doubling_s: float
    master_s: float
    master_per_doubling_s: float
    worker_s: float


def _cpu_seconds(processes: Iterable[psutil.Process]) -> float:
    total = 0.0
    for process in processes:
        times = process.cpu_times()
        total += times.user + times.system
    return total


@dataclass(frozen=True)
class SamplerRun:
    """A parallel sampler's timed batches (:func:`run_sampler`): per time step, ``wall_s`` in all (per-batch
    work spread over the batch's steps), ``master_s`` the master's CPU seconds and ``worker_s`` each worker's."""

    wall_s: float
    master_s: float
    worker_s: float


def run_sampler(
    SamplerCls: Callable[..., Any],
    EnvCls: Callable[..., Any],
    env_kwargs: dict[str, Any],
    agent: Any,
    workers: int,
    batch_B: int,
    batch_T: int,
    seconds: float,
) -> SamplerRun:
    """Sample batches with a ``SamplerCls`` of ``workers`` workers, the run's envs and ``agent`` (a copy of
    the run's) for ``seconds`` of wall time after one warm-up batch, and time them (:class:`SamplerRun`)."""
    from rlrun.utils.launching.affinity import default_affinity

    sampler = SamplerCls(
        EnvCls=EnvCls, env_kwargs=env_kwargs, batch_T=batch_T, batch_B=batch_B, max_decorrelation_steps=0
    )
    sampler.initialize(agent, affinity=default_affinity(workers), seed=0)
    try:
        agent.sample_mode(0)
        sampler.obtain_samples(0)  # warm-up
        children = [psutil.Process(p.pid) for p in sampler.workers if p.pid is not None]
        itr = 1
        start, cpu_start, children_start = time.perf_counter(), CPU_CLOCK(), _cpu_seconds(children)
        while (elapsed := time.perf_counter() - start) < seconds or itr < 3:
            sampler.obtain_samples(itr)
            itr += 1
        steps = (itr - 1) * batch_T
        return SamplerRun(
            wall_s=elapsed / steps,
            master_s=(CPU_CLOCK() - cpu_start) / steps,
            worker_s=(_cpu_seconds(children) - children_start) / steps / max(1, len(children)),
        )
    finally:
        sampler.shutdown()


def cpu_worker_extra(wall_s: float, costs: Costs, workers: int, batch_B: int, batch_T: int) -> float:
    """A CpuSampler worker's CPU seconds per time step beyond its parts (``cost_model.cpu_worker_parts``:
    its envs, its collector, its agent call), from the ``wall_s`` of a CpuSampler's :func:`run_sampler`
    with ``workers`` workers: :func:`~rlrun.samplers.auto.cost_model.predict`'s formula solved for it.

    The parts, timed in the master one after another, leave out what a worker pays among other workers:
    the step buffers in shared memory, the bootstrap value and trajectory infos at the end of each batch,
    the caches and memory bandwidth that two processes share. On the 2-core VM, CartPole's collector of 4
    envs took 160 us a step in one process, as the model said (159 us), while 2 workers of 4 envs ran at
    40,000 steps/s, 200 us a step each, and the model without this term predicted 1.20 times that. At
    least 0: a first version kept down to -0.25 of the parts, and beside 2 busy loops Pong's 0.3 s probe
    read -493 us a step, which made 2 workers look faster than the served layout that ran 1.17x them."""
    work = max(0.0, wall_s - costs.round_trip(workers) / batch_T) * costs.share(workers)
    return max(0.0, work - cpu_worker_parts(costs, workers, batch_B, batch_T))


def served_step_costs(runs: dict[int, SamplerRun], costs: Costs, batch_B: int, batch_T: int) -> ServedStep:
    """Serving's costs from GpuSampler runs (:func:`run_sampler`) with one and with more workers (``{workers: run}``),
    less what the cost model counts apart (``costs``: the env steps, the agent's call, the round trips).

    A run's time per step less its agent call and its slowest worker's env steps (each at the share of a
    core the model gives it, :func:`served_parts`: beside busy processes a 2 ms env step takes more than
    2 ms) and its share of the batch's round trip is the serving cost with that many workers, and its
    master's CPU time less the agent call is the master's part of it. With two worker counts each is
    split into a cost with one worker and a cost per doubling of the workers (at least 0). Per doubling,
    not per worker: the master's own work per step grew less with each added worker. On the 2-core VM it read, with 1, 2
    and 4 workers (a GpuSampler's 1 and 2, an alternating sampler's 2 and 4): CartPole 178, 217-230 and
    263-297 us; HalfCheetah 248, 389-463 and 513 us; Pong 567, 494-508 and 591 us."""
    env = costs.env_step_s + costs.collector_s
    acting = costs.agent_cpu(batch_B)
    on_cpu = dataclasses.replace(costs, agent_device=costs.agent_cpu, device_is_cpu=True)  # as the probe acted
    serving: dict[int, float] = {}
    master: dict[int, float] = {}
    for workers, run in runs.items():
        parts = sum(served_parts(on_cpu, workers, batch_B))
        serving[workers] = run.wall_s - parts - costs.round_trip(workers) * (1 + 1 / batch_T)
        master[workers] = run.master_s - acting

    def split(by_workers: dict[int, float]) -> tuple[float, float]:
        few, many = min(by_workers), max(by_workers)
        doublings = math.log2(many) - math.log2(few)
        per_doubling = max(0.0, (by_workers[many] - by_workers[few]) / doublings) if many > few else 0.0
        return max(0.0, by_workers[few] - per_doubling * math.log2(few)), per_doubling

    step_s, per_doubling_s = split(serving)
    master_s, master_per_doubling_s = split(master)
    many = max(runs)
    return ServedStep(
        step_s=step_s,
        per_doubling_s=per_doubling_s,
        master_s=master_s,
        master_per_doubling_s=master_per_doubling_s,
        worker_s=max(0.0, runs[many].worker_s - split_envs(batch_B, many)[0] * env),
    )


def median_capacities(rounds: Sequence[tuple[CapacityProbe, CapacityProbe]]) -> tuple[float, float]:
    """``(capacity_one, capacity_all)``: the medians of :func:`capacities` over ``rounds`` of (one process,
    every core) probes taken in turn. A 0.2 s probe now and then reads far less than the machine gives,
    when something else wakes for a moment: on a quiet 2-core VM one HalfCheetah probe read 1.18 cores for
    two processes (eight others read 1.89-1.99), and auto picked a layout at 0.83 of the best. A steady
    load reads alike in every round, so the median keeps it."""
    if not rounds:
        raise ValueError("median_capacities needs at least one round of probes.")
    pairs = [capacities(one, every) for one, every in rounds]
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


def measure_costs(
    EnvCls: Callable[..., Any],
    env_kwargs: dict[str, Any],
    agent: Any,
    batch_sizes: Iterable[int],
    batch_T: int,
    max_workers: int,
    cuda_idx: int | None = None,
    settings: ProbeSettings | None = None,
) -> Costs:
    """Measure every cost the model needs. ``agent`` is not touched: the probes act with copies of it.

    ``batch_sizes``: the agent's call sizes the candidate layouts make, the largest being the batch's
    ``batch_B``; ``max_workers``: the most workers any candidate starts (round trips and served steps are
    measured with 1 and with that many).
    """
    settings = settings or ProbeSettings()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as every sampler worker runs
    try:
        # Round trips first: nothing forks after a CUDA context exists.
        round_1 = time_round_trip(1, settings.round_trip_seconds)
        round_n = time_round_trip(max_workers, settings.round_trip_seconds) if max_workers > 1 else round_1
        per_worker = max(0.0, (round_n - round_1) / max(1, max_workers - 1))
        cores = usable_cores()
        me = psutil.Process()
        rss0 = me.memory_info().rss
        env = EnvCls(**env_kwargs)
        rss1 = me.memory_info().rss
        second = EnvCls(**env_kwargs)  # the first env also pays one-off loads (modules, ROMs)
        memory_per_env = max(0, me.memory_info().rss - rss1) or max(0, rss1 - rss0)
        second.close()
        try:
            env.seed(0)
            env_s, spread, reset_s = time_env(env, settings.env_seconds)
            # Before any CUDA context exists (the probes fork).
            rounds = []
            for _ in range(max(1, settings.capacity_rounds)):
                one = time_capacity(env, 1, settings.capacity_seconds)
                rounds.append((one, time_capacity(env, cores, settings.capacity_seconds) if cores > 1 else one))
            capacity_one, capacity_all = median_capacities(rounds)
            probe = copy.deepcopy(agent)
            probe.initialize(env.spaces, share_memory=False)
            probe.sample_mode(0)
            sizes = probe_sizes(batch_sizes)
            agent_cpu = time_agent(probe, env, sizes, settings.agent_seconds)
            n_probe = max(1, min(settings.probe_envs, max(sizes)))
            n_small = max(1, n_probe // 4)
            residuals = {}  # the collector's own CPU seconds per time step, with n envs
            for n in sorted({n_small, n_probe}):
                per_step = time_collector(
                    EnvCls, env_kwargs, copy.deepcopy(agent), n, batch_T, settings.collector_seconds
                )
                residuals[n] = n * (per_step - env_s) - agent_cpu(n)
            collector_step_s, collector_s = collector_costs(residuals, env_s)
            costs = Costs(
                env_step_s=env_s,
                env_step_spread=spread,
                collector_s=collector_s,
                collector_step_s=collector_step_s,
                agent_cpu=agent_cpu,
                agent_device=agent_cpu,
                device_is_cpu=True,
                round_trip_s=round_1,
                round_trip_per_worker_s=per_worker,
                cores=cores,
                capacity_one=capacity_one,
                capacity_all=min(float(cores), capacity_all),
                reset_s=reset_s,
                memory_per_env_bytes=int(memory_per_env),
                memory_available_bytes=int(psutil.virtual_memory().available),
            )
            if settings.served:  # still before any CUDA context: the samplers fork
                from rlrun.samplers.parallel.gpu.sampler import GpuSampler

                # The run's own envs and agent, acting on the CPU, not free ones: the master's work per step
                # grows with what it copies (Pong's frames, a Gaussian agent's means and deviations) and with
                # workers that come back apart (each wakes it). On the 2-core VM the master of a 2-worker
                # GpuSampler spent 313-334 us a step on CartPole and 479 us on HalfCheetah, where a probe on
                # free envs read 240-250 us and the model built on it predicted 1.32-1.34 times their speed.
                batch_B = max(sizes)
                runs = {
                    w: run_sampler(
                        GpuSampler,
                        EnvCls,
                        env_kwargs,
                        copy.deepcopy(agent),
                        w,
                        batch_B,
                        batch_T,
                        settings.served_seconds,
                    )
                    for w in sorted({1, max(1, min(max_workers, batch_B))})
                }
                served = served_step_costs(runs, costs, batch_B, batch_T)
                costs = dataclasses.replace(
                    costs,
                    served_step_s=served.step_s,
                    served_step_per_doubling_s=served.per_doubling_s,
                    served_master_s=served.master_s,
                    served_master_per_doubling_s=served.master_per_doubling_s,
                    served_worker_s=served.worker_s,
                )
            cpu_workers = max(1, min(max_workers, max(sizes)))
            if settings.cpu_sampler and cpu_workers > 1:
                from rlrun.samplers.parallel.cpu.sampler import CpuSampler

                run = run_sampler(
                    CpuSampler,
                    EnvCls,
                    env_kwargs,
                    copy.deepcopy(agent),
                    cpu_workers,
                    max(sizes),
                    batch_T,
                    settings.cpu_sampler_seconds,
                )
                extra = cpu_worker_extra(run.wall_s, costs, cpu_workers, max(sizes), batch_T)
                costs = dataclasses.replace(costs, cpu_worker_s=extra)
            if cuda_idx is None:
                agent_device, device_is_cpu = agent_cpu, True
            else:
                probe.to_device(cuda_idx)
                agent_device = time_agent(probe, env, sizes, settings.agent_seconds, probe.device)
                device_is_cpu = False
        finally:
            env.close()
    finally:
        torch.set_num_threads(threads)
    return dataclasses.replace(costs, agent_device=agent_device, device_is_cpu=device_is_cpu)
