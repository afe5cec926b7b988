"""Process targets for the RWLock tests (importable by spawned children; light imports, so they start fast)."""

from __future__ import annotations

import time

N_CHUNKS = 8


def writer(lock, data, n_writes, results, hold_s):
    """Writes 1, 2, ... n_writes into all of ``data``, in chunks with pauses (a half-written array is
    visible to anyone who reads without the lock); ``results[0]`` gets the longest wait for the lock,
    ``results[1]`` the writes done."""
    worst = 0.0
    chunk = len(data) // N_CHUNKS
    for k in range(1, n_writes + 1):
        start = time.monotonic()
        with lock.write_lock:
            worst = max(worst, time.monotonic() - start)
            for c in range(N_CHUNKS):
                data[c * chunk : (c + 1) * chunk] = k
                time.sleep(hold_s / N_CHUNKS)
        results[1] = k
        time.sleep(0.001)
    results[0] = worst


def reader(lock, data, stop, results, index, hold_s):
    """Reads under the read lock until ``stop[0]``, each read held ``hold_s``; counts reads in
    ``results[index, 0]`` and torn (half-written) views in ``results[index, 1]``."""
    while not stop[0]:
        with lock:
            lo, hi = data.min(), data.max()
            time.sleep(hold_s)
            if data.min() != lo or data.max() != hi or lo != hi:
                results[index, 1] += 1
        results[index, 0] += 1


def hold_write_and_die(lock, ready):
    """Takes the write side and is then killed by the test."""
    lock.acquire_write()
    ready[0] = 1
    time.sleep(60)
