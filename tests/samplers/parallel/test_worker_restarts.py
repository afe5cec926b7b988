"""Worker restarts (``worker_restarts=N``): a faulty worker is replaced and its round collected again.

Each fault here is planned in one env (``FaultyCartPole``): the sampler seeds env rank ``r`` with
``seed + r``, and a replacement's envs get new seeds, so a planned fault happens once, unless it is
planned for every env (``fail_seed="all"``).
"""

from __future__ import annotations

import logging
import os
import signal
import time

import numpy as np
import pytest
import torch
from faulty_envs import FAILURE_TEXT, FaultyCartPole
from parallel_helpers import cpu_sampler, workers

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.samplers.parallel.gpu.alternating_sampler import AlternatingSampler
from rlrun.samplers.parallel.gpu.sampler import GpuSampler
from rlrun.samplers.parallel.protocol import SamplerWorkerError

pytestmark = pytest.mark.timeout(60)
SEED = 10


def sampler_of(kind: str, fail_in: str = "step", fail_seed: object = SEED + 3, T: int = 100, **kwargs):
    """A sampler of ``kind`` (cpu, gpu, alternating) on B=4 envs over 2 workers, where env rank 3 (worker 1)
    fails ``fail_in`` at its 57th step."""
    env_kwargs = dict(fail_in=fail_in, fail_seed=fail_seed, **kwargs.pop("env_extra", {}))
    if kind == "cpu":
        return cpu_sampler(EnvCls=FaultyCartPole, env_kwargs=env_kwargs, T=T, **kwargs)
    SamplerCls = GpuSampler if kind == "gpu" else AlternatingSampler
    return SamplerCls(
        EnvCls=FaultyCartPole, env_kwargs=env_kwargs, batch_T=T, batch_B=4, max_decorrelation_steps=0, **kwargs
    )


def start(sampler, seed: int) -> None:
    """Two unpinned workers (one per group for the alternating sampler)."""
    torch.manual_seed(seed)
    affinity = dict(workers(2), alternating=isinstance(sampler, AlternatingSampler))
    sampler.initialize(CategoricalPgAgent(), affinity=affinity, seed=seed)


def assert_batch_written(samples) -> None:
    """Every step of every env was collected: CartPole pays 1 per step, and observations are never all 0."""
    assert np.all(samples.env.reward.numpy() == 1.0)
    assert np.all(np.abs(samples.env.observation.numpy()).sum(axis=-1) > 0)


@pytest.mark.parametrize("kind", ["cpu", "gpu", "alternating"])
def test_env_raising_mid_batch_restarts_its_worker_and_the_batch_is_collected_again(kind, caplog, leak_check):
    sampler = sampler_of(kind, worker_restarts=3)
    start(sampler, seed=SEED)
    pid = sampler.workers[1].pid
    with caplog.at_level(logging.WARNING, logger="rlrun"):
        samples, _ = sampler.obtain_samples(0)
    assert sampler.worker_restart_count == 1
    assert sampler.workers[1].pid != pid and sampler.workers[1].is_alive()
    assert_batch_written(samples)
    restart = sampler.restarts.records[0]
    assert (restart.worker, restart.env_ranks, restart.during) == (1, (2, 3), "batch 0")
    assert restart.cause == f"RuntimeError: {FAILURE_TEXT} at step 57"
    logged = f"restart 1 of worker_restarts=3: worker 1 (env ranks [2, 3]) during batch 0: RuntimeError: {FAILURE_TEXT}"
    assert logged in caplog.text
    for itr in range(1, 4):  # and it goes on, with nothing more to restart
        samples, _ = sampler.obtain_samples(itr)
        assert_batch_written(samples)
    assert sampler.worker_restart_count == 1
    sampler.shutdown()
    leak_check.assert_clean()


@pytest.mark.parametrize("kind", ["cpu", "gpu"])
def test_worker_killed_by_sigkill_mid_batch_is_restarted(kind, leak_check):
    sampler = sampler_of(kind, fail_in="kill", worker_restarts=1)
    start(sampler, seed=SEED)
    samples, _ = sampler.obtain_samples(0)
    assert_batch_written(samples)
    assert sampler.restarts.records[0].cause == "stopped unexpectedly with signal SIGKILL (exit code -9)"
    sampler.shutdown()
    leak_check.assert_clean()


def test_without_worker_restarts_the_first_fault_ends_the_run_as_before(leak_check):
    sampler = sampler_of("cpu")
    assert sampler.worker_restart_count is None  # no WorkerRestarts column in progress.csv
    start(sampler, seed=SEED)
    with pytest.raises(SamplerWorkerError, match=f"{FAILURE_TEXT} at step 57") as info:
        sampler.obtain_samples(0)
    assert "worker_restarts" not in str(info.value)
    leak_check.assert_clean()


def test_the_fault_past_the_budget_ends_the_run_naming_every_restart(leak_check):
    sampler = sampler_of("cpu", fail_seed="all", worker_restarts=2)  # every env fails at its 57th step
    start(sampler, seed=SEED)
    t0 = time.monotonic()
    with pytest.raises(SamplerWorkerError) as info:
        sampler.obtain_samples(0)
    assert time.monotonic() - t0 < 20
    message = str(info.value)
    assert "after all worker_restarts=2 restarts were used" in message
    assert "restart 1: worker " in message and "restart 2: worker " in message
    assert f"during batch 0: RuntimeError: {FAILURE_TEXT} at step 57" in message
    assert sampler.pool is None
    leak_check.assert_clean()


def test_a_stuck_worker_is_killed_and_restarted_after_worker_timeout(leak_check):
    sampler = sampler_of("cpu", fail_in="hang", worker_restarts=1, worker_timeout=2.0)
    start(sampler, seed=SEED)
    t0 = time.monotonic()
    samples, _ = sampler.obtain_samples(0)
    assert time.monotonic() - t0 < 15
    assert_batch_written(samples)
    cause = sampler.restarts.records[0].cause
    assert cause.startswith("stuck in a batch at itr 0 past worker_timeout=2 s at File") and "hang_forever" in cause
    sampler.shutdown()
    leak_check.assert_clean()


def test_a_stopped_worker_is_killed_and_restarted(leak_check):
    sampler = sampler_of("cpu", fail_in=None, worker_restarts=1)
    start(sampler, seed=SEED)
    sampler.obtain_samples(0)
    os.kill(sampler.workers[0].pid, signal.SIGSTOP)
    samples, _ = sampler.obtain_samples(1)
    assert_batch_written(samples)
    assert sampler.restarts.records[0].worker == 0
    assert sampler.restarts.records[0].cause.startswith("stopped (SIGSTOP or a debugger)")
    sampler.shutdown()
    leak_check.assert_clean()


@pytest.mark.parametrize("kind", ["cpu", "gpu"])
def test_an_evaluation_worker_that_raises_is_restarted_and_the_evaluation_run_again(kind, leak_check):
    # B=4 and eval_n_envs=4 over 2 workers: eval env ranks 4-7, worker 1 holds 6 and 7.
    sampler = sampler_of(
        kind,
        fail_seed=SEED + 7,
        T=20,
        env_extra=dict(fail_step=5),
        eval_n_envs=4,
        eval_max_steps=4000,
        eval_max_trajectories=8,
        worker_restarts=1,
    )
    start(sampler, seed=SEED)
    sampler.obtain_samples(0)
    traj_infos = sampler.evaluate_agent(1)
    assert len(traj_infos) >= 4
    restart = sampler.restarts.records[0]
    assert (restart.worker, restart.eval_env_ranks, restart.during) == (1, (6, 7), "evaluation 1")
    sampler.obtain_samples(1)
    sampler.shutdown()
    leak_check.assert_clean()


def test_a_worker_failing_at_start_up_is_restarted_until_the_budget_ends(leak_check):
    sampler = sampler_of("cpu", fail_in="init", env_extra=dict(fail_worker=1), worker_restarts=2)
    with pytest.raises(SamplerWorkerError) as info:
        start(sampler, seed=SEED)
    message = str(info.value)
    assert "restart 2: worker 1 (env ranks [2, 3]) during start-up: RuntimeError:" in message
    leak_check.assert_clean()


@pytest.mark.parametrize("start_method", ["spawn", "forkserver"])
def test_restarts_work_under_spawn_and_forkserver(start_method, leak_check):
    sampler = sampler_of("cpu", worker_restarts=1, start_method=start_method)
    start(sampler, seed=SEED)
    samples, _ = sampler.obtain_samples(0)
    assert_batch_written(samples)
    assert sampler.worker_restart_count == 1
    sampler.shutdown()
    leak_check.assert_clean()


def test_a_restarted_worker_seeds_its_envs_anew(leak_check):
    """The replacement's env seeds differ from every seed the run gave before (they come from the seed,
    the worker and its restart count), so it does not replay the episodes of the worker it replaces."""
    sampler = sampler_of("cpu", worker_restarts=2)
    start(sampler, seed=SEED)
    first_spec, _ = sampler._worker_args(1)
    sampler.obtain_samples(0)
    spec, settings = sampler._worker_args(1)
    assert first_spec.seed == SEED and spec.seed != SEED
    assert not {spec.seed + r for r in (2, 3)} & {SEED + r for r in range(4)}
    assert sampler._worker_args(0)[0].seed == SEED  # the other worker keeps its seeds
    sampler.shutdown()
    leak_check.assert_clean()


@pytest.mark.parametrize("kind", ["cpu", "gpu", "alternating"])
def test_with_no_fault_worker_restarts_gives_the_same_samples_as_without(kind):
    batches = []
    for restarts in (0, 5):
        sampler = sampler_of(kind, fail_in=None, T=16, worker_restarts=restarts)
        start(sampler, seed=3)
        got = []
        for itr in range(3):
            samples, _ = sampler.obtain_samples(itr)
            got.append(
                {
                    k: v.numpy().copy()
                    for k, v in zip(
                        ("obs", "act", "rew", "done"),
                        (samples.env.observation, samples.agent.action, samples.env.reward, samples.env.done),
                    )
                }
            )
        sampler.shutdown()
        batches.append(got)
    for a, b in zip(*batches):
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
