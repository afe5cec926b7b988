"""Without an affinity, an asynchronous run keeps one core for its optimiser: a parallel sampler's workers
take the other usable cores (unpinned), so the optimiser is not left a fair share of a core it shares."""

from __future__ import annotations

import os

import pytest
from async_faults import AsyncCpuSampler, small_runner

from rlrun.runners.async_rl import AsyncRl, default_sampler_affinity
from rlrun.samplers.async_.alternating_sampler import AsyncAlternatingSampler
from rlrun.samplers.async_.gpu_sampler import AsyncGpuSampler
from rlrun.samplers.async_.serial_sampler import AsyncSerialSampler


def sampler_of(SamplerCls: type):
    from rlrun.envs.gym import make

    return SamplerCls(EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=4, batch_B=4)


@pytest.mark.parametrize("SamplerCls", [AsyncCpuSampler, AsyncGpuSampler])
def test_workers_take_every_usable_core_but_the_first(SamplerCls, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {5, 2, 7})
    affinity = default_sampler_affinity(sampler_of(SamplerCls))
    assert affinity == dict(workers_cpus=((5,), (7,)), set_affinity=False)


@pytest.mark.parametrize("cores", [{0}, {0, 1, 2, 3}])
def test_serial_and_alternating_samplers_and_one_core_keep_the_samplers_default(cores, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: cores)
    assert default_sampler_affinity(sampler_of(AsyncSerialSampler)) is None
    assert default_sampler_affinity(sampler_of(AsyncAlternatingSampler)) is None
    assert (default_sampler_affinity(sampler_of(AsyncCpuSampler)) is None) == (len(cores) == 1)


def test_the_runner_uses_it_only_when_no_affinity_is_given(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    runner = small_runner(SamplerCls=AsyncCpuSampler, n_steps=100)
    assert runner.sampler_affinity == dict(workers_cpus=((1,),), set_affinity=False)
    given = dict(sampler=dict(workers_cpus=((0,), (1,))), optimizer=[dict(cpus=None, cuda_idx=None)])
    runner = AsyncRl(algo=runner.algo, agent=runner.agent, sampler=runner.sampler, n_steps=100, affinity=given)
    assert runner.sampler_affinity == dict(workers_cpus=((0,), (1,)))


@pytest.mark.timeout(120)
def test_a_run_trains_with_the_default_layout(leak_check):
    """The sampler process takes the partial dict (no master_cpus, no torch threads) as it is."""
    runner = small_runner(SamplerCls=AsyncCpuSampler, n_steps=320, batch_B=4)
    assert runner.sampler_affinity == default_sampler_affinity(runner.sampler)
    row = runner.train()
    assert row["Diagnostics/CumSteps"] == 320
