"""How the sampler master and its workers meet once per batch, and what happens when one fails.

One round (a batch, or an evaluation)::

    master                                     worker r
    ctrl.itr, ctrl.do_eval = ...
    ctrl.barrier_in.open()           ----->    link.wait_turn(parent)
                                               collect into its columns of the shared batch
    ctrl.barrier_out.wait(monitor)   <-----    link.arrive(completed trajectory infos, pickled)

Each worker has two pipes to the master, one per direction. The master waits on the workers' pipes
and on their process sentinels together, so it wakes as soon as the last worker arrives or any
worker dies, and burns no CPU meanwhile. Pipes are plain file descriptors: unlike semaphores
(``multiprocessing.Barrier``, which also breaks for good on a timeout), they leave no named object in
/dev/shm under spawn or forkserver, whoever still holds a reference. Waits are cut into slices:
between slices the master asks the :class:`WorkerMonitor` whether a worker wrote a traceback into
its error slot or is gone, and raises one :class:`SamplerWorkerError`; a waiting worker checks that
its parent still lives, so the workers of a killed master exit on their own. :func:`stop_workers`
ends every worker: quit flag, join, terminate, kill, each with a deadline.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import threading
import time
from collections.abc import Iterable, Sequence
from multiprocessing.connection import Connection, Pipe
from multiprocessing.connection import wait as wait_for_ready
from typing import Any

__all__ = [
    "SamplerWorkerError",
    "BarrierIn",
    "BarrierOut",
    "WorkerLink",
    "WorkerErrors",
    "WorkerMonitor",
    "ParentWatch",
    "stop_workers",
    "describe_exitcode",
]

_log = logging.getLogger(__name__)

MASTER_POLL_S = 0.05  # how often a waiting master looks at its workers' state besides their pipes
WORKER_POLL_S = 0.25  # how often a waiting worker looks at its parent
STALL_WARNING_S = 120.0  # a round this long gets a log line naming the workers not yet done
ERROR_TEXT_BYTES = 32_768  # per worker; longer tracebacks keep their start and end


class SamplerWorkerError(RuntimeError):
    """A sampler worker raised or died; ``rank``, ``env_ranks`` and ``detail`` (its traceback) say which and why.

    ``eval_env_ranks`` are the worker's evaluation envs, if it has any. ``evaluation`` is True when the
    worker reported its error while running an evaluation round. A worker that died without a word
    may have died at any time since the last round, so its error does not claim a kind of round.
    """

    def __init__(
        self,
        rank: int,
        env_ranks: Sequence[int],
        detail: str,
        eval_env_ranks: Sequence[int] | None = None,
        evaluation: bool = False,
    ) -> None:
        self.rank = int(rank)
        self.env_ranks = [int(r) for r in env_ranks]
        self.eval_env_ranks = [int(r) for r in eval_env_ranks or []]
        self.detail = detail
        self.evaluation = bool(evaluation)
        envs = f"env ranks {self.env_ranks}"
        if self.eval_env_ranks:
            envs += f", eval env ranks {self.eval_env_ranks}"
        super().__init__(f"Sampler worker {self.rank} ({envs}) {detail}")

    def __reduce__(self):
        return type(self), (self.rank, self.env_ranks, self.detail, self.eval_env_ranks, self.evaluation)


class BarrierIn:
    """``barrier_in``, master side: starts a round for every worker at once.

    ``parties`` is rlpyt's count (workers and master). Each worker has its own pipe, so a worker that
    finishes early cannot take a slower worker's turn.
    """

    def __init__(self) -> None:
        self._turns: list[Connection] = []

    @property
    def parties(self) -> int:
        return len(self._turns) + 1

    def open(self) -> None:
        for turn in self._turns:
            try:
                turn.send_bytes(b"")
            except OSError:  # that worker is gone; barrier_out reports it
                pass

    def close(self) -> None:
        for turn in self._turns:
            turn.close()


class BarrierOut:
    """``barrier_out``, master side: waits until every worker arrived, and returns what each sent."""

    def __init__(self) -> None:
        self._arrivals: list[Connection] = []

    @property
    def parties(self) -> int:
        return len(self._arrivals) + 1

    def wait(self, monitor: WorkerMonitor) -> list[bytes]:
        """The payload of every worker, by rank; raises :class:`SamplerWorkerError` if one failed."""
        payloads: list[bytes] = [b""] * len(self._arrivals)
        waiting = {conn: rank for rank, conn in enumerate(self._arrivals)}
        closed: set[Connection] = set()  # pipes of workers on their way out; their sentinels will say more
        started = time.monotonic()
        next_warning = started + STALL_WARNING_S
        while waiting:
            # Only the processes still owing this round: a worker that arrived and then ended stays ready,
            # which would turn this wait into a busy loop (it is reported at the next round).
            handles = [c for c in waiting if c not in closed] + monitor.sentinels_of(waiting.values())
            ready = wait_for_ready(handles, timeout=MASTER_POLL_S)
            all_arrived = bool(ready)
            for conn in ready:
                rank = waiting.get(conn)
                if rank is None:  # a process sentinel: that worker ended
                    all_arrived = False
                    continue
                try:
                    payloads[rank] = conn.recv_bytes()
                except EOFError:  # the worker closed its pipe by exiting
                    closed.add(conn)
                    all_arrived = False
                else:
                    del waiting[conn]
            # A failing worker also arrives (to wake us at once), so look at the error slots every time;
            # check the processes only when something other than a normal arrival woke us, and only those
            # still owing this round (one that arrived and then ended shows up at the next round).
            monitor.check(liveness=not all_arrived, ranks=waiting.values())
            if time.monotonic() > next_warning:
                next_warning += STALL_WARNING_S
                _log.warning(
                    "Sampler workers %s have been busy with one round for %.0f s; an env or the agent may be stuck.",
                    sorted(waiting.values()),
                    time.monotonic() - started,
                )
        return payloads

    def close(self) -> None:
        for conn in self._arrivals:
            conn.close()


class WorkerLink:
    """A worker's ends of its two pipes to the master: wait for a turn, arrive with a payload.

    :meth:`create` makes the pipes and hands the master's ends to ``barrier_in`` and ``barrier_out``.
    The master closes its copy of these ends once the worker started, so that only the worker holds
    them (a worker dying mid-message then shows as end-of-file, never as a read that blocks).
    """

    def __init__(self, turn: Connection, arrival: Connection) -> None:
        self._turn = turn
        self._arrival = arrival

    @classmethod
    def create(cls, barrier_in: BarrierIn, barrier_out: BarrierOut) -> WorkerLink:
        turn_reader, turn_writer = Pipe(duplex=False)  # the same pipes serve every start method
        arrival_reader, arrival_writer = Pipe(duplex=False)
        barrier_in._turns.append(turn_writer)
        barrier_out._arrivals.append(arrival_reader)
        return cls(turn_reader, arrival_writer)

    def wait_turn(self, parent: ParentWatch) -> bool:
        """True once the master opened a round; False if the master died meanwhile."""
        while not self._turn.poll(WORKER_POLL_S):
            if not parent.alive():
                return False
        self._turn.recv_bytes()
        return True

    def arrive(self, payload: bytes = b"") -> None:
        self._arrival.send_bytes(payload)

    def close(self) -> None:
        self._turn.close()
        self._arrival.close()


class WorkerErrors:
    """One shared-memory slot per worker for the traceback that stopped it.

    The text is in place before the worker exits, so the master never waits for a message in flight,
    and a worker found dead has either reported or died without a word (a signal).
    """

    def __init__(self, ctx: Any, n_workers: int, capacity: int = ERROR_TEXT_BYTES) -> None:
        self.capacity = capacity
        self._lengths = ctx.RawArray(ctypes.c_int64, n_workers)
        self._text = ctx.RawArray(ctypes.c_char, n_workers * capacity)

    def report(self, rank: int, text: str) -> None:
        """Worker: store ``text`` (its start and end, if too long)."""
        data = text.encode("utf-8", "replace")
        if len(data) > self.capacity:
            cut = b"\n[... traceback shortened ...]\n"
            keep = (self.capacity - len(cut)) // 2
            data = data[:keep] + cut + data[-keep:]
        start = rank * self.capacity
        self._text[start : start + len(data)] = data
        self._lengths[rank] = len(data)  # last: the master reads a slot only once its length is set

    def get(self, rank: int) -> str | None:
        n = self._lengths[rank]
        if not n:
            return None
        start = rank * self.capacity
        return self._text[start : start + n].decode("utf-8", "replace")

    def first(self) -> int | None:
        """The lowest rank that reported, or None."""
        for rank, n in enumerate(self._lengths):
            if n:
                return rank
        return None


def describe_exitcode(code: int) -> str:
    """``exit code 1`` or ``signal SIGKILL (exit code -9)``."""
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name} (exit code {code})"
        except ValueError:
            return f"signal {-code} (exit code {code})"
    return f"exit code {code}"


class WorkerMonitor:
    """Master side: turns a worker's reported error, or its death, into one :class:`SamplerWorkerError`.

    Errors name the worker's env ranks and eval env ranks. While :attr:`evaluating` is set (by the
    sampler, for an evaluation round), an error a worker reports is marked as one of that evaluation.
    """

    def __init__(
        self,
        processes: list,
        env_ranks: Sequence[Sequence[int]],
        errors: WorkerErrors,
        eval_env_ranks: Sequence[Sequence[int]] | None = None,
    ) -> None:
        self.processes = processes  # the sampler's own list, filled as workers start
        self.env_ranks = [list(r) for r in env_ranks]
        self.eval_env_ranks = [list(r) for r in eval_env_ranks] if eval_env_ranks is not None else None
        self.errors = errors
        self.evaluating = False

    def _error(self, rank: int, detail: str, evaluation: bool = False) -> SamplerWorkerError:
        eval_env_ranks = self.eval_env_ranks[rank] if self.eval_env_ranks is not None else None
        return SamplerWorkerError(rank, self.env_ranks[rank], detail, eval_env_ranks, evaluation)

    def _started(self, ranks: Iterable[int] | None) -> list[int]:
        """``ranks`` (default: all) among the workers started so far, in order."""
        n = len(self.processes)
        return list(range(n)) if ranks is None else sorted(r for r in ranks if r < n)

    def sentinels_of(self, ranks: Iterable[int] | None = None) -> list[int]:
        """Handles that become ready when one of the workers ``ranks`` (default: all) ends."""
        return [self.processes[r].sentinel for r in self._started(ranks)]

    def check(self, liveness: bool = True, ranks: Iterable[int] | None = None) -> None:
        """Raise if a worker reported an error, or (with ``liveness``) if one of ``ranks`` (default: all)
        is no longer running."""
        rank = self.errors.first()
        if rank is not None:
            during = " during evaluation" if self.evaluating else ""
            raise self._error(rank, f"raised an error{during}:\n{self.errors.get(rank)}", self.evaluating)
        if not liveness:
            return
        for rank in self._started(ranks):
            code = self.processes[rank].exitcode
            if code is None:
                continue
            if code < 0:
                why = (
                    "A signal ended it before it could report anything: the kernel's out-of-memory killer, a "
                    "user, or a crash in native code (an env's simulator, a library)."
                )
            else:
                why = (
                    "It ended before reporting an error; its own output above may say why (under spawn or "
                    "forkserver, often an argument the child could not unpickle or import)."
                )
            raise self._error(rank, f"stopped unexpectedly with {describe_exitcode(code)}. {why}")


class ParentWatch:
    """Worker side: notices that the process that started this one is gone (its parent pid changes).

    Under forkserver the parent is the fork server, which exits when the master does.
    """

    def __init__(self) -> None:
        self._ppid = os.getppid()

    def alive(self) -> bool:
        return os.getppid() == self._ppid


def stop_workers(processes: Sequence[Any], ctrl: Any, sync: Any, join_timeout: float = 2.0) -> None:
    """End the started worker ``processes``: ask them to quit, then terminate, then kill what is left.

    Safe at any point (mid-round, after a failure, at interpreter exit). Workers quit at their next
    turn; one still busy after ``join_timeout`` seconds gets SIGTERM (it closes its envs), then
    SIGKILL after one more second. Closes the master's ends of the pipes.
    """
    with _ctrl_c_deferred():
        ctrl.quit.value = True
        sync.stop_eval.value = True
        ctrl.barrier_in.open()
        deadline = time.monotonic() + join_timeout
        for p in processes:
            p.join(max(0.0, deadline - time.monotonic()))
        for stop, wait_s in (("terminate", 1.0), ("kill", 2.0)):
            left = [p for p in processes if p.exitcode is None]
            if not left:
                break
            _log.warning("Sampler workers %s did not quit in time; sending %s.", [p.name for p in left], stop.upper())
            for p in left:
                getattr(p, stop)()
            deadline = time.monotonic() + wait_s
            for p in left:
                p.join(max(0.0, deadline - time.monotonic()))
        for p in processes:
            if p.exitcode is None:
                _log.error("Sampler worker %s (pid %s) is still running after SIGKILL.", p.name, p.pid)
            else:
                p.close()
        ctrl.barrier_in.close()
        ctrl.barrier_out.close()


@contextlib.contextmanager
def _ctrl_c_deferred():
    """Hold back Ctrl-C until the block ends (a few seconds at most), then raise it.

    A second Ctrl-C pressed while workers are being stopped would otherwise leave them running, and
    the interpreter would then wait for them forever at exit.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        raise KeyboardInterrupt
