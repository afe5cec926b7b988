"""A reader-writer lock for processes that prefers the writer, with every wait bounded.

Asynchronous runs share one replay between copier processes, which append sampled batches, and the
optimiser, which draws training batches; and one set of model weights between the optimiser, which
publishes, and the sampler, which copies. Readers may overlap; a writer excludes everyone.

rlpyt's lock let readers in whenever another reader held it, so an optimiser drawing batches back
to back could keep a copier out for as long as it liked. Here a writer that is waiting closes the
door to new readers: it enters as soon as the readers inside leave, so it waits at most as long as
the longest read in progress.

Every acquire takes a ``timeout`` (the lock's ``timeout`` by default) and raises
:class:`LockTimeoutError` instead of waiting for ever, e.g. when a process died while holding the lock.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.context import BaseContext

__all__ = ["RWLock", "LockTimeoutError", "DEFAULT_LOCK_TIMEOUT_S", "lock_context"]

DEFAULT_LOCK_TIMEOUT_S = 60.0
_WAIT_SLICE_S = 0.05  # how long one wait on the condition lasts before the deadline is looked at again


_contexts: list[BaseContext] = []  # innermost lock_context() last


@contextmanager
def lock_context(ctx: BaseContext) -> Iterator[None]:
    """Locks built inside this block without a ``ctx`` use ``ctx``'s primitives: a runner that knows how
    it will start its processes says so here, before the agent and the replay build their locks."""
    _contexts.append(ctx)
    try:
        yield
    finally:
        _contexts.pop()


class LockTimeoutError(TimeoutError):
    """An acquire of an :class:`RWLock` outlasted its timeout."""


class _Side:
    """``with rw_lock.write_lock:`` / ``with rw_lock.read_lock:`` (rlpyt's spelling) with the default timeout;
    call it to give another: ``with rw_lock.write_lock(timeout=5):``."""

    def __init__(self, lock: RWLock, write: bool) -> None:
        self._lock = lock
        self._write = write

    def __enter__(self) -> None:
        self._lock._acquire(self._write, None)

    def __exit__(self, *exc: object) -> None:
        self._lock._release(self._write)

    @contextmanager
    def __call__(self, timeout: float | None = None) -> Iterator[None]:
        self._lock._acquire(self._write, timeout)
        try:
            yield
        finally:
            self._lock._release(self._write)


class RWLock:
    """Many readers or one writer, across processes; a waiting writer goes before new readers.

    Build it before the processes that use it start (it travels in their arguments, or by fork).
    ``with lock:`` or ``with lock.read_lock:`` reads, ``with lock.write_lock:`` writes (rlpyt's
    spellings); ``acquire_read`` / ``acquire_write`` take a ``timeout`` in seconds.

    ``ctx`` is the multiprocessing context whose primitives it uses: the one a surrounding
    :func:`lock_context` names, else spawn's, which serves children of every start method. Spawn's
    semaphores have names in /dev/shm while the lock exists, which multiprocessing removes when the lock
    is collected or the process exits (its resource tracker, also after a crash); a fork context's are
    nameless but cannot reach spawned children.
    """

    def __init__(self, timeout: float = DEFAULT_LOCK_TIMEOUT_S, ctx: BaseContext | None = None) -> None:
        if not timeout > 0:
            raise ValueError(f"RWLock timeout must be a positive number of seconds, got {timeout!r}.")
        ctx = ctx or (_contexts[-1] if _contexts else mp.get_context("spawn"))
        self.timeout = float(timeout)
        self._condition = ctx.Condition(ctx.Lock())
        # [readers inside, writers waiting, writer inside (0/1), pid of the writer inside]
        self._state = ctx.RawArray(ctypes.c_int64, 4)
        self.read_lock = _Side(self, write=False)
        self.write_lock = _Side(self, write=True)

    # rlpyt's names
    def __enter__(self) -> None:
        self._acquire(False, None)

    def __exit__(self, *exc: object) -> None:
        self._release(False)

    def acquire_read(self, timeout: float | None = None) -> None:
        self._acquire(False, timeout)

    def release_read(self) -> None:
        self._release(False)

    def acquire_write(self, timeout: float | None = None) -> None:
        self._acquire(True, timeout)

    def release_write(self) -> None:
        self._release(True)

    @property
    def readers(self) -> int:
        """Readers inside now (for tests and error messages)."""
        return int(self._state[0])

    @property
    def writers_waiting(self) -> int:
        return int(self._state[1])

    @property
    def writing(self) -> bool:
        return bool(self._state[2])

    # ---- inside ----

    def _acquire(self, write: bool, timeout: float | None) -> None:
        timeout = self.timeout if timeout is None else float(timeout)
        deadline = time.monotonic() + timeout
        state = self._condition
        if not state.acquire(timeout=timeout):
            raise self._timed_out(write, timeout, "its internal mutex")
        try:
            s = self._state
            if write:
                s[1] += 1
                try:
                    while s[2] or s[0]:
                        self._wait(deadline, write, timeout)
                finally:
                    s[1] -= 1
                s[2] = 1
                s[3] = os.getpid()
            else:
                while s[2] or s[1]:  # a waiting writer goes first
                    self._wait(deadline, write, timeout)
                s[0] += 1
        finally:
            state.release()

    def _wait(self, deadline: float, write: bool, timeout: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise self._timed_out(write, timeout, None)
        self._condition.wait(min(left, _WAIT_SLICE_S))

    def _release(self, write: bool) -> None:
        with self._condition:
            s = self._state
            if write:
                if not s[2]:
                    raise RuntimeError("release_write() without a writer inside the RWLock.")
                s[2] = 0
                s[3] = 0
            else:
                if s[0] <= 0:
                    raise RuntimeError("release_read() without a reader inside the RWLock.")
                s[0] -= 1
            if not s[0]:
                self._condition.notify_all()

    def _timed_out(self, write: bool, timeout: float, what: str | None) -> LockTimeoutError:
        side = "write" if write else "read"
        s = self._state
        held = f"{s[0]} reader(s) inside, writer inside: {'pid ' + str(s[3]) if s[2] else 'none'}, {s[1]} writer(s) waiting"
        if what is not None:
            held = f"could not get {what}"
        return LockTimeoutError(
            f"Waited {timeout:g} s for the {side} side of a shared RWLock ({held}). A process that holds it "
            "is stuck or died while holding it; the run's other errors say which."
        )
