"""An asynchronous run whose sampler process, copier and sampler workers are started with spawn. Each child
imports torch and what it runs (83 s on the busy 2-core machine it was written on), so it is marked slow;
the RWLock's spawn test runs by default."""

from __future__ import annotations

import pytest
from async_faults import AsyncCpuSampler, small_runner


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_spawned_async_cpu_run_trains_and_leaves_nothing_behind(leak_check):
    runner = small_runner(AsyncCpuSampler, n_steps=1_024, sampler_kwargs=dict(start_method="spawn"))
    row = runner.train()
    assert row["Diagnostics/CumSteps"] == 1_024 and row["Diagnostics/CumUpdates"] > 0
    assert runner.agent.weights_version == row["Diagnostics/CumUpdates"]
