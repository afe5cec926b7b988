"""The processes of an asynchronous run beside the optimiser, what they share, and the optimiser's watch.

::

    optimiser (this process)          sampler process                    copier process
      optimize_agent, throttled  <-   batch itr -> half itr % 2     ->   half -> replay (write lock)
      send_shared_memory()       ->   recv_shared_memory() per batch
      reads the sampler's reports <-  ("batch", itr, traj_infos, worker_restarts), ("eval", ...), ("done", n_itr)

The sampler process runs the sampler (and, for parallel samplers, starts its workers below it); one
copier appends each filled half to the replay, in order, so the replay's n-step windows and frame
histories see the steps in the order they happened (rlpyt's two copiers could append out of order).
Two semaphores per half pass it between them: ``sample_ready`` (sampler -> copier) and
``sample_copied`` (copier -> sampler).

Failure: each child writes its traceback into its error slot before it exits (a sampler worker's
failure reaches the sampler process as a :class:`~rlrun.samplers.parallel.protocol.SamplerWorkerError`
and is reported the same way). The optimiser looks at the slots and the exit codes between its
updates and while it waits, and turns whatever it finds into one :class:`AsyncProcessError`. Every
wait in every process is in slices that look at the quit flag and the parent, and children die with
the optimiser (``PR_SET_PDEATHSIG``); the sampler's workers die with the sampler process.
"""

from __future__ import annotations

import faulthandler
import logging
import signal
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, Pipe
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Semaphore
from types import FrameType
from typing import Any

import numpy as np
import psutil
import torch

from rlrun.replays.base import BaseReplayBuffer
from rlrun.samplers.async_.base import AsyncSamplerBase
from rlrun.samplers.parallel.pool import request_stack
from rlrun.samplers.parallel.protocol import (
    STACK_SIGNAL,
    ParentWatch,
    WorkerErrors,
    describe_exitcode,
    die_with_parent,
)
from rlrun.samplers.parallel.worker import _exit
from rlrun.utils.collections import NamedArrayTuple
from rlrun.utils.data_model import SamplesBatch
from rlrun.utils.shared_memory import SharedArray, np_mp_array

__all__ = ["AsyncControl", "AsyncProcessError", "AsyncProcesses", "SamplerSchedule", "run_async_sampler", "run_copier"]

_log = logging.getLogger(__name__)

SLICE_S = 0.05  # how long any wait lasts before it looks at the quit flag and the parent again
STOPPED_LIMIT_S = 2.0
SAMPLER, COPIER = 0, 1
PROCESS_NAMES = ("sampler process", "memory copier")


class AsyncProcessError(RuntimeError):
    """A process of an asynchronous run (the sampler process, a sampler worker below it, or the memory
    copier) raised, died, stopped or got stuck; ``process`` names which, ``detail`` says what happened."""

    def __init__(self, process: str, detail: str) -> None:
        self.process = process
        self.detail = detail
        super().__init__(f"The asynchronous run's {process} {detail}")

    def __reduce__(self) -> tuple[type[AsyncProcessError], tuple[str, str]]:
        return type(self), (self.process, self.detail)


@dataclass
class AsyncControl:
    """What the optimiser, the sampler process and the copier share.

    ``counters``: [0] quit flag, [1] sampler iterations finished, [2] iterations copied into the replay;
    ``throttle``: [0] the sampler iteration the optimiser will next train up to (the sampler stays
    within ``lead_itrs`` of it).
    """

    counters: SharedArray
    throttle: SharedArray
    sample_ready: list[Semaphore]
    sample_copied: list[Semaphore]

    @classmethod
    def build(cls, ctx: BaseContext, start_itr: int = 0) -> AsyncControl:
        """``start_itr``: the first batch (a resumed run's); the counters start there, as if it were done."""
        counters = np_mp_array(3, np.int64)
        counters[1:] = start_itr
        return cls(
            counters=counters,
            throttle=np_mp_array(1, np.float64),
            sample_ready=[ctx.Semaphore(0) for _ in range(2)],
            sample_copied=[ctx.Semaphore(1) for _ in range(2)],
        )

    @property
    def quit(self) -> bool:
        return bool(self.counters[0])

    def request_quit(self) -> None:
        self.counters[0] = 1

    @property
    def sampled_itrs(self) -> int:
        return int(self.counters[1])

    @property
    def copied_itrs(self) -> int:
        return int(self.counters[2])


def _wait(ready: Callable[[], bool], ctrl: AsyncControl, parent: ParentWatch) -> bool:
    """Wait in slices until ``ready()``; False when the run quits or the parent is gone."""
    while not ready():
        if ctrl.quit or not parent.alive():
            return False
    return True


def _acquire(semaphore: Semaphore, ctrl: AsyncControl, parent: ParentWatch) -> bool:
    return _wait(lambda: semaphore.acquire(timeout=SLICE_S), ctrl, parent)


def _child_setup(stacks: Connection) -> ParentWatch:
    die_with_parent()  # first: an optimiser killed from here on takes this process with it
    parent = ParentWatch()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the optimiser's to handle
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    faulthandler.register(STACK_SIGNAL, file=stacks, all_threads=True, chain=False)
    return parent


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


@dataclass(frozen=True)
class SamplerSchedule:
    """What the sampler process runs: batches ``start_itr`` to ``n_itr - 1`` (a resumed run starts after its
    checkpoint's); with ``eval_itrs`` an evaluation before the first batch of a run from scratch, after every
    ``eval_itrs``-th and after the last; ``lead_itrs`` (None: no limit) keeps it within that many iterations
    of the optimiser's throttle."""

    n_itr: int
    eval_itrs: int | None = None
    lead_itrs: int | None = None
    start_itr: int = 0

    def evaluates_after(self, itr: int) -> bool:
        return self.eval_itrs is not None and ((itr + 1) % self.eval_itrs == 0 or itr == self.n_itr - 1)


def run_async_sampler(
    sampler: AsyncSamplerBase,
    affinity: dict[str, Any] | None,
    ctrl: AsyncControl,
    schedule: SamplerSchedule,
    reports: Connection,
    stacks: Connection,
    errors: WorkerErrors,
) -> None:
    """Target of the sampler process: ``sampler.initialize(affinity)``, then batch after batch into the
    double buffer, each reported to the optimiser with its completed trajectories."""
    parent = _child_setup(stacks)
    code = 0
    try:
        sampler.initialize(affinity)
        reports.send(("ready",))
        if schedule.eval_itrs is not None and schedule.start_itr == 0:
            _evaluate(sampler, 0, reports)
        for itr in range(schedule.start_itr, schedule.n_itr):
            half = itr % 2
            if not _acquire(ctrl.sample_copied[half], ctrl, parent):
                break
            if schedule.lead_itrs is not None and not _wait_for_optimiser(itr, schedule.lead_itrs, ctrl, parent):
                break
            traj_infos = sampler.obtain_samples(itr, half)
            ctrl.sample_ready[half].release()
            ctrl.counters[1] = itr + 1
            reports.send(("batch", itr, traj_infos, sampler.worker_restart_count))
            if schedule.evaluates_after(itr):
                _evaluate(sampler, itr, reports)
        else:
            reports.send(("done", schedule.n_itr))
    except Exception:
        errors.report(SAMPLER, traceback.format_exc())
        code = 1
    except SystemExit as e:  # SIGTERM from the optimiser
        code = e.code if isinstance(e.code, int) else 1
    finally:
        try:
            sampler.shutdown()  # its workers (parallel samplers) and envs
        except Exception:
            _log.exception("The sampler process could not shut its sampler down cleanly.")
    _exit(code)


def _wait_for_optimiser(itr: int, lead_itrs: int, ctrl: AsyncControl, parent: ParentWatch) -> bool:
    """Hold batch ``itr`` until the optimiser's throttle is within ``lead_itrs`` of it (so the replay ratio
    holds also when the optimiser is the slower side); False when the run quits."""

    def ready() -> bool:
        if itr < ctrl.throttle[0] + lead_itrs:
            return True
        time.sleep(SLICE_S)
        return False

    return _wait(ready, ctrl, parent)


def _evaluate(sampler: AsyncSamplerBase, itr: int, reports: Connection) -> None:
    start = time.perf_counter()
    traj_infos = sampler.evaluate_agent(itr)
    reports.send(("eval", itr, traj_infos, time.perf_counter() - start))


def run_copier(
    double_buffer: Sequence[SamplesBatch],
    samples_to_buffer: Callable[[SamplesBatch], NamedArrayTuple],
    replay: BaseReplayBuffer,
    ctrl: AsyncControl,
    stacks: Connection,
    errors: WorkerErrors,
) -> None:
    """Target of the copier process: append each filled half to the replay (under its write lock), in
    the order the sampler filled them, and hand the half back."""
    parent = _child_setup(stacks)
    torch.set_num_threads(1)
    code = 0
    half = ctrl.copied_itrs % 2  # batch itr fills half itr % 2, also from a resumed run's first batch on
    try:
        while _acquire(ctrl.sample_ready[half], ctrl, parent):
            replay.append_samples(samples_to_buffer(double_buffer[half]))
            ctrl.counters[2] += 1
            ctrl.sample_copied[half].release()
            half ^= 1
    except Exception:
        errors.report(COPIER, traceback.format_exc())
        code = 1
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    _exit(code)


class AsyncProcesses:
    """The optimiser's handle on the sampler process and the copier: start, watch, stop."""

    def __init__(self, ctx: Any) -> None:  # a multiprocessing context: typeshed's BaseContext lacks Process
        self._ctx = ctx
        self.errors = WorkerErrors(ctx, len(PROCESS_NAMES))
        self.processes: list[BaseProcess | None] = [None] * len(PROCESS_NAMES)
        self._stacks: list[Connection | None] = [None] * len(PROCESS_NAMES)
        self._psutil: list[psutil.Process | None] = [None] * len(PROCESS_NAMES)
        self._stopped_since: dict[int, float] = {}
        self._stopping = False

    def start(self, slot: int, target: Callable[..., None], args: Callable[[Connection], tuple[object, ...]]) -> None:
        """Start ``target(*args(stacks_end))`` as process ``slot``; ``stacks_end`` is where its stacks go."""
        stacks_r, stacks_w = Pipe(duplex=False)
        name = PROCESS_NAMES[slot].replace(" ", "_")
        process = self._ctx.Process(target=target, args=args(stacks_w), name=f"rlrun_{name}")
        try:
            process.start()
        finally:
            stacks_w.close()
        self.processes[slot] = process
        self._stacks[slot] = stacks_r
        try:
            self._psutil[slot] = psutil.Process(process.pid)
        except psutil.Error:
            pass

    def check(self) -> None:
        """Raise :class:`AsyncProcessError` for the first process that failed, died or stays stopped."""
        slot = self.errors.first()
        if slot is not None:
            raise AsyncProcessError(PROCESS_NAMES[slot], f"raised an error:\n{self.errors.get(slot)}")
        now = time.monotonic()
        for slot, process in enumerate(self.processes):
            if process is None:
                continue
            code = process.exitcode
            # The sampler ends on its own (code 0) after its last batch; the copier only when told to.
            if code is not None and not (code == 0 and (slot == SAMPLER or self._stopping)):
                why = (
                    "A signal ended it: the kernel's out-of-memory killer, a user, or a crash in native code."
                    if code < 0
                    else "It ended without reporting an error; its own output above may say why."
                )
                raise AsyncProcessError(
                    PROCESS_NAMES[slot], f"stopped unexpectedly with {describe_exitcode(code)}. {why}"
                )
            if self._is_stopped(slot):
                since = self._stopped_since.setdefault(slot, now)
                if now - since >= STOPPED_LIMIT_S:
                    raise AsyncProcessError(
                        PROCESS_NAMES[slot],
                        f"is stopped (process {process.pid}: SIGSTOP or a debugger) and has not run for "
                        f"{now - since:.1f} s. Resume it with `kill -CONT {process.pid}`, or do not stop it.",
                    )
            else:
                self._stopped_since.pop(slot, None)

    def _is_stopped(self, slot: int) -> bool:
        process = self._psutil[slot]
        if process is None:
            return False
        try:
            return process.status() in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP)
        except psutil.Error:
            return False

    def stacks(self) -> str:
        """The Python stacks of every live process, for an error about a stuck run."""
        parts = []
        for slot, process in enumerate(self.processes):
            conn = self._stacks[slot]
            if process is None or conn is None or process.exitcode is not None:
                continue
            parts.append(f"--- {PROCESS_NAMES[slot]} (pid {process.pid}) ---\n{request_stack(process.pid, conn)}")
        return "\n".join(parts)

    def stop(self, ctrl: AsyncControl | None, join_timeout: float = 5.0) -> None:
        """Quit, then SIGTERM, then SIGKILL, each with a deadline; close the pipes. Safe more than once."""
        self._stopping = True
        if ctrl is not None:
            ctrl.request_quit()
        live = [p for p in self.processes if p is not None]
        for p in live:
            if self._is_stopped(self.processes.index(p)):
                p.kill()  # it cannot quit until continued
        deadline = time.monotonic() + join_timeout
        for p in live:
            p.join(max(0.0, deadline - time.monotonic()))
        for how, wait_s in (("terminate", 2.0), ("kill", 2.0)):
            left = [p for p in live if p.exitcode is None]
            if not left:
                break
            _log.warning("Asynchronous run: %s did not quit in time; sending %s.", [p.name for p in left], how.upper())
            for p in left:
                getattr(p, how)()
            deadline = time.monotonic() + wait_s
            for p in left:
                p.join(max(0.0, deadline - time.monotonic()))
        for slot, process in enumerate(self.processes):
            if process is not None and process.exitcode is not None:
                process.close()
                self.processes[slot] = None
        for slot, conn in enumerate(self._stacks):
            if conn is not None:
                conn.close()
                self._stacks[slot] = None
