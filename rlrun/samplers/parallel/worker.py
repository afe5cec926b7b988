"""The sampler worker process: builds its envs and collectors, then runs one round per command.

What a worker needs arrives as two frozen dataclasses, :class:`SamplerSpec` (the same for every
worker of a sampler) and :class:`WorkerSettings` (its own envs, columns and CPUs), beside its end of
the pipes (:class:`~rlrun.samplers.parallel.protocol.WorkerEnd`) and the error slots.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from types import FrameType

import torch

from rlrun.agents.base import BaseAgent
from rlrun.envs.base import Env
from rlrun.envs.traj_info import TrajInfo
from rlrun.samplers.builder import close_envs, make_collector, make_envs, make_eval_collector, start_collector
from rlrun.samplers.collectors import BaseCollector, BaseEvalCollector
from rlrun.samplers.parallel.protocol import (
    CommandKind,
    ParentWatch,
    Report,
    WorkerEnd,
    WorkerErrors,
    WorkerQuit,
    die_with_parent,
)
from rlrun.utils.collections import AttrDict, NamedArrayTuple
from rlrun.utils.launching.pinning import pin_to_cpus
from rlrun.utils.seed import set_seed

__all__ = [
    "SamplerSpec",
    "WorkerSettings",
    "initialize_worker",
    "sampling_process",
    "CollectedTrajInfos",
    "EvalStop",
    "StepSignal",
]


@dataclass(frozen=True)
class SamplerSpec:
    """What every worker of one sampler shares. ``agent`` is None where the master serves actions."""

    EnvCls: Callable[..., Env]
    env_kwargs: dict[str, object]
    eval_env_kwargs: dict[str, object]
    CollectorCls: type[BaseCollector]
    eval_CollectorCls: type[BaseEvalCollector] | None
    TrajInfoCls: type[TrajInfo]
    traj_info_kwargs: dict[str, object]
    batch_T: int
    global_B: int
    seed: int  # env r is seeded with seed + r, whichever worker holds it
    max_decorrelation_steps: int
    eval_max_T: int
    torch_threads: int | None
    agent: BaseAgent | None = None


@dataclass(frozen=True)
class WorkerSettings:
    """One worker's share: its envs (global ranks), its columns of the batch, its CPUs and seed."""

    rank: int
    env_ranks: tuple[int, ...]
    eval_env_ranks: tuple[int, ...]
    eval_max_trajectories: int | None
    seed: int  # of its global RNGs, kept apart from env seeds
    cpus: tuple[int, ...] | None
    samples_np: NamedArrayTuple | tuple[NamedArrayTuple, NamedArrayTuple]  # its columns (of both halves: async)
    step_buffer_np: NamedArrayTuple | None = None  # served samplers: this worker's rows of the step buffer
    eval_step_buffer_np: NamedArrayTuple | None = None


_log = logging.getLogger(__name__)


def initialize_worker(
    rank: int,
    seed: int | None = None,
    cpu: int | Sequence[int] | None = None,
    torch_threads: int | None = None,
    group: object = None,
) -> None:
    """Pin this process to ``cpu`` (where the OS allows), set torch's threads and seed the global RNGs.

    ``torch_threads`` defaults to the number of CPUs pinned, else 1: workers usually fill the cores
    already, and more threads per worker would only compete. ``group`` is accepted for rlpyt
    compatibility and unused.
    """
    cpus = [cpu] if isinstance(cpu, int) else (None if cpu is None else [int(c) for c in cpu])
    affinity = pin_to_cpus(cpus, f"affinity['workers_cpus'] gives sampler worker {rank} CPUs")
    if affinity is None and cpus is not None:
        _log.warning("Sampler worker %d: this OS does not let processes be pinned; running on any CPU.", rank)
    if torch_threads is None:
        torch_threads = len(cpus) if cpus is not None else 1
    torch.set_num_threads(int(torch_threads))
    if seed is not None:
        set_seed(seed)
    _log.debug(
        "Sampler worker %d: CPU affinity %s, torch threads %d, seed %s.", rank, affinity, torch.get_num_threads(), seed
    )


class CollectedTrajInfos:
    """The ``traj_infos_queue`` a worker gives its eval collector: ``put`` keeps each TrajInfo in a list.

    rlpyt's eval collectors put finished trajectories on a multiprocessing queue, then None as an end
    marker. Here they reach the master in the worker's end-of-round report instead, so no
    queue, feeder thread or semaphore is needed, and a collector written for rlpyt works unchanged.
    """

    def __init__(self) -> None:
        self._items: list[TrajInfo] = []

    def put(self, item: TrajInfo | None, block: bool = True, timeout: float | None = None) -> None:
        if item is not None:  # rlpyt's end marker
            self._items.append(item)

    def put_nowait(self, item: TrajInfo | None) -> None:
        self.put(item)

    def __len__(self) -> int:
        return len(self._items)

    def take(self) -> list[TrajInfo]:
        """Everything put since the last call, in order."""
        items, self._items = self._items, []
        return items


class EvalStop:
    """What a worker's eval collector reads as ``sync.stop_eval``: its ``value`` turns True when the
    master asks the worker to quit, or once the collector has put this worker's share of
    ``eval_max_trajectories`` on its queue.

    rlpyt's master counted the trajectories arriving on its queue and set ``stop_eval`` when it had
    enough; collectors written for rlpyt step until then. rlrun's own collector has fixed quotas per
    env and puts its TrajInfos only at the end, so this flag never cuts it short.
    """

    def __init__(self, end: WorkerEnd, queue: CollectedTrajInfos, max_trajectories: int | None, served: bool) -> None:
        self._end = end
        self._queue = queue
        self._max_trajectories = max_trajectories
        self._served = served  # step signals share the command pipe: look at what was read, not at the pipe

    @property
    def value(self) -> bool:
        if self._end.quit_seen if self._served else self._end.quit_requested():
            return True
        return self._max_trajectories is not None and len(self._queue) >= self._max_trajectories


class StepSignal:
    """rlpyt's ``sync.obs_ready`` / ``sync.act_ready`` for served collectors: a worker's
    ``obs_ready.release()`` tells the master its observations are in the step buffer, and
    ``act_ready.acquire()`` waits until the master has written the actions there."""

    def __init__(self, signal_or_wait: Callable[[], None]) -> None:
        self._call = signal_or_wait

    def release(self) -> None:
        self._call()

    def acquire(self, block: bool = True, timeout: float | None = None) -> bool:
        self._call()
        return True


def _sigterm_handler(parent: ParentWatch, errors: WorkerErrors) -> Callable[[int, FrameType | None], None]:
    """SIGTERM exits (as SystemExit, so the finally block closes the envs) once the master is stopping
    its workers or is gone. Before that it is a signal to the whole process group (``timeout``, Slurm,
    systemd, ``kill -TERM -PGID``), which the master received too: as with Ctrl-C, the master decides,
    finishing its iteration, checkpointing and then stopping the workers. Were the workers to die at
    once, the run would end with a worker error instead."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if errors.stopping or not parent.alive():
            raise SystemExit(128 + signum)

    return handler


def sampling_process(spec: SamplerSpec, settings: WorkerSettings, end: WorkerEnd, errors: WorkerErrors) -> None:
    """Target of each worker process: build, report ready, then one round per command until QUIT.

    Any exception is written to the worker's error slot, with its traceback, and the worker exits;
    the master raises it as :class:`~rlrun.samplers.parallel.protocol.SamplerWorkerError`.
    """
    die_with_parent()  # first: a master killed from here on takes this worker with it
    parent = ParentWatch()
    # Ctrl-C in a terminal reaches every process of the group; the master alone decides what follows.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _sigterm_handler(parent, errors))
    end.enable_stack_dumps()
    w, served = settings, spec.agent is None
    envs: list[Env] = []
    eval_envs: list[Env] = []
    exit_code = 0
    try:
        if not parent.alive():
            return
        initialize_worker(w.rank, w.seed, w.cpus, spec.torch_threads)
        agent = spec.agent
        envs = make_envs(spec.EnvCls, spec.env_kwargs, w.env_ranks, spec.seed)
        if agent is not None:
            agent.collector_initialize(global_B=spec.global_B, env_ranks=list(w.env_ranks))
        sync = AttrDict()
        if served:
            sync.update(
                obs_ready=StepSignal(end.observations_ready), act_ready=StepSignal(partial(end.wait_actions, parent))
            )
        collector = make_collector(
            spec.CollectorCls,
            rank=w.rank,
            envs=envs,
            samples_np=w.samples_np,
            batch_T=spec.batch_T,
            TrajInfoCls=spec.TrajInfoCls,
            agent=agent,
            global_B=spec.global_B,
            env_ranks=w.env_ranks,
            traj_info_kwargs=spec.traj_info_kwargs,
            sync=sync,
            step_buffer_np=w.step_buffer_np,
        )
        eval_collector: BaseEvalCollector | None = None
        eval_queue = CollectedTrajInfos()
        if w.eval_env_ranks:
            eval_envs = make_envs(spec.EnvCls, spec.eval_env_kwargs, w.eval_env_ranks, spec.seed)
            assert spec.eval_CollectorCls is not None  # the sampler sets it where there are eval envs
            eval_collector = make_eval_collector(
                spec.eval_CollectorCls,
                rank=w.rank,
                envs=eval_envs,
                TrajInfoCls=spec.TrajInfoCls,
                max_T=spec.eval_max_T,
                agent=agent,
                max_trajectories=w.eval_max_trajectories,
                env_ranks=w.eval_env_ranks,
                traj_info_kwargs=spec.traj_info_kwargs,
                traj_infos_queue=eval_queue,  # emptied into this worker's report
                sync=AttrDict(sync, stop_eval=EvalStop(end, eval_queue, w.eval_max_trajectories, served)),
                step_buffer_np=w.eval_step_buffer_np,
            )
        agent_inputs, traj_infos = start_collector(collector, spec.max_decorrelation_steps, spec.seed)
        if agent is None:  # served
            step = w.step_buffer_np
            assert step is not None  # a served sampler gives each worker its rows of the step buffer
            step.observation[:] = agent_inputs.observation
            step.action[:] = agent_inputs.prev_action
            step.reward[:] = agent_inputs.prev_reward
        else:
            agent.seed_env_streams(spec.seed, list(w.env_ranks), eval_env_ranks=list(w.eval_env_ranks))
            collector.start_agent()
        end.report(Report())  # ready: the master returns from initialize

        while (command := end.next_command(parent)).kind is not CommandKind.QUIT:
            if command.kind is CommandKind.EVALUATE:
                if eval_collector is None:
                    raise RuntimeError(f"Sampler worker {w.rank} has no evaluation envs but was asked to evaluate.")
                returned = eval_collector.collect_evaluation(command.itr)
                # rlpyt's eval collectors put their TrajInfos on the queue; rlrun's also return them.
                completed = eval_queue.take() or list(returned or [])
                report = Report(completed, int(eval_collector.n_unfinished))
            else:
                if agent is not None:
                    agent.sample_mode(command.itr)
                collector.reset_if_needed(agent_inputs)
                agent_inputs, traj_infos, completed = collector.collect_batch(agent_inputs, traj_infos, command.itr)
                report = Report(list(completed))
            end.report(report)
    except WorkerQuit:  # told to quit mid-round
        pass
    except Exception:
        errors.report(w.rank, traceback.format_exc())
        try:
            end.failed()  # wake the master now rather than at its next look
        except OSError:
            pass
        exit_code = 1
    except SystemExit as e:  # SIGTERM from the master
        exit_code = e.code if isinstance(e.code, int) else 1
    finally:
        close_envs(envs + eval_envs)
    _exit(exit_code)


def _exit(code: int) -> None:
    """Leave without the interpreter's teardown, which takes about a second per worker once torch is
    loaded (forked children skip it too); only the standard streams need flushing."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code)
