"""What the sampler master and its workers say to each other, and the worker's end of the line.

Each worker has three one-way pipes to the master::

    commands  master -> worker   Command(kind, itr); in served rounds also "actions ready #n"
    reports   worker -> master   Report(traj_infos, n_unfinished) per round; in served rounds also
                                 "observations ready #n"; FAILED after writing its error slot
    stacks    worker -> master   the worker's Python stacks as text, dumped by faulthandler on SIGUSR1

One round::

    master: send Command(COLLECT | EVALUATE, itr)  ->  worker: run the collector
    (served rounds: per time step, worker "observations ready #n" -> master acts -> "actions ready #n")
    master: gather one Report from each worker     <-  worker: send Report

Shared memory holds only the samples batch, the step buffers of served samplers and the error slots
(:class:`WorkerErrors`), where a failing worker leaves its traceback before it exits. Pipes leave
nothing in /dev/shm, and a worker that dies mid-message shows as end-of-file, never as a blocked
read. Step signals carry a running count, so a lost or doubled one is an error, never a silent
desync. The master's side, which waits on all of this with a deadline, is
:class:`~rlrun.samplers.parallel.pool.WorkerPool`.
"""

from __future__ import annotations

import ctypes
import enum
import faulthandler
import os
import pickle
import signal
import struct
import sys
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, Pipe
from typing import Any

from rlrun.envs.traj_info import TrajInfo

__all__ = [
    "CommandKind",
    "Command",
    "Report",
    "SamplerWorkerError",
    "WorkerErrors",
    "WorkerEnd",
    "WorkerQuit",
    "ParentWatch",
    "die_with_parent",
    "describe_exitcode",
    "STACK_SIGNAL",
]

WORKER_POLL_S = 0.25  # how often a waiting worker looks at its parent
WATCHDOG_S = 0.2  # how often the watchdog thread (where the kernel cannot signal a parent's death) looks
ERROR_TEXT_BYTES = 32_768  # per worker; longer tracebacks keep their start and end
STACK_SIGNAL = signal.SIGUSR1  # asks a worker to write its Python stacks into its stacks pipe

# The first byte of every message says what it is.
_COMMAND, _ACTIONS, _OBSERVATIONS, _REPORT, _FAILED = b"c", b"a", b"o", b"r", b"x"
_COMMAND_FORMAT = struct.Struct("<Bq")
_COUNT_FORMAT = struct.Struct("<q")


class CommandKind(enum.IntEnum):
    COLLECT = 1  # fill this worker's columns of the batch
    EVALUATE = 2  # run its evaluation episodes
    QUIT = 3


@dataclass(frozen=True)
class Command:
    """What the master asks of every worker for one round."""

    kind: CommandKind
    itr: int = 0

    def encode(self) -> bytes:
        return _COMMAND + _COMMAND_FORMAT.pack(self.kind, self.itr)


@dataclass
class Report:
    """What a worker sends at the end of a round: the trajectories it completed, and (evaluation) how
    many episodes ``eval_max_steps`` cut short."""

    traj_infos: list[TrajInfo] = field(default_factory=list)
    n_unfinished: int = 0

    def encode(self) -> bytes:
        return _REPORT + pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)


def decode(message: bytes) -> tuple[bytes, Any]:
    """``(tag, value)``: a Command, a Report, a step count, or None (FAILED)."""
    tag = message[:1]
    if tag == _COMMAND:
        kind, itr = _COMMAND_FORMAT.unpack_from(message, 1)
        return tag, Command(CommandKind(kind), itr)
    if tag in (_ACTIONS, _OBSERVATIONS):
        return tag, _COUNT_FORMAT.unpack_from(message, 1)[0]
    if tag == _REPORT:
        return tag, pickle.loads(message[1:])
    return tag, None


def describe_message(tag: bytes, value: object) -> str:
    return {
        _COMMAND: f"command {value}",
        _ACTIONS: f"actions-ready signal #{value}",
        _OBSERVATIONS: f"observations-ready signal #{value}",
        _REPORT: "its end-of-round report",
        _FAILED: "an error",
    }.get(tag, f"an unknown message {tag!r}")


class SamplerWorkerError(RuntimeError):
    """A sampler worker raised, died, stopped or got stuck; ``rank``, ``env_ranks`` and ``detail`` say
    which and why.

    ``eval_env_ranks`` are the worker's evaluation envs, if it has any. ``evaluation`` is True when the
    worker reported its error while running an evaluation round. A worker that died without a word may
    have died at any time since the last round, so its error does not claim a kind of round.
    """

    def __init__(
        self,
        rank: int,
        env_ranks: list[int] | tuple[int, ...],
        detail: str,
        eval_env_ranks: list[int] | tuple[int, ...] | None = None,
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

    def __reduce__(self) -> tuple[type[SamplerWorkerError], tuple[int, list[int], str, list[int], bool]]:
        return type(self), (self.rank, self.env_ranks, self.detail, self.eval_env_ranks, self.evaluation)


class WorkerErrors:
    """One shared-memory slot per worker for the traceback that stopped it, and the master's stop flag.

    The text is in place before the worker exits, so the master never waits for a message in flight,
    and a worker found dead has either reported or died without a word (a signal). The flag is set
    once the master starts stopping its workers: a SIGTERM before that is not the master's (see
    :func:`~rlrun.samplers.parallel.worker.sampling_process`).
    """

    # ctx: a multiprocessing context, typed Any: typeshed's ctypes arrays of c_char take no bytes slices.
    def __init__(self, ctx: Any, n_workers: int, capacity: int = ERROR_TEXT_BYTES) -> None:
        self.capacity = capacity
        self._lengths = ctx.RawArray(ctypes.c_int64, n_workers)
        self._text = ctx.RawArray(ctypes.c_char, n_workers * capacity)
        self._stopping = ctx.RawValue(ctypes.c_int8, 0)

    @property
    def stopping(self) -> bool:
        """True once the master has begun to stop the workers."""
        return bool(self._stopping.value)

    def mark_stopping(self) -> None:
        """Master: from now on a SIGTERM to a worker comes from this master (or with its consent)."""
        self._stopping.value = 1

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
        data: bytes = self._text[start : start + n]
        return data.decode("utf-8", "replace")

    def reported(self) -> list[int]:
        """The ranks whose slot holds an error, lowest first."""
        return [rank for rank, n in enumerate(self._lengths) if n]

    def clear(self, rank: int) -> None:
        """Master: empty ``rank``'s slot, for the worker that replaces the one that failed."""
        self._lengths[rank] = 0

    def first(self) -> int | None:
        """The lowest rank that reported, or None."""
        for rank, n in enumerate(self._lengths):
            if n:
                return rank
        return None


class WorkerQuit(BaseException):
    """Raised inside a worker that was told to quit mid-round (a BaseException, so that collectors'
    ``except Exception`` blocks do not swallow it)."""


class WorkerEnd:
    """A worker's ends of its pipes: commands in, reports and step signals out, stacks out.

    :meth:`create` makes the pipes and returns ``(worker_end, master_ends)``; the master closes its
    copy of the worker's ends once the worker started, so that only the worker holds them.
    """

    def __init__(self, commands: Connection, reports: Connection, stacks: Connection) -> None:
        self._commands = commands
        self._reports = reports
        self._stacks = stacks
        self._sent = 0  # observations-ready signals sent
        self._received = 0  # actions-ready signals received
        self.quit_seen = False

    @classmethod
    def create(cls) -> tuple[WorkerEnd, tuple[Connection, Connection, Connection]]:
        commands_r, commands_w = Pipe(duplex=False)
        reports_r, reports_w = Pipe(duplex=False)
        stacks_r, stacks_w = Pipe(duplex=False)
        return cls(commands_r, reports_w, stacks_w), (commands_w, reports_r, stacks_r)

    def enable_stack_dumps(self) -> None:
        """Let the master ask for this process's Python stacks (:data:`STACK_SIGNAL`), even while it is
        stuck in a loop or a C call; faulthandler writes them from its signal handler."""
        faulthandler.register(STACK_SIGNAL, file=self._stacks, all_threads=True, chain=False)

    def next_command(self, parent: ParentWatch) -> Command:
        """Wait for the master's next command; QUIT if the master is gone."""
        while True:
            tag, value = self._receive(parent)
            if isinstance(value, Command):  # the tag _COMMAND: once per round
                return value
            raise RuntimeError(f"The sampler master sent {describe_message(tag, value)} between rounds.")

    def quit_requested(self) -> bool:
        """True once the master has asked this worker to quit (checked without waiting)."""
        if not self.quit_seen and self._commands.poll(0):
            tag, value = decode(self._commands.recv_bytes())
            self.quit_seen = tag == _COMMAND and value.kind is CommandKind.QUIT
            if not self.quit_seen:
                raise RuntimeError(f"The sampler master sent {describe_message(tag, value)} during a round.")
        return self.quit_seen

    def report(self, report: Report) -> None:
        self._reports.send_bytes(report.encode())

    def failed(self) -> None:
        """Wake the master now (the error is in the worker's slot)."""
        self._reports.send_bytes(_FAILED)

    # Step signals of served rounds (GPU samplers), rlpyt's ``obs_ready.release()`` / ``act_ready.acquire()``.

    def observations_ready(self) -> None:
        self._reports.send_bytes(_OBSERVATIONS + _COUNT_FORMAT.pack(self._sent))
        self._sent += 1

    def wait_actions(self, parent: ParentWatch) -> None:
        """Block until the master has written this worker's actions; raises :class:`WorkerQuit` if it
        asks to quit instead, or if it is gone."""
        tag, value = self._receive(parent)
        if tag == _COMMAND and value.kind is CommandKind.QUIT:
            self.quit_seen = True
            raise WorkerQuit
        if tag != _ACTIONS or value != self._received:
            raise RuntimeError(
                f"Step signals out of step: this worker expected actions-ready signal #{self._received}, and "
                f"the master sent {describe_message(tag, value)}."
            )
        self._received += 1

    def _receive(self, parent: ParentWatch) -> tuple[bytes, Any]:
        while not self._commands.poll(WORKER_POLL_S):
            if not parent.alive():
                return _COMMAND, Command(CommandKind.QUIT)
        tag, value = decode(self._commands.recv_bytes())
        if tag == _COMMAND and value.kind is CommandKind.QUIT:
            self.quit_seen = True
        return tag, value

    def close(self) -> None:
        for conn in (self._commands, self._reports, self._stacks):
            conn.close()


def encode_actions_ready(count: int) -> bytes:
    return _ACTIONS + _COUNT_FORMAT.pack(count)


class ParentWatch:
    """Worker side: notices that the process that started this one is gone (its parent pid changes).

    Under forkserver the parent is the fork server, which exits when the master does.
    """

    def __init__(self) -> None:
        self._ppid = os.getppid()

    def alive(self) -> bool:
        return self._ppid != 1 and os.getppid() == self._ppid


def die_with_parent(use_kernel: bool = True) -> str:
    """End this process when its parent dies, even while it is busy in ``env.step``; returns how.

    Linux: the kernel sends SIGKILL when the parent dies (``prctl(PR_SET_PDEATHSIG)``), at once. The
    kernel ties that signal to the thread that started this process: start samplers from a thread that
    lives as long as the run. Elsewhere (or with ``use_kernel=False``), a daemon thread looks at the
    parent pid every :data:`WATCHDOG_S` seconds and kills this process once it changed.
    """
    if use_kernel and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1
            if libc.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0) == 0:
                if os.getppid() == 1:  # the parent died before the request: too late for the kernel
                    os.kill(os.getpid(), signal.SIGKILL)
                return "kernel"
        except (OSError, AttributeError):
            pass
    parent = ParentWatch()

    def watch() -> None:
        while parent.alive():
            time.sleep(WATCHDOG_S)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="rlrun-parent-watchdog", daemon=True).start()
    return "watchdog"


def describe_exitcode(code: int) -> str:
    """``exit code 1`` or ``signal SIGKILL (exit code -9)``."""
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name} (exit code {code})"
        except ValueError:
            return f"signal {-code} (exit code {code})"
    return f"exit code {code}"
