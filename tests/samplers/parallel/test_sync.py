"""The rendezvous and failure plumbing of rlrun.samplers.parallel.sync, with real processes."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time

import psutil
import pytest

from rlrun.samplers.parallel.sync import (
    BarrierIn,
    BarrierOut,
    ParentWatch,
    SamplerWorkerError,
    WorkerErrors,
    WorkerLink,
    WorkerMonitor,
    describe_exitcode,
    stop_workers,
)
from rlrun.utils.collections import AttrDict

CTX = mp.get_context("fork")


def _rounds(link, errors, rank, n_rounds, fail_at):
    parent = ParentWatch()
    for i in range(n_rounds):
        if not link.wait_turn(parent):
            return
        if i == fail_at:
            errors.report(rank, f"Traceback: worker {rank} failed in round {i}")
            link.arrive()
            return
        link.arrive(f"{rank}:{i}".encode())


def _setup(n_workers, n_rounds, fail_rank=None, fail_at=None):
    barrier_in, barrier_out, errors = BarrierIn(), BarrierOut(), WorkerErrors(CTX, n_workers)
    processes = []
    for r in range(n_workers):
        link = WorkerLink.create(barrier_in, barrier_out)
        p = CTX.Process(target=_rounds, args=(link, errors, r, n_rounds, fail_at if r == fail_rank else None))
        p.start()
        link.close()
        processes.append(p)
    monitor = WorkerMonitor(processes, [[2 * r, 2 * r + 1] for r in range(n_workers)], errors)
    return barrier_in, barrier_out, monitor, processes


@pytest.mark.timeout(30)
def test_barriers_run_rounds_in_lockstep_and_deliver_each_workers_payload():
    barrier_in, barrier_out, monitor, processes = _setup(3, n_rounds=50)
    assert barrier_in.parties == barrier_out.parties == 4
    for i in range(50):
        barrier_in.open()
        assert barrier_out.wait(monitor) == [f"{r}:{i}".encode() for r in range(3)]
    for p in processes:
        p.join(5)
        assert p.exitcode == 0


def _arrive_once(link, delay):
    if link.wait_turn(ParentWatch()):
        time.sleep(delay)
        link.arrive(b"done")  # then exit, code 0


@pytest.mark.timeout(30)
def test_a_worker_that_arrived_and_then_exited_does_not_fail_the_round():
    barrier_in, barrier_out, errors = BarrierIn(), BarrierOut(), WorkerErrors(CTX, 2)
    processes = []
    for delay in (0.0, 0.5):  # worker 0 arrives and exits while worker 1 still works
        link = WorkerLink.create(barrier_in, barrier_out)
        p = CTX.Process(target=_arrive_once, args=(link, delay))
        p.start()
        link.close()
        processes.append(p)
    monitor = WorkerMonitor(processes, [[0], [1]], errors)
    barrier_in.open()
    assert barrier_out.wait(monitor) == [b"done", b"done"]
    for p in processes:
        p.join(5)
        assert p.exitcode == 0
    barrier_in.close()
    barrier_out.close()


def _arrive_then_die(link):
    if link.wait_turn(ParentWatch()):
        link.arrive(b"done")
        os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.timeout(30)
def test_a_worker_killed_after_arriving_neither_spins_the_master_nor_goes_unreported():
    barrier_in, barrier_out, errors = BarrierIn(), BarrierOut(), WorkerErrors(CTX, 2)
    processes = []
    for target, args in ((_arrive_then_die, ()), (_arrive_once, (1.0,))):
        link = WorkerLink.create(barrier_in, barrier_out)
        p = CTX.Process(target=target, args=(link, *args))
        p.start()
        link.close()
        processes.append(p)
    monitor = WorkerMonitor(processes, [[0], [1]], errors)
    barrier_in.open()
    cpu_before = time.process_time()
    assert barrier_out.wait(monitor) == [b"done", b"done"]  # worker 0 died after delivering its part
    assert time.process_time() - cpu_before < 0.5  # the master slept while worker 1 worked for 1 s
    barrier_in.open()
    with pytest.raises(
        SamplerWorkerError, match=r"worker 0 \(env ranks \[0\]\) stopped unexpectedly with signal SIGKILL"
    ):
        barrier_out.wait(monitor)
    for p in processes:
        p.join(5)
    barrier_in.close()
    barrier_out.close()


@pytest.mark.timeout(30)
def test_reported_error_wakes_the_waiting_master_with_rank_env_ranks_and_text():
    barrier_in, barrier_out, monitor, processes = _setup(2, n_rounds=5, fail_rank=1, fail_at=3)
    for _ in range(3):
        barrier_in.open()
        barrier_out.wait(monitor)
    barrier_in.open()
    t0 = time.monotonic()
    with pytest.raises(SamplerWorkerError) as info:
        barrier_out.wait(monitor)
    assert time.monotonic() - t0 < 1.0
    assert (info.value.rank, info.value.env_ranks) == (1, [2, 3])
    assert "Sampler worker 1 (env ranks [2, 3]) raised an error" in str(info.value)
    assert "worker 1 failed in round 3" in str(info.value)
    for p in processes:
        p.kill()
        p.join()


@pytest.mark.timeout(30)
def test_worker_killed_by_a_signal_wakes_the_waiting_master_at_once():
    barrier_in, barrier_out, monitor, processes = _setup(2, n_rounds=5)
    barrier_in.open()
    barrier_out.wait(monitor)
    os.kill(processes[0].pid, signal.SIGKILL)
    t0 = time.monotonic()
    with pytest.raises(
        SamplerWorkerError, match=r"worker 0 \(env ranks \[0, 1\]\) stopped unexpectedly with signal SIGKILL"
    ):
        barrier_out.wait(monitor)  # worker 1 is waiting for its turn: only worker 0's death can end this
    assert time.monotonic() - t0 < 1.0
    processes[1].kill()
    processes[1].join()


def test_long_tracebacks_keep_their_start_and_end():
    errors = WorkerErrors(CTX, 2, capacity=200)
    errors.report(1, "START" + "x" * 1000 + "END")
    assert errors.first() == 1 and errors.get(0) is None
    text = errors.get(1)
    assert text.startswith("START") and text.endswith("END") and "shortened" in text


def test_exit_codes_name_the_signal():
    assert describe_exitcode(-9) == "signal SIGKILL (exit code -9)"
    assert describe_exitcode(-15) == "signal SIGTERM (exit code -15)"
    assert describe_exitcode(3) == "exit code 3"


def _ignore_quit_forever():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(0.1)


@pytest.mark.timeout(30)
def test_stop_workers_kills_a_worker_that_ignores_quit_and_sigterm():
    process = CTX.Process(target=_ignore_quit_forever)
    process.start()
    pid = process.pid
    ctrl = AttrDict(quit=CTX.RawValue("b", 0), barrier_in=BarrierIn(), barrier_out=BarrierOut())
    sync = AttrDict(stop_eval=CTX.RawValue("b", 0))
    t0 = time.monotonic()
    stop_workers([process], ctrl, sync, join_timeout=0.5)
    assert time.monotonic() - t0 < 4.0
    assert ctrl.quit.value and sync.stop_eval.value
    assert not psutil.pid_exists(pid)  # killed and reaped


def test_parent_watch_sees_its_parent_alive():
    assert ParentWatch().alive()
