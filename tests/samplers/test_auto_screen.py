"""sampler="auto" on a run too short for its full probes to pay: the screen times the run's SerialSampler,
bounds what any layout could save, and keeps serial without the probes; a long run is measured in full."""

from __future__ import annotations

import pytest

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.envs.gym import make
from rlrun.samplers.auto import Constraints, ProbeSettings, auto_layout
from rlrun.samplers.auto.busy_env import BusyEnv
from rlrun.samplers.auto.choose import serial_from_screen
from rlrun.samplers.auto.cost_model import Layout
from rlrun.samplers.auto.run import check_speed
from rlrun.samplers.auto.screen import PAYBACK, Screen
from rlrun.samplers.serial.sampler import SerialSampler

SHORT = ProbeSettings(env_seconds=0.03, agent_seconds=0.01, collector_seconds=0.03, round_trip_seconds=0.02,
                      probe_envs=2, served_seconds=0.03, capacity_seconds=0.03, cpu_sampler_seconds=0.03)  # fmt: skip


def test_the_most_a_layout_can_save_is_the_cores_share_of_serials_sampling_time():
    # 20k steps of 34 us on 2 cores (PPO CartPole on the 2-core VM): 0.68 s of sampling, at most 0.34 s saved.
    short = Screen(n_steps=20_000, step_s=34e-6, start_s=0.01, cores=2, probe_s=3.3)
    assert short.sampling_s == pytest.approx(0.68) and short.saving_s == pytest.approx(0.34)
    assert not short.worth_probing
    # One core: no layout can save anything, however long the run.
    assert Screen(10**9, 34e-6, 0.01, 1, 3.3).saving_s == 0.0 and not Screen(10**9, 34e-6, 0.01, 1, 3.3).worth_probing
    # The probes run once the bound reaches PAYBACK times their time: here at 2 * 3.3 / 17 us = 388,236 steps.
    steps = int(PAYBACK * 3.3 / 17e-6) + 1
    assert Screen(steps, 34e-6, 0.01, 2, 3.3).worth_probing and not Screen(steps - 2, 34e-6, 0.01, 2, 3.3).worth_probing
    # More cores, more to save: 16 cores bound 15/16 of it.
    assert Screen(20_000, 34e-6, 0.01, 16, 3.3).saving_s == pytest.approx(0.68 * 15 / 16)


def test_a_bound_from_one_env_step_says_so():
    screen = Screen(n_steps=10**7, step_s=186e-6, start_s=0.2, cores=2, probe_s=14.0, lower_bound=True)
    assert screen.worth_probing  # at least 930 s to save
    assert screen.format() == (
        "10,000,000 steps of at least 186.0 us each (one env step alone) sample for at least 1860.0 s; on 2 cores"
        " 930.0 s of it could be saved at most, against about 14.0 s to measure every layout: measuring every layout"
    )


def test_a_screened_choice_is_serial_at_its_measured_speed_and_says_why():
    screen = Screen(n_steps=20_000, step_s=40e-6, start_s=0.01, cores=2, probe_s=3.3)
    choice = serial_from_screen(screen, Constraints(batch_B=8, batch_T=32))
    assert choice.layout == Layout("serial") and choice.costs is None
    assert choice.prediction.steps_per_s == pytest.approx(25_000)
    assert choice.table == ((choice.layout, choice.prediction),)
    text = choice.format()
    assert text.startswith("sampler=auto: batch_B=8, batch_T=32; 20,000 steps at 40.0 us a step on serial")
    assert "on 2 cores 0.4 s of it could be saved at most, against about 3.3 s to measure every layout" in text
    assert "keeping serial without further probes" in text
    assert "choice: serial (the run is too short for measuring every layout to pay" in text


def test_the_probes_estimate_adds_each_probes_time_its_forks_and_its_samplers_start_and_batches():
    settings = ProbeSettings(env_seconds=0.2, agent_seconds=0.05, collector_seconds=0.2, round_trip_seconds=0.1,
                             probe_envs=8, served_seconds=0.2, capacity_seconds=0.2, capacity_rounds=3,
                             cpu_sampler_seconds=0.3)  # fmt: skip
    # Free envs that start in no time: the probes' own seconds and a fork for each probe process set.
    fixed = 0.2 + 4 * 0.05 + 2 * (0.1 + 0.015) + 6 * (0.2 + 0.015) + 2 * 0.2 + 2 * 0.2 + 0.3
    assert settings.estimate_seconds(8, 32, [1, 2, 4, 8], 2, 2, 0.0, 0.0) == pytest.approx(fixed)
    # Envs of 10 ms to start, in 2 + 8 (collectors), 2 x 8 (served) and 8 (CpuSampler) of them.
    assert settings.estimate_seconds(8, 32, [1, 2, 4, 8], 2, 2, 0.01, 0.0) == pytest.approx(fixed + 34 * 0.01)
    # Batches slower than the probes' time: a warm-up and two timed batches each.
    slow = settings.estimate_seconds(8, 32, [1, 2, 4, 8], 2, 2, 0.0, 0.01)
    batches = sum(3 * n * 32 * 0.01 for n in (2, 8, 8, 8, 8))
    assert slow == pytest.approx(fixed - (2 * 0.2 + 2 * 0.2 + 0.3) + batches)
    # No served or CPU layout allowed, one core: those probes are not counted.
    alone = ProbeSettings(served=False, cpu_sampler=False).estimate_seconds(8, 32, [1], 1, 1, 0.0, 0.0)
    assert alone == pytest.approx(0.2 + 0.05 + 0.1 + 0.015 + 3 * (0.2 + 0.015) + 2 * 0.2)


@pytest.mark.timeout(60)
def test_a_short_cartpole_run_keeps_serial_after_timing_its_serialsampler_alone(monkeypatch):
    def no_probes(*args, **kwargs):
        raise AssertionError("the full probes ran for a run too short to pay for them")

    monkeypatch.setattr("rlrun.samplers.auto.measure_costs", no_probes)
    agent = CategoricalPgAgent()
    choice = auto_layout(make, dict(id="CartPole-v1"), agent, batch_B=8, batch_T=32, n_steps=20_000)
    assert choice.layout == Layout("serial") and choice.costs is None and choice.screen is not None
    assert choice.screen.n_steps == 20_000 and not choice.screen.worth_probing
    assert agent.model is None  # the screen sampled with a copy
    # The self-check compares the run's first batches with the screen's own measurement.
    sampler = SerialSampler(EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=32, batch_B=8)
    sampler.initialize(agent, seed=0)
    try:
        check = check_speed(sampler, choice)
        check.skip, check.batches = 1, 2
        for itr in range(3):
            sampler.obtain_samples(itr)
        assert check.result is not None and check.result[1] == pytest.approx(choice.prediction.steps_per_s)
    finally:
        sampler.shutdown()


@pytest.mark.timeout(120)
def test_a_long_run_of_a_slow_env_is_measured_in_full_after_one_env_step_bounds_it(monkeypatch):
    def no_sampler(*args, **kwargs):
        raise AssertionError("one env's steps settled it; the screen's SerialSampler should not start")

    monkeypatch.setattr("rlrun.samplers.auto.screen.run_serial", no_sampler)
    env_kwargs = dict(step_seconds=0.001, episode_steps=20)
    choice = auto_layout(BusyEnv, env_kwargs, CategoricalPgAgent(), batch_B=4, batch_T=4, n_steps=10**8, settings=SHORT)
    assert choice.costs is not None and choice.screen is not None and choice.screen.worth_probing
    assert choice.screen.lower_bound and choice.screen.step_s >= 0.0009  # the env burns 1 ms a step
    text = choice.format()
    assert "100,000,000 steps of at least 1" in text and "us each (one env step alone) sample for at least" in text
    assert "measuring every layout" in text and "measured env step" in text


@pytest.mark.timeout(120)
def test_a_run_that_one_env_step_does_not_settle_times_its_serialsampler():
    # 3,000 steps of a 1 ms env on 2 cores: at least 1.5 s to save by the bound, short of twice the probes.
    env_kwargs = dict(step_seconds=0.001, episode_steps=20)
    choice = auto_layout(BusyEnv, env_kwargs, CategoricalPgAgent(), batch_B=4, batch_T=4, n_steps=3_000)
    assert choice.screen is not None and not choice.screen.lower_bound and not choice.screen.worth_probing
    assert choice.costs is None and choice.layout == Layout("serial")
    assert choice.screen.step_s >= 0.001  # its envs' steps of 1 ms, and the agent's call on top


@pytest.mark.timeout(120)
def test_a_user_named_worker_count_skips_the_screen():
    # The user's workers leave serial out, so the screen has nothing to keep: every layout is measured.
    choice = auto_layout(make, dict(id="CartPole-v1"), CategoricalPgAgent(), batch_B=4, batch_T=4, n_steps=100, workers=1, settings=SHORT)  # fmt: skip
    assert choice.screen is None and choice.costs is not None and choice.layout.workers == 1
