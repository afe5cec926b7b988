"""Asynchronous DQN learns CartPole-v1 and keeps its replay ratio (the full run is slow: on a busy 2-core
machine its 25k gradient steps take many minutes); a short run by default checks the ratio and that the
sampler acts with the weights the optimiser publishes."""

from __future__ import annotations

import pytest
from async_cartpole import EVAL_EVERY, learning_phase_replay_ratio, run_async_cartpole
from async_faults import AsyncCpuSampler, small_runner

from rlrun.experiments.configs.cartpole import CONFIGS, SOLVED_RETURN

REPLAY_RATIO = CONFIGS["dqn"]["algo"]["replay_ratio"]


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_async_dqn_solves_cartpole_within_50k_steps_and_keeps_its_replay_ratio(tmp_path):
    progress = run_async_cartpole(tmp_path, seed=0)
    returns, steps = progress["ReturnAverage"], progress["Diagnostics/CumSteps"]
    solved = next((s for s, r in zip(steps, returns) if r >= SOLVED_RETURN), None)
    assert solved is not None and solved <= 50_000, f"evaluation returns every {EVAL_EVERY} steps: {returns}"
    assert learning_phase_replay_ratio(progress) == pytest.approx(REPLAY_RATIO, rel=0.1)
    # Every whole interval past the first one of learning: within 10% too. The last row is shorter (the
    # run ends mid-interval) and holds the optimiser's catch-up of the sampler's lead; the ratio over the
    # whole learning phase, above, covers it.
    for step, ratio in zip(steps[:-1], progress["Diagnostics/ReplayRatio"][:-1]):
        if step >= 2 * EVAL_EVERY:
            assert ratio == pytest.approx(REPLAY_RATIO, rel=0.1), (step, ratio)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("sampler", ["serial", "cpu"])
def test_short_async_run_keeps_its_replay_ratio_and_publishes_weights(sampler, leak_check):
    kwargs = dict(SamplerCls=AsyncCpuSampler) if sampler == "cpu" else {}
    runner = small_runner(n_steps=3_200, evaluate=True, algo_kwargs=dict(replay_ratio=8), **kwargs)
    row = runner.train()
    batch = 16 * 2
    learning_steps = row["Diagnostics/CumSteps"] - (1 + 128 // batch) * batch
    ratio = row["Diagnostics/CumUpdates"] * 32 / learning_steps
    assert ratio == pytest.approx(8, rel=0.1)
    assert row["Diagnostics/CumSteps"] == 3_200 and row["Diagnostics/TrajsInEval"] == 2
    # One publication per optimize_agent call (updates_per_sync=1).
    assert runner.agent.weights_version == row["Diagnostics/CumUpdates"]


def test_async_runner_refuses_what_it_cannot_do():
    from rlrun.agents.dqn.dqn_agent import DqnAgent
    from rlrun.algos.dqn.dqn import DQN
    from rlrun.envs.gym import make
    from rlrun.runners.async_rl import AsyncRl
    from rlrun.samplers.serial.sampler import SerialSampler

    sync_sampler = SerialSampler(EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=4, batch_B=2)
    with pytest.raises(TypeError, match="asynchronous sampler"):
        AsyncRl(algo=DQN(), agent=DqnAgent(), sampler=sync_sampler, n_steps=100)
    runner = small_runner(n_steps=100)
    with pytest.raises(ValueError, match="'sampler'"):
        AsyncRl(algo=runner.algo, agent=runner.agent, sampler=runner.sampler, n_steps=100, affinity=dict(cuda_idx=0))
    with pytest.raises(ValueError, match="max_sampler_lead_itrs"):
        AsyncRl(algo=runner.algo, agent=runner.agent, sampler=runner.sampler, n_steps=100, max_sampler_lead_itrs=0)
