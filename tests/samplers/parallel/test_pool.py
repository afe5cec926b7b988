"""The worker protocol (rlrun.samplers.parallel.protocol and .pool) with real processes and pipes."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time

import psutil
import pytest

from rlrun.samplers.parallel.pool import WorkerLabel, WorkerPool
from rlrun.samplers.parallel.protocol import (
    Command,
    CommandKind,
    ParentWatch,
    Report,
    SamplerWorkerError,
    WorkerErrors,
    describe_exitcode,
)

CTX = mp.get_context("fork")
pytestmark = pytest.mark.timeout(30)


def labels(n: int) -> list[WorkerLabel]:
    return [WorkerLabel((2 * r, 2 * r + 1)) for r in range(n)]


def _rounds(rank, end, errors, fail_at=None):
    """Answer each COLLECT with a Report naming the rank and itr; fail at round ``fail_at``."""
    parent = ParentWatch()
    end.report(Report())
    while (command := end.next_command(parent)).kind is not CommandKind.QUIT:
        if command.itr == fail_at:
            errors.report(rank, f"Traceback: worker {rank} failed in round {command.itr}")
            end.failed()
            return
        end.report(Report([f"{rank}:{command.itr}"]))


def started(n: int, target=_rounds, **kwargs) -> WorkerPool:
    pool = WorkerPool(CTX, labels(n), timeout=kwargs.pop("timeout", 20.0))
    pool.start(target, lambda rank, end: (rank, end, pool.errors, *kwargs.get("extra", lambda r: ())(rank)))
    pool.wait_started()
    return pool


def test_rounds_deliver_each_workers_report_in_rank_order():
    pool = started(3)
    for itr in range(50):
        pool.send(Command(CommandKind.COLLECT, itr))
        assert [r.traj_infos for r in pool.gather_reports()] == [[f"{rank}:{itr}"] for rank in range(3)]
    processes = pool.processes
    pool.stop()
    assert all(p._closed for p in processes)  # joined and closed: each exited on QUIT


def test_reported_error_wakes_the_waiting_master_with_rank_env_ranks_and_text():
    pool = started(2, extra=lambda rank: (3 if rank == 1 else None,))
    for itr in range(3):
        pool.send(Command(CommandKind.COLLECT, itr))
        pool.gather_reports()
    pool.send(Command(CommandKind.COLLECT, 3))
    t0 = time.monotonic()
    with pytest.raises(SamplerWorkerError) as info:
        pool.gather_reports()
    assert time.monotonic() - t0 < 1.0
    assert (info.value.rank, info.value.env_ranks) == (1, [2, 3])
    assert str(info.value).startswith("Sampler worker 1 (env ranks [2, 3]) raised an error:")
    assert "worker 1 failed in round 3" in str(info.value)
    pool.stop()


def test_worker_killed_by_a_signal_wakes_the_waiting_master_at_once():
    pool = started(2)
    os.kill(pool.processes[0].pid, signal.SIGKILL)
    pool.send(Command(CommandKind.COLLECT, 0))
    t0 = time.monotonic()
    with pytest.raises(
        SamplerWorkerError, match=r"worker 0 \(env ranks \[0, 1\]\) stopped unexpectedly with signal SIGKILL"
    ):
        pool.gather_reports()
    assert time.monotonic() - t0 < 1.0
    pool.stop()


def _report_then_die(rank, end, errors):
    parent = ParentWatch()
    end.report(Report())
    end.next_command(parent)
    end.report(Report(["done"]))
    if rank == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(1.0)  # worker 1 works on while worker 0 is dead
    end.next_command(parent)
    end.report(Report(["done"]))


def test_a_worker_killed_after_reporting_neither_spins_the_master_nor_goes_unreported():
    pool = started(2, target=_report_then_die)
    pool.send(Command(CommandKind.COLLECT, 0))
    pool.gather_reports()
    pool.send(Command(CommandKind.COLLECT, 1))
    cpu_before = time.process_time()
    with pytest.raises(
        SamplerWorkerError, match=r"worker 0 \(env ranks \[0, 1\]\) stopped unexpectedly with signal SIGKILL"
    ):
        pool.gather_reports()
    assert time.process_time() - cpu_before < 0.5
    pool.stop()


def _served_steps(rank, end, errors, n_signals):
    """A served worker that signals observations ``n_signals`` times, then reports."""
    parent = ParentWatch()
    end.report(Report())
    end.next_command(parent)
    for i in range(n_signals):
        end.observations_ready()
        if i < 2:
            end.wait_actions(parent)
    end.report(Report())
    end.next_command(parent)


@pytest.mark.parametrize(
    "n_signals, message",
    [(1, "finished its round early"), (4, "signalled more steps than the batch has")],
)
def test_a_lost_or_surplus_step_signal_is_an_error_not_a_desync(n_signals, message):
    """The master serves 2 steps and waits for the final observations: 3 signals are due."""
    pool = started(1, target=_served_steps, extra=lambda rank: (n_signals,))
    pool.send(Command(CommandKind.COLLECT, 0))
    with pytest.raises(SamplerWorkerError, match=message):
        for _ in range(2):
            pool.gather_observations()
            pool.send_actions()
        pool.gather_observations()
        pool.gather_reports()
        pool.send(Command(CommandKind.COLLECT, 1))
        pool.gather_observations()
    pool.stop()


def _signal_twice(rank, end, errors):
    parent = ParentWatch()
    end.report(Report())
    end.next_command(parent)
    end.observations_ready()
    end.observations_ready()  # a doubled signal: #1 before the actions of #0
    end.wait_actions(parent)


def test_a_doubled_step_signal_is_caught_when_the_next_one_is_due():
    pool = started(1, target=_signal_twice)
    pool.send(Command(CommandKind.COLLECT, 0))
    pool.gather_observations()
    pool.send_actions()
    with pytest.raises(SamplerWorkerError, match="sent its end-of-round report|signal #1"):
        pool.gather_reports()
    pool.stop()


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


def _ignore_quit_forever(rank, end, errors):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    end.report(Report())
    while True:
        time.sleep(0.1)


def test_stop_kills_a_worker_that_ignores_quit_and_sigterm():
    pool = started(1, target=_ignore_quit_forever)
    pid = pool.processes[0].pid
    t0 = time.monotonic()
    pool.stop(join_timeout=0.5)
    assert time.monotonic() - t0 < 4.0
    assert not psutil.pid_exists(pid)  # killed and reaped
    pool.stop()  # again: nothing to do


def test_parent_watch_sees_its_parent_alive():
    assert ParentWatch().alive()
