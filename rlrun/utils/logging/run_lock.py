"""One writer per run folder: the lock a run holds on its folder while it logs there.

Two processes writing one run folder interleave their ``progress.csv`` rows and overwrite each other's
checkpoints, and nothing in the files says so afterwards. It happens easily: a second ``rlrun train
--resume`` of a run that still goes on, or two job queues that each take the same unfinished run. So
:func:`~rlrun.utils.logging.context.logger_context` takes this lock before it writes anything, and the
second writer is refused with the first one's process id.

The lock is a ``flock`` on ``<run folder>/.run.lock``: the kernel drops it when its holder exits, however
it exits (SIGKILL, out of memory), so a lock is never stale and a resume after a crash just takes it.
Processes forked by the holder (parallel samplers' workers) close their copy at once, so a worker that
outlives a killed master does not keep the folder locked.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import time

import psutil

__all__ = ["RunFolderBusyError", "RunLock", "LOCK_FILE"]

LOCK_FILE = ".run.lock"

# How long to wait for a holder that is exiting (its file closes as it dies) before refusing the folder.
WAIT_S = 3.0
POLL_S = 0.05

_held: set[RunLock] = set()  # the locks this process holds, closed in its forked children


class RunFolderBusyError(RuntimeError):
    """Another live process holds the run folder: it is logging a run there."""


class RunLock:
    """An exclusive hold on one run folder for this process; :meth:`release` (or the process's end) drops it."""

    def __init__(self, run_dir: str, wait_s: float = WAIT_S) -> None:
        self.path = os.path.join(run_dir, LOCK_FILE)
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = self._read_holder()
                    os.close(self._fd)
                    self._fd = None
                    raise RunFolderBusyError(_busy_message(run_dir, holder)) from None
                time.sleep(POLL_S)
        stamp = f"pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%Y-%m-%d %H:%M:%S')}\n"
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, stamp.encode(), 0)
        _held.add(self)

    def _read_holder(self) -> str:
        assert self._fd is not None
        with contextlib.suppress(OSError):
            return os.pread(self._fd, 4096, 0).decode(errors="replace").strip()
        return ""

    def release(self) -> None:
        """Drop the lock. The file stays: removing it would let a third process lock a new file while a
        second one waits on the old one."""
        _held.discard(self)
        self._close()

    def _close(self) -> None:
        """Close the descriptor. In a forked child that only drops the child's copy: the parent keeps the lock."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def _busy_message(run_dir: str, holder: str) -> str:
    who = holder or "another process"
    pid = _pid_of(holder)
    if pid is not None and psutil.pid_exists(pid):
        with contextlib.suppress(psutil.Error):
            who += f" ({' '.join(psutil.Process(pid).cmdline())[:200]})"
    return (
        f"The run folder {run_dir} is in use: {who} is logging a run there. Two processes writing one run "
        "folder interleave their progress.csv rows and overwrite each other's checkpoints. Wait for that "
        "run to end or stop it (Ctrl-C or SIGTERM checkpoints it, and a later --resume continues it), or "
        "give this run another log_dir or run_ID."
    )


def _pid_of(holder: str) -> int | None:
    parts = holder.split()
    if len(parts) >= 2 and parts[0] == "pid" and parts[1].isdigit():
        return int(parts[1])
    return None


def _close_in_child() -> None:
    for lock in _held:
        lock._close()
    _held.clear()


os.register_at_fork(after_in_child=_close_in_child)
