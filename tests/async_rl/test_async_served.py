"""The served asynchronous samplers on the CPU: the sampler process acts for every env (AsyncGpuSampler) or
for one group while the other steps (AsyncAlternatingSampler), its workers step envs."""

from __future__ import annotations

import pytest
from async_faults import small_runner

from rlrun.samplers.async_.alternating_sampler import AsyncAlternatingSampler
from rlrun.samplers.async_.gpu_sampler import AsyncGpuSampler


@pytest.mark.timeout(300)
@pytest.mark.parametrize("SamplerCls", [AsyncGpuSampler, AsyncAlternatingSampler])
def test_served_async_sampler_trains_evaluates_and_keeps_its_replay_ratio(SamplerCls, leak_check):
    runner = small_runner(SamplerCls, n_steps=1_600, evaluate=True)
    row = runner.train()
    learning_steps = row["Diagnostics/CumSteps"] - (1 + 128 // 32) * 32
    assert row["Diagnostics/CumUpdates"] * 32 / learning_steps == pytest.approx(8, rel=0.1)
    assert row["Diagnostics/TrajsInEval"] == 2
    assert runner.agent.weights_version == row["Diagnostics/CumUpdates"]
