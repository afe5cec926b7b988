"""The master's side of the worker protocol: start workers, send commands, gather, and never wait for ever.

:class:`WorkerPool` waits on the workers' report pipes and process sentinels together, so it wakes
as soon as the last worker arrives or any worker dies, and burns no CPU meanwhile. Between slices of
that wait it turns every way a worker can fail into one :class:`SamplerWorkerError`:

- it raised: its traceback, from its error slot;
- it died (a signal, the OOM killer, a crash in native code): its exit code;
- it is stopped (SIGSTOP, SIGTSTP): within :data:`STOPPED_LIMIT_S` of being seen so;
- it is stuck: a round or the start-up that outlasts ``timeout`` seconds; the error carries the
  worker's Python stack, and half-way a warning logs the same stack;
- it broke the step protocol (a lost or doubled step signal).

Given a :class:`~rlrun.samplers.parallel.restarts.RestartLedger` with restarts left, the pool turns
the first four of those into a restart instead: it kills what is left of the worker, marks it
:attr:`~WorkerPool.down`, and finishes the round with the others (a down worker owes nothing and is
sent nothing). The sampler then drops the round, calls :meth:`~WorkerPool.restart_down` and runs the
round again. A broken step protocol is a bug in a collector, which a restart would only repeat: it
always ends the run.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_for_ready
from multiprocessing.process import BaseProcess
from typing import Any, cast

import psutil

from rlrun.samplers.parallel.protocol import (
    _FAILED,
    _OBSERVATIONS,
    _REPORT,
    STACK_SIGNAL,
    Command,
    CommandKind,
    Report,
    SamplerWorkerError,
    WorkerEnd,
    WorkerErrors,
    decode,
    describe_exitcode,
    describe_message,
    encode_actions_ready,
)
from rlrun.samplers.parallel.restarts import RestartLedger, last_line
from rlrun.utils.launching.main_guard import MAIN_GUARD_EXIT_CODE, missing_guard_message

__all__ = ["WorkerPool", "WorkerLabel", "DEFAULT_TIMEOUT_S", "request_stack"]

_log = logging.getLogger(__name__)

MASTER_POLL_S = 0.05  # how often a waiting master looks at its workers besides their pipes
STATUS_EVERY_S = 0.5  # how often it asks the OS whether a worker is stopped
STOPPED_LIMIT_S = 2.0  # a worker stopped this long (while the master ran) is reported
DEFAULT_TIMEOUT_S = 600.0  # the most one round, or the start-up, may take by default
STACK_WAIT_S = 1.0  # how long to wait for a worker's stack dump
KILL_WAIT_S = 2.0  # how long to wait for a faulty worker to end after SIGKILL, before it is replaced


@dataclass(frozen=True)
class WorkerLabel:
    """What an error says about a worker: its env ranks and evaluation env ranks."""

    env_ranks: tuple[int, ...]
    eval_env_ranks: tuple[int, ...] = ()


class WorkerPool:
    """The sampler's worker processes and the master's ends of their pipes.

    ``timeout`` (seconds, None for none) bounds the start-up and every round; a worker still busy
    then is reported with its stack. Call :meth:`stop` (safe at any time, more than once) to end it.
    ``restarts`` (None: none) is the budget of worker restarts; see the module docstring.
    """

    def __init__(
        self,
        ctx: Any,  # a multiprocessing context (fork, spawn, forkserver); typeshed's BaseContext has no Process
        labels: Sequence[WorkerLabel],
        timeout: float | None = DEFAULT_TIMEOUT_S,
        restarts: RestartLedger | None = None,
    ) -> None:
        self.labels = list(labels)
        self.timeout = timeout
        self.restarts = restarts
        self.down: dict[int, SamplerWorkerError] = {}  # workers lost since the last restart_down, and why
        self.errors = WorkerErrors(ctx, len(self.labels))
        self.processes: list[BaseProcess] = []
        self._psutil: list[psutil.Process | None] = []
        self._commands: list[Connection] = []
        self._reports: list[Connection] = []
        self._stacks: list[Connection] = []
        self._actions_sent = [0] * len(self.labels)
        self._observations_seen = [0] * len(self.labels)
        self._ctx = ctx
        self._round: Command | None = None
        self._starting = False
        self._round_started = time.monotonic()
        self._warned = False
        self._stopped = False
        self._target: Callable[..., None] | None = None
        self._args_of: Callable[[int, WorkerEnd], tuple[object, ...]] | None = None
        self._name = "sampler_worker"
        self._retired: list[BaseProcess] = []  # replaced workers (joined and closed at stop)

    # ---- starting ----

    def start(
        self,
        target: Callable[..., None],
        args_of: Callable[[int, WorkerEnd], tuple[object, ...]],
        name: str = "sampler_worker",
    ) -> None:
        """Start one process per label, running ``target(*args_of(rank, end))``; :meth:`wait_started` waits
        for them (start-up is bounded by ``timeout`` like a round). A replacement worker starts the same
        way; ``args_of`` is called again then, and may give it other arguments (new seeds)."""
        self._target, self._args_of, self._name = target, args_of, name
        self._round, self._round_started, self._starting, self._warned = None, time.monotonic(), True, False
        for rank in range(len(self.labels)):
            self._start_one(rank)

    def _start_one(self, rank: int) -> None:
        """Start worker ``rank``: a new one, or the replacement of one retired."""
        assert self._target is not None and self._args_of is not None, "start() first"
        new = rank == len(self.processes)
        # Made just before its process starts, so workers forked later do not hold this one's ends.
        end, (commands, reports, stacks) = WorkerEnd.create()
        if new:
            self._commands.append(commands)
            self._reports.append(reports)
            self._stacks.append(stacks)
        else:
            self._commands[rank], self._reports[rank], self._stacks[rank] = commands, reports, stacks
        try:
            process = self._ctx.Process(target=self._target, args=self._args_of(rank, end), name=f"{self._name}_{rank}")
            process.start()
        finally:
            end.close()  # the worker's ends belong to the worker alone
        try:
            watched: psutil.Process | None = psutil.Process(process.pid)
        except psutil.Error:
            watched = None
        if new:
            self.processes.append(process)
            self._psutil.append(watched)
        else:
            self.processes[rank], self._psutil[rank] = process, watched

    def wait_started(self) -> None:
        """Wait until every worker built its envs (each sends an empty Report); with restarts left, a worker
        that fails meanwhile is replaced until every one is up."""
        self.gather_reports()
        self.restart_down()
        self._starting = False

    def restart_down(self) -> list[int]:
        """Replace every worker that is :attr:`down` with a new process (``args_of`` gives its arguments) and
        wait until each has built its envs; returns their ranks. A replacement that fails meanwhile uses
        another restart, and past the budget raises as any fault does."""
        restarted: list[int] = []
        while self.down:
            ranks = sorted(self.down)
            self.down.clear()
            for rank in ranks:
                self._retire(rank)
                self._start_one(rank)
            restarted += [r for r in ranks if r not in restarted]
            self._round, self._round_started, self._starting, self._warned = None, time.monotonic(), True, False
            self.gather_reports(ranks)
        self._starting = False
        return restarted

    def _retire(self, rank: int) -> None:
        """Let go of a down worker's process and pipes, and clear its error slot for its replacement."""
        process = self.processes[rank]
        process.join(KILL_WAIT_S)
        if process.exitcode is None:
            _log.error(
                "Sampler worker %s (pid %s) is still running after SIGKILL; replacing it.", process.name, process.pid
            )
        self._retired.append(process)  # joined and closed by stop(), with the others
        for conn in (self._commands[rank], self._reports[rank], self._stacks[rank]):
            conn.close()
        self.errors.clear(rank)
        self._actions_sent[rank] = self._observations_seen[rank] = 0

    # ---- rounds ----

    def send(self, command: Command, ranks: Sequence[int] | None = None) -> None:
        """Open a round: ``command`` to every worker (or ``ranks``)."""
        self._round, self._round_started, self._warned, self._starting = command, time.monotonic(), False, False
        message = command.encode()
        for rank in self._ranks(ranks):
            if rank in self.down:
                continue
            try:
                self._commands[rank].send_bytes(message)
            except OSError:  # that worker is gone; the next gather reports it
                pass

    def send_actions(self, ranks: Sequence[int] | None = None) -> None:
        """Served rounds: tell workers their actions are in the step buffer."""
        for rank in self._ranks(ranks):
            if rank in self.down:
                continue
            try:
                self._commands[rank].send_bytes(encode_actions_ready(self._actions_sent[rank]))
            except OSError:
                pass
            self._actions_sent[rank] += 1

    def gather_reports(self, ranks: Sequence[int] | None = None) -> list[Report]:
        """Each worker's :class:`Report` for this round, in rank order (an empty one for a worker down)."""
        ranks = self._ranks(ranks)
        got = self._gather(ranks, (_REPORT,))
        return [got[rank][1] if rank in got else Report() for rank in ranks]

    def gather_observations(self, ranks: Sequence[int] | None = None) -> None:
        """Served rounds: wait until ``ranks`` have written their observations into the step buffer."""
        self._gather(self._ranks(ranks), (_OBSERVATIONS,))

    def gather_step_or_report(self, ranks: Sequence[int]) -> dict[int, Report | None]:
        """Served evaluation: each of ``ranks`` either signals observations (None) or ends with its Report
        (an empty one for a worker down)."""
        got = self._gather(list(ranks), (_OBSERVATIONS, _REPORT))
        return {
            rank: (got[rank][1] if got[rank][0] == _REPORT else None) if rank in got else Report() for rank in ranks
        }

    def _ranks(self, ranks: Sequence[int] | None) -> list[int]:
        return list(range(len(self.labels))) if ranks is None else list(ranks)

    def _gather(self, ranks: list[int], expected: tuple[bytes, ...]) -> dict[int, tuple[bytes, Any]]:
        got: dict[int, tuple[bytes, Any]] = {}
        waiting = {self._reports[r]: r for r in ranks if r not in self.down}
        closed: set[Connection] = set()  # pipes of workers on their way out; their sentinels say more
        stopped_since: dict[int, float] = {}
        last_look = next_status = time.monotonic()
        next_look = last_look + MASTER_POLL_S
        while waiting:
            # Only processes still owing this round: one that delivered and then ended would stay ready.
            handles = [c for c in waiting if c not in closed] + [self.processes[r].sentinel for r in waiting.values()]
            ready = wait_for_ready(handles, timeout=MASTER_POLL_S)
            normal = bool(ready)
            for handle in ready:
                conn = cast(Connection, handle)
                rank = waiting.get(conn)
                if rank is None:  # a process sentinel: that worker ended
                    normal = False
                    continue
                try:
                    tag, value = decode(conn.recv_bytes())
                except EOFError:  # it closed its pipe by exiting
                    closed.add(conn)
                    normal = False
                    continue
                if tag == _FAILED:
                    normal = False
                    continue
                if tag not in expected:
                    self._raise_desync(rank, tag, value, expected)
                if tag == _OBSERVATIONS:
                    self._check_count(rank, value)
                got[rank] = (tag, value)
                del waiting[conn]
            if normal and not waiting:
                break
            now = time.monotonic()
            if normal and now < next_look:  # woken by arrivals alone: nothing else to look at yet
                continue
            if now - last_look > 1.0:  # this process itself did not run (stopped, suspended): not the workers' time
                self._round_started += now - last_look
                stopped_since.clear()
            last_look, next_look = now, now + MASTER_POLL_S
            owing = list(waiting.values())
            self._check_failed(owing)
            if now >= next_status:
                next_status = now + STATUS_EVERY_S
                self._check_stopped([r for r in owing if r not in self.down], stopped_since, now)
            self._check_time([r for r in owing if r not in self.down], now)
            if self.down:  # faults turned into restarts: those workers owe nothing more this round
                waiting = {conn: r for conn, r in waiting.items() if r not in self.down}
        return got

    # ---- what can go wrong ----

    def _error(self, rank: int, detail: str, evaluation: bool = False) -> SamplerWorkerError:
        label = self.labels[rank]
        return SamplerWorkerError(rank, label.env_ranks, detail, label.eval_env_ranks, evaluation)

    @property
    def _evaluating(self) -> bool:
        return self._round is not None and self._round.kind is CommandKind.EVALUATE

    def _check_failed(self, ranks: list[int]) -> None:
        for rank in self.errors.reported():
            if rank in self.down:
                continue
            during = " during evaluation" if self._evaluating else ""
            text = self.errors.get(rank) or ""
            self._fault(self._error(rank, f"raised an error{during}:\n{text}", self._evaluating), last_line(text))
        for rank in ranks:
            if rank in self.down:
                continue
            code = self.processes[rank].exitcode
            if code is None:
                continue
            if code == MAIN_GUARD_EXIT_CODE and self._starting:
                raise self._error(
                    rank, f"stopped during its start-up: {missing_guard_message(self._ctx.get_start_method())}"
                )
            if code < 0:
                why = (
                    "A signal ended it before it could report anything: the kernel's out-of-memory killer, a "
                    "user, or a crash in native code (an env's simulator, a library)."
                )
            else:
                why = (
                    "It ended before reporting an error; its own output above may say why (under spawn or "
                    "forkserver, often an argument the child could not unpickle or import, or a main script "
                    'without `if __name__ == "__main__":` around its training code).'
                )
            what = f"stopped unexpectedly with {describe_exitcode(code)}"
            self._fault(self._error(rank, f"{what}. {why}"), what)

    def _check_stopped(self, ranks: list[int], stopped_since: dict[int, float], now: float) -> None:
        for rank in ranks:
            if not self._is_stopped(rank):
                stopped_since.pop(rank, None)
                continue
            since = stopped_since.setdefault(rank, now)
            if now - since >= STOPPED_LIMIT_S:
                pid = self.processes[rank].pid
                error = self._error(
                    rank,
                    f"is stopped (process {pid}: SIGSTOP, Ctrl-Z on it alone, or a debugger) and has not run for "
                    f"{now - since:.1f} s, so the batch cannot finish. Resume it with `kill -CONT {pid}` before it "
                    "is reported, or do not stop sampler workers.",
                )
                self._fault(error, f"stopped (SIGSTOP or a debugger) for {now - since:.1f} s")

    def _is_stopped(self, rank: int) -> bool:
        process = self._psutil[rank]
        if process is None:  # never seen
            return False
        try:
            status = process.status()
        except psutil.Error:  # gone
            return False
        return status in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP)

    def _check_time(self, ranks: list[int], now: float) -> None:
        if self.timeout is None or not ranks:
            return
        elapsed = now - self._round_started
        what = self._describe_round()
        if not self._warned and elapsed > self.timeout / 2:
            self._warned = True
            for rank in ranks:
                _log.warning(
                    "Sampler worker %d (env ranks %s) has been busy with %s for %.0f s (worker_timeout=%.0f s); "
                    "it is at:\n%s",
                    rank,
                    list(self.labels[rank].env_ranks),
                    what,
                    elapsed,
                    self.timeout,
                    self.stack_of(rank),
                )
        if elapsed > self.timeout:
            for rank in ranks:  # every worker still owing is stuck; each is a fault of its own
                stack = self.stack_of(rank)
                error = self._error(
                    rank,
                    f"did not finish {what} within worker_timeout={self.timeout:g} s; it is stuck at:\n"
                    f"{stack}\nIf its envs are this slow, raise the sampler's worker_timeout "
                    "(None waits for ever).",
                    self._evaluating,
                )
                self._fault(error, f"stuck in {what} past worker_timeout={self.timeout:g} s{_innermost_frame(stack)}")

    def _fault(self, error: SamplerWorkerError, cause: str) -> None:
        """Raise ``error``, or, with a restart left, kill its worker and mark it down instead."""
        if self.restarts is None or not self.restarts.allows():
            raise error if self.restarts is None else self.restarts.final_error(error)
        self.restarts.record(error, self._describe_during(), cause)
        self.down[error.rank] = error
        process = self.processes[error.rank]
        if process.exitcode is None:
            process.kill()  # also ends a stopped process, and one stuck in native code
        # The others get a fresh deadline: the time this round lost was the faulty worker's.
        self._round_started, self._warned = time.monotonic(), False

    def _describe_during(self) -> str:
        if self._starting:
            return "start-up"
        if self._round is None:
            return "quitting"
        return f"{'evaluation' if self._evaluating else 'batch'} {self._round.itr}"

    def _describe_round(self) -> str:
        if self._starting:
            return "its start-up (building and decorrelating its envs)"
        if self._round is None or self._round.kind is CommandKind.QUIT:
            return "quitting"
        return f"{'evaluation' if self._evaluating else 'a batch'} at itr {self._round.itr}"

    def _check_count(self, rank: int, count: int) -> None:
        expected = self._observations_seen[rank]
        if count != expected:
            raise self._error(
                rank,
                f"sent observations-ready signal #{count} where #{expected} was due: a step signal was "
                f"{'lost' if count > expected else 'doubled'}. Its collector must signal once per time step "
                "and once after the last one.",
            )
        self._observations_seen[rank] = expected + 1

    def _raise_desync(self, rank: int, tag: bytes, value: Any, expected: tuple[bytes, ...]) -> None:
        wanted = " or ".join(describe_message(e, "n") for e in expected)
        if tag == _REPORT and expected == (_OBSERVATIONS,):
            hint = "It finished its round early: its collector signalled fewer steps than the batch has."
        elif tag == _OBSERVATIONS and expected == (_REPORT,):
            hint = "Its collector signalled more steps than the batch has."
        else:
            hint = "Its collector does not follow the sampler's step protocol."
        raise self._error(rank, f"sent {describe_message(tag, value)} while the master waited for {wanted}. {hint}")

    def stack_of(self, rank: int) -> str:
        """The worker's Python stacks (most recent call first), or why they could not be had."""
        return request_stack(self.processes[rank].pid, self._stacks[rank])

    # ---- stopping ----

    def stop(self, join_timeout: float = 2.0) -> None:
        """End every worker: QUIT, then SIGTERM, then SIGKILL, each with a deadline; close the pipes.

        Safe at any point (mid-round, after a failure, at interpreter exit) and more than once. Workers
        waiting for a command or for actions quit at once; a busy one after its round, or at SIGTERM.
        """
        if self._stopped:
            return
        self._stopped = True
        self.errors.mark_stopping()  # before any SIGTERM: the workers take it as the master's from here on
        with _ctrl_c_deferred():
            # Only to the workers that were made: a start-up that failed half-way has fewer than its labels.
            self.send(Command(CommandKind.QUIT), ranks=range(len(self._commands)))
            for rank, process in enumerate(self.processes):
                if self._is_stopped(rank):  # it cannot quit, nor handle SIGTERM, until continued
                    process.kill()
            deadline = time.monotonic() + join_timeout
            for p in self.processes:
                p.join(max(0.0, deadline - time.monotonic()))
            for stop, wait_s in (("terminate", 1.0), ("kill", 2.0)):
                left = [p for p in self.processes if p.exitcode is None]
                if not left:
                    break
                _log.warning(
                    "Sampler workers %s did not quit in time; sending %s.", [p.name for p in left], stop.upper()
                )
                for p in left:
                    getattr(p, stop)()
                deadline = time.monotonic() + wait_s
                for p in left:
                    p.join(max(0.0, deadline - time.monotonic()))
            # Replaced earlier (ended long ago, unless SIGKILL could not end them); one whose replacement failed
            # to start is still in self.processes too.
            retired = [p for p in self._retired if p not in self.processes]
            for p in retired:
                p.join(KILL_WAIT_S)
            for p in self.processes + retired:
                if p.exitcode is None:
                    _log.error("Sampler worker %s (pid %s) is still running after SIGKILL.", p.name, p.pid)
                else:
                    p.close()
            for conn in self._commands + self._reports + self._stacks:
                conn.close()


def _innermost_frame(stack: str) -> str:
    """`` at File "...", line N in f``: where a faulthandler dump (most recent call first) says a worker is."""
    for line in stack.splitlines():
        if line.strip().startswith("File "):
            return f" at {line.strip()}"
    return ""


def request_stack(pid: int | None, conn: Connection) -> str:
    """Ask process ``pid`` for its Python stacks (it registered faulthandler on :data:`STACK_SIGNAL` to write
    them into the pipe whose reading end is ``conn``) and return them, or why they could not be had."""
    if pid is None:
        return "(no stack: the process has not started)"
    fd = conn.fileno()
    with contextlib.suppress(OSError):
        while select.select([fd], [], [], 0)[0]:  # drop an earlier, unread dump
            if not os.read(fd, 65536):
                break
    try:
        os.kill(pid, STACK_SIGNAL)
    except (OSError, ValueError) as e:
        return f"(no stack: {e})"
    chunks: list[bytes] = []
    deadline = time.monotonic() + STACK_WAIT_S
    while time.monotonic() < deadline:
        wait = 0.1 if chunks else max(0.0, deadline - time.monotonic())
        if not select.select([fd], [], [], wait)[0]:
            if chunks:
                break
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    if not chunks:
        return "(no stack: the process did not answer within 1 s; it may be stuck in native code with signals blocked)"
    return b"".join(chunks).decode("utf-8", "replace").rstrip()


@contextlib.contextmanager
def _ctrl_c_deferred() -> Iterator[None]:
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
