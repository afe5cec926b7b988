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
    # 4 training envs and 2 evaluation envs: the agent must leave eval mode before the next batch.
    runner = small_runner(SamplerCls, n_steps=1_600, evaluate=True, batch_B=4)
    row = runner.train()
    learning_steps = row["Diagnostics/CumSteps"] - (1 + 128 // 64) * 64
    assert row["Diagnostics/CumUpdates"] * 32 / learning_steps == pytest.approx(8, rel=0.1)
    assert row["Diagnostics/TrajsInEval"] == 2
    assert runner.agent.weights_version == row["Diagnostics/CumUpdates"]
