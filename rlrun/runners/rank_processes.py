"""Forked SyncRl ranks on one machine: the master (rank 0) starts ranks 1..N-1, watches and stops them.

Each rank process gets a :class:`RankEnd`: a pipe on which it says hello once started and leaves its
traceback if it fails, a pipe for its Python stacks (written by faulthandler when the master asks with
:data:`STACK_SIGNAL`), and a shared heartbeat slot holding how many iterations it has finished.

The master never waits for a rank without a deadline. How each failure reaches it:

- a rank raises: it writes its traceback, then exits; its sockets close, so the master's next (or
  current) collective fails at once, and :meth:`RankProcesses.failure` finds the traceback;
- a rank dies (SIGKILL, OOM, a crash in native code): the collective fails the same way, and the
  rank's exit code tells the signal;
- a rank is stuck (alive, never reaching the collective): the collective times out after the
  runner's ``collective_timeout``; :meth:`RankProcesses.stuck_error` names the ranks whose heartbeat
  is behind and shows their stacks.
- a rank is stopped (SIGSTOP, Ctrl-Z on it alone, a debugger): a watch thread sees it within
  :data:`STOPPED_LIMIT_S` s and kills it, which ends the collective rank 0 waits in at once, and
  :meth:`RankProcesses.failure` reports the stop, not the kill. rank 0 cannot wait out the
  ``collective_timeout`` (600 s by default) for a process that will never run again.

Ranks die with the master (``PR_SET_PDEATHSIG``), and their sampler workers die with them, so a
killed master leaves nothing behind either.
"""

from __future__ import annotations

import ctypes
import faulthandler
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, Pipe
from multiprocessing.connection import wait as wait_for_ready
from typing import Any

import psutil

from rlrun.samplers.parallel.pool import request_stack
from rlrun.samplers.parallel.protocol import STACK_SIGNAL, describe_exitcode

__all__ = ["RankProcessError", "RankEnd", "RankProcesses", "STACK_SIGNAL"]

POLL_S = 0.05
STOPPED_LIMIT_S = 2.0  # a rank stopped this long is reported (and killed, to end the collective)
WATCH_S = 0.25  # how often the watch thread looks at the ranks' states
_HELLO, _FAILED = b"h", b"x"


class RankProcessError(RuntimeError):
    """A SyncRl rank raised, died or got stuck; ``rank`` says which and ``detail`` how (a traceback,
    an exit code or a stack)."""

    def __init__(self, rank: int, detail: str) -> None:
        self.rank = int(rank)
        self.detail = detail
        super().__init__(f"SyncRl rank {self.rank} {detail}")

    def __reduce__(self) -> tuple[type[RankProcessError], tuple[int, str]]:
        return type(self), (self.rank, self.detail)


@dataclass
class RankEnd:
    """A rank process's side: hello and failure reports, stack dumps, its heartbeat slot."""

    rank: int
    reports: Connection
    stacks: Connection
    heartbeat: Any  # a shared int64 array, one slot per rank

    def hello(self) -> None:
        self.reports.send_bytes(_HELLO)

    def failed(self, text: str) -> None:
        """Leave the traceback for the master; call before exiting, so it arrives before the sockets close."""
        self.reports.send_bytes(_FAILED + f"{time.time():.6f}\n".encode() + text.encode("utf-8", "replace"))

    def iteration_done(self, itr: int) -> None:
        self.heartbeat[self.rank] = itr + 1

    def enable_stack_dumps(self) -> None:
        faulthandler.register(STACK_SIGNAL, file=self.stacks, all_threads=True, chain=False)

    def close(self) -> None:
        self.reports.close()
        self.stacks.close()


@dataclass
class _Report:
    rank: int
    at: float  # when the rank wrote it (wall clock, same machine)
    text: str


class RankProcesses:
    """Ranks ``1..world_size-1`` as processes of ``ctx`` (a multiprocessing context: fork or spawn)."""

    def __init__(
        self, ctx: Any, world_size: int
    ) -> None:  # a multiprocessing context: typeshed's BaseContext lacks Process
        self.world_size = world_size
        self._ctx = ctx
        self.heartbeat = ctx.RawArray(ctypes.c_int64, world_size)
        self.processes: dict[int, Any] = {}
        self._reports: dict[int, Connection] = {}
        self._stacks: dict[int, Connection] = {}
        self._hello: set[int] = set()
        self._failures: dict[int, _Report] = {}
        self._stopped = False
        self._stopped_rank: tuple[int, int, float] | None = None  # (rank, pid, seconds stopped), seen by the watch
        self._watch_end = threading.Event()
        self._watch: threading.Thread | None = None

    def start(self, target: Callable[..., None], args_of: Callable[[int, RankEnd], tuple[object, ...]]) -> None:
        """Start one process per rank 1..N-1 running ``target(*args_of(rank, end))``."""
        for rank in range(1, self.world_size):
            reports_r, reports_w = Pipe(duplex=False)
            stacks_r, stacks_w = Pipe(duplex=False)
            end = RankEnd(rank, reports_w, stacks_w, self.heartbeat)
            process = self._ctx.Process(target=target, args=args_of(rank, end), name=f"sync_rl_rank_{rank}")
            self._reports[rank], self._stacks[rank] = reports_r, stacks_r
            try:
                process.start()
            finally:
                end.close()  # the rank's ends belong to the rank alone
            self.processes[rank] = process

    def start_watch(self) -> None:
        """Watch the ranks from a thread: one stopped for :data:`STOPPED_LIMIT_S` s is killed and remembered,
        so that the collective rank 0 waits in fails now and :meth:`failure` says why."""
        handles = {}
        for rank, process in self.processes.items():
            try:
                handles[rank] = psutil.Process(process.pid)
            except psutil.Error:  # already gone: failure() reports its exit code
                continue
        self._watch = threading.Thread(
            target=self._watch_ranks, args=(handles,), name="sync_rl_rank_watch", daemon=True
        )
        self._watch.start()

    def _watch_ranks(self, handles: dict[int, psutil.Process]) -> None:
        stopped_since: dict[int, float] = {}
        while not self._watch_end.wait(WATCH_S):
            now = time.monotonic()
            for rank, handle in handles.items():
                try:
                    stopped = handle.status() in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP)
                except psutil.Error:  # gone
                    stopped = False
                if not stopped:
                    stopped_since.pop(rank, None)
                    continue
                since = stopped_since.setdefault(rank, now)
                if now - since >= STOPPED_LIMIT_S:
                    self._stopped_rank = (rank, handle.pid, now - since)
                    self.processes[rank].kill()  # a stopped process still dies of SIGKILL
                    return

    def wait_started(self, timeout: float) -> None:
        """Wait until every rank process runs (says hello); a rank that fails first is raised."""
        deadline = time.monotonic() + timeout
        while len(self._hello) < len(self.processes):
            self._read_reports(POLL_S)
            error = self.failure()
            if error is not None:
                raise error
            if time.monotonic() > deadline:
                missing = sorted(set(self.processes) - self._hello)
                raise RankProcessError(missing[0], f"did not start within {timeout:g} s (ranks {missing} missing).")

    def _read_reports(self, wait_s: float = 0.0) -> None:
        open_pipes = [c for c in self._reports.values() if not c.closed]
        ready = wait_for_ready(open_pipes, timeout=wait_s) if open_pipes else []
        for rank, conn in self._reports.items():
            if conn not in ready:
                continue
            try:
                message = conn.recv_bytes()
            except (EOFError, OSError):
                conn.close()
                continue
            if message[:1] == _HELLO:
                self._hello.add(rank)
            elif message[:1] == _FAILED:
                stamp, _, text = message[1:].decode("utf-8", "replace").partition("\n")
                self._failures.setdefault(rank, _Report(rank, float(stamp), text))

    def failure(self, wait_s: float = 0.0) -> RankProcessError | None:
        """The failure that came first among the ranks, or None; waits up to ``wait_s`` for one to show.

        A rank that died without a word (a signal) comes before tracebacks: the ranks still running
        then fail in their collectives, and their reports are consequences. Otherwise the earliest
        traceback wins, for the same reason.
        """
        deadline = time.monotonic() + wait_s
        while True:
            if self._stopped_rank is not None:
                rank, pid, seconds = self._stopped_rank
                return RankProcessError(
                    rank,
                    f"was stopped (process {pid}: SIGSTOP, Ctrl-Z on it alone, or a debugger) and did not run for "
                    f"{seconds:.1f} s, so the other ranks could not go on; it was killed to end the run. Do not stop "
                    f"one rank of a SyncRl run (`kill -CONT {pid}` within {STOPPED_LIMIT_S:g} s lets it go on).",
                )
            self._read_reports(0.0)
            for rank, process in self.processes.items():
                code = process.exitcode
                if code is not None and code != 0 and rank not in self._failures:
                    self._read_reports(0.2)  # its report may still be in the pipe
                    if rank not in self._failures:
                        return RankProcessError(rank, f"died with {describe_exitcode(code)} and left no traceback.")
            if self._failures:
                first = min(self._failures.values(), key=lambda r: r.at)
                return RankProcessError(first.rank, f"raised an error:\n{first.text.rstrip()}")
            if time.monotonic() >= deadline:
                return None
            time.sleep(POLL_S)

    def stuck_error(self, itrs_done: int, timeout: float, cause: BaseException) -> RankProcessError | None:
        """After a collective timed out: the ranks behind rank 0 (``itrs_done`` iterations), with their
        stacks; None when every rank process is gone or none is behind."""
        alive = [r for r, p in self.processes.items() if p.exitcode is None]
        behind = [r for r in alive if self.heartbeat[r] < itrs_done] or alive
        if not behind:
            return None
        stacks = "\n".join(f"--- rank {r} ---\n{self.stack_of(r)}" for r in behind)
        return RankProcessError(
            behind[0],
            f"did not reach a collective within collective_timeout={timeout:g} s (ranks {behind} had finished "
            f"{[int(self.heartbeat[r]) for r in behind]} iterations, rank 0 {itrs_done}); "
            f"it is stuck at:\n{stacks}\nThe collective reported: {cause}\nIf an iteration (or rank 0's "
            "evaluation) is this slow, raise SyncRl's collective_timeout.",
        )

    def stack_of(self, rank: int) -> str:
        """The rank's Python stacks, or why they could not be had."""
        return request_stack(self.processes[rank].pid, self._stacks[rank])

    def join(self, timeout: float) -> RankProcessError | None:
        """Wait up to ``timeout`` for every rank to finish; the first failure, or None when all exited 0."""
        deadline = time.monotonic() + timeout
        for rank, process in self.processes.items():
            process.join(max(0.0, deadline - time.monotonic()))
            if process.exitcode is None:
                return RankProcessError(rank, f"did not finish within {timeout:g} s after rank 0 finished training.")
        return self.failure()

    def stop(self, wait_s: float = 5.0) -> None:
        """End every rank process still running; safe more than once.

        SIGKILL at once: a rank ignores SIGINT and SIGTERM (rank 0 decides when to stop), holds nothing
        that outlives it, and its sampler workers die with it.
        """
        if self._stopped:
            return
        self._stopped = True
        self._watch_end.set()
        if self._watch is not None:
            self._watch.join(timeout=2 * WATCH_S)
        left = [p for p in self.processes.values() if p.exitcode is None]
        for p in left:
            p.kill()
        deadline = time.monotonic() + wait_s
        for p in left:
            p.join(max(0.0, deadline - time.monotonic()))
        for conn in [*self._reports.values(), *self._stacks.values()]:
            conn.close()
