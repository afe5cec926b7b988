"""sampler="auto" end to end: the probes measure real envs and agents, the chosen sampler runs, and
`rlrun tune-sampler` prints the table. Nothing here asserts on speed: this machine's load is unknown."""

from __future__ import annotations

import pytest

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.cli import main as cli_main
from rlrun.envs.gym import make
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.auto import ProbeSettings, auto_layout, candidates
from rlrun.samplers.auto.apply import layout_affinity, sampler_class
from rlrun.samplers.auto.busy_env import BusyEnv
from rlrun.samplers.auto.measure import run_sampler
from rlrun.samplers.auto.run import check_speed
from rlrun.samplers.parallel.cpu.sampler import CpuSampler

SHORT = ProbeSettings(env_seconds=0.03, agent_seconds=0.01, collector_seconds=0.03, round_trip_seconds=0.02,
                      probe_envs=2, served_seconds=0.03, capacity_seconds=0.03, cpu_sampler_seconds=0.03)  # fmt: skip


@pytest.mark.timeout(120)
def test_auto_measures_cartpole_and_its_choice_samples():
    agent = CategoricalPgAgent()
    choice = auto_layout(make, dict(id="CartPole-v1"), agent, batch_B=4, batch_T=8, settings=SHORT)
    costs = choice.costs
    assert 0 < costs.env_step_s < 0.01 and costs.agent_cpu(4) > 0 and costs.round_trip_s > 0
    assert costs.cores >= 1 and 0 < costs.capacity_one <= 1.0
    assert costs.served_master_s is not None and 0 <= costs.served_master_s  # the master's part of a served step
    assert 0.0 <= costs.cpu_worker_s < 0.01  # what a CpuSampler worker paid beyond its parts (2 workers probed)
    assert choice.layout in candidates(costs, choice.constraints)[0]
    assert agent.model is None  # the probes acted with copies; the run's agent is still uninitialised
    sampler = sampler_class(choice.layout.kind)(
        EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=8, batch_B=4, max_decorrelation_steps=0
    )
    sampler.initialize(agent, affinity=layout_affinity(choice.layout), seed=0)
    try:
        samples, _ = sampler.obtain_samples(0)
        assert samples.env.reward.shape == (8, 4)
    finally:
        sampler.shutdown()


@pytest.mark.timeout(60)
def test_the_cpusampler_probe_times_real_workers_and_counts_a_slow_envs_steps_as_parts():
    # 2 workers of 2 envs that burn 1 ms a step: at least 2 ms of wall time a step, almost all of it parts.
    env_kwargs = dict(step_seconds=0.001, episode_steps=20)
    run = run_sampler(CpuSampler, BusyEnv, env_kwargs, CategoricalPgAgent(), 2, 4, 4, 0.2)
    # Each worker steps 2 envs of 1 ms; psutil counts its CPU time in 10 ms ticks (0.1 ms a step over
    # the run's ~80 steps), which once read 1.875 ms a step over a 0.05 s run.
    assert 0.002 <= run.wall_s < 0.05 and run.worker_s >= 0.0018
    choice = auto_layout(BusyEnv, env_kwargs, CategoricalPgAgent(), batch_B=4, batch_T=4, settings=SHORT)
    if choice.costs.cores > 1:  # the probe ran; its extra is the workers' overhead, not their envs' steps
        assert 0.0 <= choice.costs.cpu_worker_s < 0.0005


@pytest.mark.timeout(120)
def test_auto_trains_on_a_slow_custom_env_and_checks_its_speed():
    env_kwargs = dict(step_seconds=0.001, episode_steps=20)
    agent = CategoricalPgAgent()
    choice = auto_layout(BusyEnv, env_kwargs, agent, batch_B=4, batch_T=4, settings=SHORT)
    assert choice.costs.env_step_s >= 0.0009  # it burns 1 ms of CPU a step
    assert choice.costs.env_step_spread < 1.0
    # The served probe ran these envs (4 ms of them a step with one worker): their time is counted apart.
    assert 0.0 <= choice.costs.served_step_s < 0.002 and choice.costs.served_master_s is not None
    sampler = sampler_class(choice.layout.kind)(
        EnvCls=BusyEnv, env_kwargs=env_kwargs, batch_T=4, batch_B=4, max_decorrelation_steps=0
    )
    runner = MinibatchRl(
        algo=A2C(), agent=agent, sampler=sampler, n_steps=7 * 16, log_interval_steps=10**6, seed=0,
        affinity=layout_affinity(choice.layout),
    )  # fmt: skip
    check = check_speed(runner.sampler, choice)
    check.skip, check.batches = 1, 3
    runner.train()
    assert check.result is not None and check.result[0] > 0
    assert check.result[1] == pytest.approx(choice.prediction.steps_per_s)


@pytest.mark.timeout(120)
def test_tune_sampler_prints_the_measurements_the_candidates_and_the_choice(capsys):
    args = ["tune-sampler", "--algo", "ppo", "--env", "CartPole-v1", "--n-envs", "4", "--batch-T", "8", "--full"]
    code = cli_main(args)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "sampler=auto: batch_B=4, batch_T=8; measured env step" in out
    assert "\n  serial " in out or "\n* serial " in out
    assert "choice: " in out


@pytest.mark.timeout(60)
def test_tune_sampler_judges_the_runs_length_as_rlrun_train_does(capsys):
    args = ["tune-sampler", "--algo", "ppo", "--env", "CartPole-v1", "--n-envs", "4", "--batch-T", "8", "--steps", "1000"]  # fmt: skip
    code = cli_main(args)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "sampler=auto: batch_B=4, batch_T=8; 1,000 steps at " in out
    assert "keeping serial without further probes" in out and "measured env step" not in out
    assert "--full measures every layout anyway" in out


def test_tune_sampler_refuses_workers_that_fit_no_layout(capsys):
    code = cli_main(["tune-sampler", "--algo", "ppo", "--env", "CartPole-v1", "--n-envs", "2", "--workers", "3"])
    assert code == 2
    assert "No sampler layout fits" in capsys.readouterr().err
