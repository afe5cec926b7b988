"""The writer-preferring RWLock across real processes: no torn reads, a writer never starved, bounded waits."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time

import numpy as np
import pytest
from lock_workers import hold_write_and_die, reader, writer

from rlrun.utils.shared_memory import np_mp_array
from rlrun.utils.synchronize import LockTimeoutError, RWLock


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_readers_never_see_a_half_written_array_and_the_writer_is_never_starved(start_method, leak_check):
    ctx = mp.get_context(start_method)
    lock = RWLock(timeout=30, ctx=ctx)
    data = np_mp_array(40_000, np.int64)
    n_readers, n_writes = 3, 30
    reads = np_mp_array((n_readers, 2), np.int64)
    writes = np_mp_array(2, np.float64)
    stop = np_mp_array(1, np.int64)
    # Each read holds the lock 5 ms and three readers overlap: with rlpyt's reader-preferring lock
    # the read side is never free, and the writer waits until the readers stop.
    readers = [ctx.Process(target=reader, args=(lock, data, stop, reads, i, 0.005)) for i in range(n_readers)]
    for p in readers:
        p.start()
    deadline = time.monotonic() + 30
    while reads[:, 0].min() < 5 and time.monotonic() < deadline:  # every reader is busy reading
        time.sleep(0.01)
    w = ctx.Process(target=writer, args=(lock, data, n_writes, writes, 0.004))
    w.start()
    w.join(60)
    stop[0] = 1
    for p in readers:
        p.join(10)
    assert w.exitcode == 0 and all(p.exitcode == 0 for p in readers)
    assert writes[1] == n_writes
    assert reads[:, 1].sum() == 0, f"torn reads: {reads[:, 1]}"
    assert reads[:, 0].min() > 0
    # A writer waits for the reads in progress (5 ms each), never for a stream of new ones.
    assert writes[0] < 1.0, f"the writer waited {writes[0]:.3f} s for the lock"


def test_an_acquire_times_out_when_the_holder_was_killed(leak_check):
    lock = RWLock(timeout=30)
    ready = np_mp_array(1, np.int64)
    p = mp.get_context("fork").Process(target=hold_write_and_die, args=(lock, ready))
    p.start()
    while not ready[0]:
        time.sleep(0.01)
    os.kill(p.pid, signal.SIGKILL)
    p.join(5)
    start = time.monotonic()
    with pytest.raises(LockTimeoutError, match="writer inside: pid"):
        lock.acquire_read(timeout=0.5)
    with pytest.raises(LockTimeoutError, match="write side"):
        with lock.write_lock(timeout=0.3):
            pass
    assert time.monotonic() - start < 2.0


def test_readers_share_and_a_writer_excludes(leak_check):
    lock = RWLock(timeout=5)
    lock.acquire_read()
    lock.acquire_read(timeout=0.1)  # a second reader enters at once
    assert lock.readers == 2
    with pytest.raises(LockTimeoutError):
        lock.acquire_write(timeout=0.2)
    assert lock.writers_waiting == 0  # a writer that gave up no longer blocks readers
    lock.release_read()
    lock.release_read()
    with lock.write_lock:
        assert lock.writing
        with pytest.raises(LockTimeoutError):
            lock.acquire_read(timeout=0.1)
    with lock:
        assert lock.readers == 1
    with pytest.raises(RuntimeError, match="without a reader"):
        lock.release_read()
    with pytest.raises(ValueError, match="timeout"):
        RWLock(timeout=0)
