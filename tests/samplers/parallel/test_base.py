"""ParallelSamplerBase: how envs and evaluation envs are spread over workers, and start-up choices."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from parallel_helpers import cpu_sampler, start

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.samplers.parallel.base import resolve_start_method

BASE_LOGGER = "rlrun.samplers.parallel.base"


def test_envs_that_divide_evenly_are_split_without_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger=BASE_LOGGER):
        assert cpu_sampler(B=6)._get_n_envs_list(n_worker=3) == [2, 2, 2]
    assert not caplog.records


def test_uneven_split_gives_the_first_workers_one_env_more_and_warns(caplog):
    with caplog.at_level(logging.WARNING, logger=BASE_LOGGER):
        assert cpu_sampler(B=7)._get_n_envs_list(n_worker=3) == [3, 2, 2]
        assert cpu_sampler(B=8)._get_n_envs_list(n_worker=3) == [3, 3, 2]
    assert len(caplog.records) == 2
    assert "do not split evenly over 3 workers" in caplog.records[0].getMessage()


def test_fewer_envs_than_workers_uses_one_worker_per_env_and_warns(caplog):
    with caplog.at_level(logging.WARNING, logger=BASE_LOGGER):
        assert cpu_sampler(B=3)._get_n_envs_list(n_worker=5) == [1, 1, 1]
    (record,) = caplog.records
    assert "batch_B=3 is smaller than the 5 sampler workers" in record.getMessage()


def test_worker_count_comes_from_affinity_workers_cpus():
    sampler = cpu_sampler(B=6)
    assert sampler._get_n_envs_list(affinity=dict(workers_cpus=[[0], [1], [0]])) == [2, 2, 2]


@pytest.mark.timeout(60)
def test_affinity_none_starts_one_worker_per_usable_cpu(leak_check):
    n_cpus = len(os.sched_getaffinity(0))
    sampler = cpu_sampler(B=2 * n_cpus)
    sampler.initialize(CategoricalPgAgent(), affinity=None, seed=0)
    try:
        assert sampler.n_worker == len(sampler.workers) == n_cpus
        samples, _ = sampler.obtain_samples(0)
        assert samples.env.observation.shape[:2] == (20, 2 * n_cpus)
    finally:
        sampler.shutdown()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "eval_n_envs, n_workers, per_worker, total, max_T",
    [(5, 2, 2, 4, 750), (1, 2, 1, 2, 1500), (6, 3, 2, 6, 500)],
)
def test_eval_envs_are_rounded_to_a_multiple_of_workers(eval_n_envs, n_workers, per_worker, total, max_T, leak_check):
    sampler = cpu_sampler(B=6, eval_n_envs=eval_n_envs, eval_max_steps=3000)
    start(sampler, n_workers=n_workers)
    try:
        assert (sampler.eval_n_envs_per, sampler.eval_n_envs, sampler.eval_max_T) == (per_worker, total, max_T)
        infos = sampler.evaluate_agent(0)
        assert len(infos) == total  # one episode per eval env without eval_max_trajectories
    finally:
        sampler.shutdown()


def test_start_method_defaults_to_fork_on_linux_and_rejects_unknown_names():
    assert resolve_start_method(None) == "fork"
    assert resolve_start_method("spawn") == "spawn"
    with pytest.raises(ValueError, match="start_method must be one of"):
        resolve_start_method("thread")
    with pytest.raises(ValueError, match="start_method must be one of"):
        cpu_sampler(start_method="threads")


@pytest.mark.timeout(60)
def test_initialize_twice_without_shutdown_is_refused(leak_check):
    sampler = cpu_sampler()
    start(sampler)
    try:
        with pytest.raises(RuntimeError, match="already running; call shutdown"):
            sampler.initialize(CategoricalPgAgent(), seed=0)
    finally:
        sampler.shutdown()


def _recording_worker(spec, settings, end, errors):
    """A custom worker target (rlpyt's ``worker_process``): notes its rank, then runs rlrun's own."""
    from rlrun.samplers.parallel.worker import sampling_process

    Path(os.environ["RLRUN_TEST_WORKER_DIR"], f"worker_{settings.rank}").touch()
    sampling_process(spec, settings, end, errors)


@pytest.mark.timeout(60)
def test_initialize_runs_a_custom_worker_process_in_every_worker(tmp_path, monkeypatch, leak_check):
    monkeypatch.setenv("RLRUN_TEST_WORKER_DIR", str(tmp_path))
    sampler = cpu_sampler(B=4)
    start(sampler, worker_process=_recording_worker)
    try:
        samples, _ = sampler.obtain_samples(0)
        assert samples.env.observation.shape[:2] == (20, 4)
    finally:
        sampler.shutdown()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["worker_0", "worker_1"]
    leak_check.assert_clean()


def test_the_serial_sampler_refuses_a_worker_process_it_would_not_run():
    from rlrun.envs.gym import make
    from rlrun.samplers.serial.sampler import SerialSampler

    sampler = SerialSampler(EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=4, batch_B=2)
    with pytest.raises(ValueError, match="starts no workers"):
        sampler.initialize(CategoricalPgAgent(), worker_process=_recording_worker)
