"""An asynchronous run whose sampler process, copier and sampler workers are started with spawn (each child
imports what it runs: tens of seconds on a busy machine, hence one test)."""

from __future__ import annotations

import pytest
from async_faults import AsyncCpuSampler, small_runner


@pytest.mark.timeout(600)
def test_spawned_async_cpu_run_trains_and_leaves_nothing_behind(leak_check):
    runner = small_runner(AsyncCpuSampler, n_steps=1_024, sampler_kwargs=dict(start_method="spawn"))
    row = runner.train()
    assert row["Diagnostics/CumSteps"] == 1_024 and row["Diagnostics/CumUpdates"] > 0
    assert runner.agent.weights_version == row["Diagnostics/CumUpdates"]
