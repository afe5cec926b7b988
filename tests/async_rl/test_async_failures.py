"""Failure injection for each process kind of an asynchronous run: a sampler worker, the sampler process,
the memory copier. Each becomes one AsyncProcessError in the optimiser within seconds, and nothing is
left behind."""

from __future__ import annotations

import time

import pytest
from async_faults import COPY_FAILURE_TEXT, AsyncCpuSampler, AsyncSerialSampler, FaultyCopyDQN, small_runner
from faulty_envs import FAILURE_TEXT

from rlrun.runners.async_rl import AsyncProcessError

FAIL_FAST_S = 30.0  # generous: the machine running the suite may be busy; the failure itself is seen in < 1 s


def raises_soon(runner, match: str) -> AsyncProcessError:
    start = time.monotonic()
    with pytest.raises(AsyncProcessError, match=match) as info:
        runner.train()
    assert time.monotonic() - start < FAIL_FAST_S
    assert runner.processes is None  # shut down
    return info.value


def test_sampler_worker_that_raises_is_one_error_naming_the_worker(leak_check):
    runner = small_runner(AsyncCpuSampler, env_kwargs=dict(fail_in="step", fail_seed="all", fail_step=40))
    error = raises_soon(runner, "sampler process raised")
    assert "SamplerWorkerError" in error.detail and "Sampler worker" in error.detail and FAILURE_TEXT in error.detail


def test_sampler_worker_killed_by_a_signal_is_reported(leak_check):
    runner = small_runner(AsyncCpuSampler, env_kwargs=dict(fail_in="kill", fail_seed="all", fail_step=40))
    error = raises_soon(runner, "sampler process raised")
    assert "SIGKILL" in error.detail


def test_sampler_process_that_raises_is_reported_with_its_traceback(leak_check):
    runner = small_runner(AsyncSerialSampler, env_kwargs=dict(fail_in="step", fail_seed="all", fail_step=40))
    error = raises_soon(runner, "sampler process raised")
    assert FAILURE_TEXT in error.detail


def test_sampler_process_killed_by_a_signal_is_reported(leak_check):
    # The serial sampler steps its envs in the sampler process: the env kills that process.
    runner = small_runner(AsyncSerialSampler, env_kwargs=dict(fail_in="kill", fail_seed="all", fail_step=40))
    raises_soon(runner, "sampler process stopped unexpectedly with signal SIGKILL")


@pytest.mark.parametrize("how", ["raise", "kill"])
def test_memory_copier_that_fails_is_reported(how, leak_check):
    runner = small_runner(AlgoCls=FaultyCopyDQN, algo_kwargs=dict(copy_fail=how, copy_fail_at=3))
    match = "memory copier raised" if how == "raise" else "memory copier stopped unexpectedly with signal SIGKILL"
    error = raises_soon(runner, match)
    if how == "raise":
        assert COPY_FAILURE_TEXT in error.detail


def test_stuck_sampler_is_reported_with_its_stack_after_process_timeout(leak_check):
    runner = small_runner(
        AsyncSerialSampler,
        env_kwargs=dict(fail_in="hang", fail_seed="all", fail_step=40),
        runner_kwargs=dict(process_timeout=3.0),
    )
    error = raises_soon(runner, "made no progress for process_timeout=3 s")
    assert "hang_forever" in error.detail  # the sampler process's stack


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fail_in", ["step", "kill"])
def test_sampler_worker_with_worker_restarts_is_replaced_and_progress_csv_counts_it(fail_in, tmp_path, leak_check):
    """Env rank 0 fails at its 40th step (runner seed 0: the sampler's seed is 1, env rank 0's too); its
    replacement's envs have new seeds, so the run survives with one restart, which progress.csv counts."""
    from rlrun.utils.logging.context import logger_context
    from rlrun.utils.plotting import read_progress

    runner = small_runner(
        AsyncCpuSampler,
        env_kwargs=dict(fail_in=fail_in, fail_seed=1, fail_step=40),
        sampler_kwargs=dict(worker_restarts=5),
    )
    with logger_context(str(tmp_path), 0, "restarts", {}, override_prefix=True) as run_dir:
        runner.train()
    progress = read_progress(run_dir)
    restarts = progress["Diagnostics/WorkerRestarts"]
    assert restarts[-1] == 1 and progress["Diagnostics/CumSteps"][-1] >= 2000, progress
    assert runner.processes is None
