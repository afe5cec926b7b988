"""sampler="auto": the cost model and the choice on synthetic costs (set by hand, so the right answer is
known and nothing depends on this machine's speed), the probes' plumbing, and auto runs end to end."""

from __future__ import annotations

import dataclasses
import logging
import math

import pytest

from rlrun.samplers.auto import (
    AgentCost,
    Constraints,
    Costs,
    Layout,
    SpeedCheck,
    attach_speed_check,
    call_sizes,
    candidates,
    choose,
    predict,
    split_envs,
)
from rlrun.samplers.auto.cost_model import alternating_overlaps, scheduler_slice
from rlrun.samplers.auto.measure import SamplerRun, cpu_worker_extra, served_step_costs
from rlrun.samplers.auto.project import project_served

US, MS = 1e-6, 1e-3


def costs(
    env_s: float,
    agent: AgentCost,
    *,
    cores: int = 2,
    device: AgentCost | None = None,
    round_trip_s: float = 60 * US,
    per_worker_s: float = 20 * US,
    served_s: float = 150 * US,
    served_master_s: float | None = None,
    capacity_one: float = 1.0,
    capacity_all: float | None = None,
    spread: float = 0.1,
) -> Costs:
    return Costs(
        env_step_s=env_s,
        env_step_spread=spread,
        collector_s=3 * US,
        agent_cpu=agent,
        agent_device=device or agent,
        device_is_cpu=device is None,
        round_trip_s=round_trip_s,
        round_trip_per_worker_s=per_worker_s,
        cores=cores,
        served_step_s=served_s,
        served_master_s=served_master_s,
        capacity_one=capacity_one,
        capacity_all=capacity_all,
    )


MLP = AgentCost.linear(200 * US, 1 * US)  # a small MLP: a fixed cost per call, almost nothing per observation
CNN_CPU = AgentCost.linear(500 * US, 180 * US)  # the Atari CNN on one core: ~0.18 ms per observation
CNN_GPU = AgentCost.linear(550 * US, 0.5 * US)  # the same on an H200: launch-bound, flat to B=64


def test_agent_cost_interpolates_between_points_and_extrapolates_along_the_last_slope():
    cost = AgentCost(((1, 1.0), (4, 2.5), (8, 3.0)))
    assert cost(1) == 1.0 and cost(0) == 1.0
    assert cost(2) == pytest.approx(1.5)
    assert cost(6) == pytest.approx(2.75)
    assert cost(16) == pytest.approx(4.0)
    assert AgentCost(((8, 2.0),))(64) == 2.0


def test_split_envs_matches_the_parallel_samplers_split():
    assert split_envs(16, 3) == [6, 5, 5]
    assert sum(split_envs(7, 4)) == 7


def test_a_2ms_cpu_burning_env_with_an_mlp_runs_parallel_on_2_cores():
    choice = choose(costs(2 * MS, MLP), Constraints(batch_B=8, batch_T=8))
    assert choice.layout == Layout("cpu", 2), choice.format()
    serial = predict(Layout("serial"), choice.costs, 8, 8).steps_per_s
    assert choice.prediction.steps_per_s > 1.8 * serial  # two cores on env steps that dominate


def test_a_cartpole_like_env_with_an_mlp_stays_serial_when_a_round_trip_costs_a_batch():
    # 20 us env steps, a 0.2 ms agent call: the work of a batch of 8 x 32 is 12 ms in one process. Beside a
    # busy neighbour, each wake-up of a worker costs a scheduler slice (a few ms), and two workers share
    # what one process got.
    loaded = costs(20 * US, MLP, round_trip_s=4 * MS, per_worker_s=2 * MS, capacity_one=0.7, capacity_all=0.9)
    choice = choose(loaded, Constraints(batch_B=8, batch_T=32))
    assert choice.layout == Layout("serial"), choice.format()


def test_a_cartpole_like_env_with_an_mlp_is_serial_within_the_margin_on_a_quiet_machine():
    quiet = costs(20 * US, MLP, round_trip_s=300 * US, per_worker_s=100 * US)
    choice = choose(quiet, Constraints(batch_B=8, batch_T=32))
    table = {layout: p.steps_per_s for layout, p in choice.table}
    # The agent call is the same 0.2 ms in each worker: two workers save only the env steps' half.
    assert table[Layout("cpu", 2)] < 1.35 * table[Layout("serial")]
    assert all(table[Layout("serial")] > table[layout] for layout in table if layout.kind in ("gpu", "alternating"))


def test_a_cnn_heavy_agent_with_a_free_env_is_not_split_into_smaller_calls_on_a_gpu():
    gpu = costs(5 * US, CNN_CPU, device=CNN_GPU, cores=16, per_worker_s=5 * US, served_s=100 * US)
    choice = choose(gpu, Constraints(batch_B=64, batch_T=5))
    assert choice.layout.kind in ("serial", "gpu"), choice.format()
    table = {layout: p.steps_per_s for layout, p in choice.table}
    assert table[Layout("cpu", 15)] < 0.8 * choice.prediction.steps_per_s  # 15 CPU calls of 4-5 observations each


def test_a_cnn_heavy_agent_with_a_free_env_on_2_cpu_cores_gains_nothing_from_serving():
    choice = choose(costs(5 * US, CNN_CPU), Constraints(batch_B=16, batch_T=5))
    table = {layout: p.steps_per_s for layout, p in choice.table}
    assert table[Layout("gpu", 2)] < table[Layout("serial")]  # the master acts for all 16 on one core anyway
    assert choice.layout.kind in ("serial", "cpu")


def test_pong_on_16_cores_with_an_h200_serves_from_the_gpu():
    # A quiet 16-core machine: pipes cost about 5 us more per worker, a served step 0.1 ms.
    pong = costs(290 * US, CNN_CPU, device=CNN_GPU, cores=16, per_worker_s=5 * US, served_s=100 * US)
    choice = choose(pong, Constraints(batch_B=64, batch_T=5))
    assert choice.layout.kind in ("gpu", "alternating") and choice.layout.workers >= 8, choice.format()
    table = {layout: p.steps_per_s for layout, p in choice.table}
    assert table[Layout("gpu", 16)] > 1.15 * table[Layout("cpu", 16)]  # 0.55 ms served against 1.2 ms per worker


def test_alternating_groups_that_take_longer_than_the_masters_turn_wait_for_it():
    # A 2 ms env, the MLP, 8 envs in two groups of 4, one worker per group on 2 quiet cores. A group's
    # 8 ms outlast the master's 0.2 ms turn, so the master waits for each group, and the group it woke
    # waits on its core: per time step the master's two turns (its call + half of the 2 workers' serving
    # work, 50 us), then the two groups step their 4 envs side by side, and their wake-up (the served
    # step's other 110 us) once.
    c = costs(2 * MS, MLP, spread=0.0, served_s=100 * US, served_master_s=50 * US)
    env = c.env_step_s + c.collector_s
    step = 2 * (MLP(4) + 50 * US / 2) + 4 * env + (c.served_step(1) - 50 * US)
    expected = 8 * 8 / (8 * step + c.round_trip(2))
    alternating = predict(Layout("alternating", 1), c, 8, 8)
    assert alternating.steps_per_s == pytest.approx(expected, rel=1e-6)
    assert alternating.bound == "the workers' env steps"
    assert alternating.steps_per_s > 1.8 * predict(Layout("serial"), c, 8, 8).steps_per_s


def test_alternating_groups_back_before_the_masters_turn_ends_step_while_it_serves_the_other():
    # A free env and the CNN on the CPU, a group per core: a group's 8 env steps and wake-up (1.07 ms)
    # are done within the master's 1.9 ms turn, so the master never waits and its two turns are the step.
    c = costs(5 * US, CNN_CPU, spread=0.0, served_s=1 * MS, served_master_s=50 * US)
    turn = CNN_CPU(8) + 50 * US / 2
    alternating = predict(Layout("alternating", 1), c, 16, 5)
    assert alternating.steps_per_s == pytest.approx(16 * 5 / (5 * 2 * turn + c.round_trip(2)), rel=1e-6)
    assert alternating.bound == "the master's turns"
    # Without the master's share measured, it is taken to do all of a served step's work: longer turns.
    whole = costs(5 * US, CNN_CPU, spread=0.0, served_s=1 * MS)
    slower = 16 * 5 / (5 * 2 * (CNN_CPU(8) + whole.served_step(2) / 2) + whole.round_trip(2))
    assert predict(Layout("alternating", 1), whole, 16, 5).steps_per_s == pytest.approx(slower, rel=1e-6)


def test_alternating_with_a_group_on_every_core_waits_for_its_groups():
    # Two workers per group on 2 cores: the master and a group's workers are three processes on two
    # cores, so even groups back well within the master's 2 ms turn do not step beside it (measured on
    # the 2-core VM: CartPole, HalfCheetah and Pong ran at the turns plus a group step). The master's turn
    # runs alone, at full speed; the groups' 4 envs (92 us) and their wake-up follow.
    c = Costs(**{**costs(20 * US, CNN_CPU, spread=0.0, served_master_s=50 * US).__dict__, "served_worker_s": 100 * US})
    turn = CNN_CPU(8) + 50 * US / 2
    group_work = 4 * (20 + 3) * US
    wake_up = max(100 * US, c.served_step(2) - 50 * US)
    step = 2 * turn + group_work * 3 / 2 + wake_up  # the group's steps at 2/3 of a core, beside the other group
    alternating = predict(Layout("alternating", 2), c, 16, 5)
    assert alternating.steps_per_s == pytest.approx(16 * 5 / (5 * step + c.round_trip(4)), rel=1e-6)
    assert alternating.bound == "the master's turns"
    # On 4 cores the same layout overlaps: the master's turns alone set the pace.
    wide = dataclasses.replace(c, cores=4)
    assert predict(Layout("alternating", 2), wide, 16, 5).steps_per_s == pytest.approx(
        16 * 5 / (5 * 2 * turn + wide.round_trip(4)), rel=1e-6
    )


def test_alternating_overlaps_needs_a_group_back_in_time_and_a_core_for_each():
    assert alternating_overlaps(200 * US, 160 * US, 1, 2)  # CartPole's shape on 2 cores
    assert not alternating_overlaps(280 * US, 370 * US, 1, 2)  # HalfCheetah's: the master waits
    assert not alternating_overlaps(200 * US, 160 * US, 2, 2)  # three processes on two cores
    assert alternating_overlaps(200 * US, 160 * US, 2, 3)


def test_serving_grows_per_doubling_of_the_workers():
    c = dataclasses.replace(
        costs(20 * US, MLP, served_s=100 * US, served_master_s=80 * US, per_worker_s=0.0),
        served_step_per_doubling_s=40 * US,
        served_master_per_doubling_s=30 * US,
    )
    assert c.served_step(1) == pytest.approx(60 * US + 100 * US)
    assert c.served_step(2) == pytest.approx(60 * US + 140 * US)
    assert c.served_step(8) == pytest.approx(60 * US + 100 * US + 3 * 40 * US)
    assert c.served_master(4) == pytest.approx(80 * US + 2 * 30 * US)
    # Never more than the whole served step.
    assert dataclasses.replace(c, served_master_s=1.0).served_master(2) == pytest.approx(c.served_step(2))


def test_served_step_costs_recovers_the_costs_a_served_run_paid():
    # Two GpuSampler runs made of known parts: the agent's call on 8 envs, the slowest worker's envs, the
    # round trips (one a step and one a batch), serving of 150 us + 60 us per doubling (the master's own
    # part 100 us + 40 us per doubling), and each worker's own 30 us beyond its envs.
    c = costs(20 * US, MLP, spread=0.0, per_worker_s=0.0)
    env = c.env_step_s + c.collector_s
    T = 16

    def run(workers: int) -> SamplerRun:
        b = 8 // workers
        serving = 150 * US + 60 * US * math.log2(workers)
        wall = MLP(8) + b * env + serving + c.round_trip(workers) * (1 + 1 / T)
        return SamplerRun(wall, MLP(8) + 100 * US + 40 * US * math.log2(workers), b * env + 30 * US)

    served = served_step_costs({1: run(1), 2: run(2)}, c, 8, T)
    assert served.step_s == pytest.approx(150 * US) and served.per_doubling_s == pytest.approx(60 * US)
    assert served.master_s == pytest.approx(100 * US) and served.master_per_doubling_s == pytest.approx(40 * US)
    assert served.worker_s == pytest.approx(30 * US)
    # A run with more workers that was faster per step gives no negative growth.
    faster = dataclasses.replace(run(2), wall_s=run(1).wall_s - 4 * env - 10 * US)
    assert served_step_costs({1: run(1), 2: faster}, c, 8, T).per_doubling_s == 0.0


def test_load_from_other_processes_counts_only_the_cores_they_leave():
    quiet = costs(2 * MS, MLP)
    # One process of ours gets a whole core, but two get no more than one core together (another session's
    # load takes the other): splitting the envs then buys nothing and costs round trips.
    loaded = costs(2 * MS, MLP, capacity_one=1.0, capacity_all=1.0)
    assert choose(quiet, Constraints(8, 8)).layout == Layout("cpu", 2)
    assert choose(loaded, Constraints(8, 8)).layout == Layout("serial")
    assert loaded.other_load == pytest.approx(1.0) and quiet.other_load == 0.0


def test_load_that_shares_the_cpu_per_process_gives_more_of_it_to_more_processes():
    # Two busy neighbours in our own scheduler group on 2 cores: one process of ours gets 2/3 of a core,
    # two get 1 core, and four get 4/6 of 2 cores, 1.33, since the scheduler shares per process.
    same_group = costs(2 * MS, MLP, capacity_one=2 / 3, capacity_all=1.0)
    assert same_group.load_per_process
    assert 4 * same_group.share(4) == pytest.approx(4 / 3)
    assert 2 * same_group.share(2) == pytest.approx(1.0) and same_group.share(1) == pytest.approx(2 / 3)
    # Another session's load: one process of ours gets a whole core, and so do four together.
    other_session = costs(2 * MS, MLP, capacity_one=1.0, capacity_all=1.0)
    assert not other_session.load_per_process
    assert 4 * other_session.share(4) == pytest.approx(1.0)
    assert not costs(2 * MS, MLP).load_per_process  # a quiet machine
    # The 2 ms env beside the same-group load: alternating runs 4 workers and the master, 5 of the 7
    # runnable processes, and beats 2 CpuSampler workers (which get 1 core), as the benchmark measured.
    choice = choose(same_group, Constraints(8, 8))
    assert choice.layout == Layout("alternating", 2), choice.format()
    # Beside another session, more processes buy nothing.
    assert choose(other_session, Constraints(8, 8)).layout.kind in ("serial", "cpu")


def test_an_async_run_keeps_a_core_for_its_optimiser():
    layouts, _ = candidates(costs(2 * MS, MLP, cores=4), Constraints(8, 8, reserve_optimizer_core=True))
    assert max(layout.workers for layout in layouts) == 3


def test_the_users_workers_are_kept_and_leave_serial_out():
    choice = choose(costs(20 * US, MLP), Constraints(8, 32, workers=2))
    assert {layout.workers for layout, _ in choice.table} == {2}
    assert choice.layout.kind != "serial"


def test_candidates_leave_out_what_does_not_fit_and_say_why():
    layouts, dropped = candidates(costs(2 * MS, MLP, cores=4), Constraints(batch_B=3, batch_T=8))
    assert all(layout.workers <= 3 for layout in layouts)
    assert not any(layout.kind == "alternating" for layout in layouts)
    assert any("odd" in line for line in dropped)
    too_big = Costs(**{**costs(2 * MS, MLP).__dict__, "memory_per_env_bytes": 2**30, "memory_available_bytes": 2**30})
    with pytest.raises(ValueError, match="No sampler layout fits"):
        choose(too_big, Constraints(batch_B=8, batch_T=8))


def test_the_table_names_every_candidate_the_choice_and_why():
    choice = choose(costs(2 * MS, MLP), Constraints(8, 8))
    text = choice.format()
    assert "batch_B=8, batch_T=8" in text and "env step 2000.0 us" in text
    for layout, prediction in choice.table:
        assert layout.label in text and f"{prediction.steps_per_s:,.0f}" in text
    assert f"choice: {choice.layout.label} (" in text


def test_a_simpler_layout_within_the_margin_is_preferred():
    # Two processes share 1.04 cores and the agent's cost is all per observation: two workers predict 4%
    # more than Serial, within the margin, and Serial is kept.
    free = costs(
        0.0, AgentCost.linear(0.0, 100 * US), round_trip_s=0.0, per_worker_s=0.0, served_s=0.0, capacity_all=1.04
    )
    choice = choose(free, Constraints(8, 8, kinds=("serial", "cpu")))
    assert choice.layout == Layout("serial") and "simplest within" in choice.reason


def test_one_process_beside_load_in_its_own_group_gets_its_fair_share_even_when_the_probe_read_half_a_core():
    # Two busy neighbours in our group on 2 cores: the probe of two processes read 0.97 cores (L = 2.1
    # others), the probe of one sat beside a neighbour for its whole 0.2 s and read 0.49. Over a run one
    # process gets 2 / 3.1 of a core, as SerialSampler did (0.70 of its quiet speed).
    unlucky = costs(30 * US, MLP, capacity_one=0.49, capacity_all=0.97)
    assert unlucky.load_per_process
    assert unlucky.share(1) == pytest.approx(2 / (1 + 4 / 0.97 - 2))
    assert unlucky.share(2) == pytest.approx(0.97 / 2)  # two of ours: what the probe of two measured
    # A probe that read more than the fair share (a core to itself for its 0.2 s) gets the fair share too.
    assert costs(30 * US, MLP, capacity_one=0.74, capacity_all=0.97).share(1) == pytest.approx(2 / (1 + 4 / 0.97 - 2))
    # Another session's load (the group gets its share whatever its process count): unchanged.
    other_session = costs(30 * US, MLP, capacity_one=1.0, capacity_all=1.0)
    assert not other_session.load_per_process and other_session.share(1) == 1.0
    # CartPole's batch (8 envs x 32 steps) beside that load, with the costs that run measured: one process
    # beats two workers. Taken at its half-core reading, the model preferred 2 CpuSampler workers, which
    # ran at 0.75 of SerialSampler (benchmarks/results/2026-12-05-2cpu-vm-auto-layout-median-capacity.txt).
    measured = dict(round_trip_s=125 * US, per_worker_s=66 * US, spread=0.51, capacity_all=0.97)
    assert choose(costs(31 * US, MLP, capacity_one=0.49, **measured), Constraints(8, 32)).layout == Layout("serial")


def test_load_in_our_session_is_told_from_another_sessions_within_the_probes_noise():
    # Beside 2 busy loops in our session the one-process probe read up to 1.31 times the fair share
    # (0.79 of a core where 2 / 3.04 is fair: the 2 ms env's miss in the turn-taking run); beside 2 loops in
    # sessions of their own, 1.28 and more. Another session's load leaves one process of ours a core
    # while the group's share caps two of them, so capacity_all is close to capacity_one.
    assert costs(2 * MS, MLP, capacity_one=0.79, capacity_all=0.99).load_per_process
    assert costs(2 * MS, MLP, capacity_one=0.50, capacity_all=0.99).load_per_process
    assert not costs(2 * MS, MLP, capacity_one=0.67, capacity_all=0.70).load_per_process  # 2 other sessions
    assert not costs(2 * MS, MLP, capacity_one=1.0, capacity_all=1.0).load_per_process  # 1 other session


def test_a_master_and_its_one_worker_taking_long_turns_beside_load_get_their_max_min_fair_share():
    # 4 busy loops in our group on 2 cores (the probe of two of ours read 2 * 2 / 6 cores: L = 4). One busy
    # process gets its fair share, 2 / 5 of a core. A served pair with Pong's turns (2 ms acting, 4 ms
    # stepping: the busier side 2/3 of the time) runs at 2 / (4 * 2/3 + 1) = 0.55 of its quiet speed, as
    # GpuSampler with one worker ran Pong there (0.54; benchmarks/served_under_load.py).
    loaded = costs(250 * US, CNN_CPU, capacity_one=0.4, capacity_all=2 * 2 / 6)
    assert loaded.load_per_process and loaded.share(1) == pytest.approx(0.4)
    assert scheduler_slice(2) == pytest.approx(1.5 * MS) and scheduler_slice(16) == pytest.approx(3 * MS)
    assert loaded.turn_taking_share(2 * MS, 4 * MS) == pytest.approx(2 / (4 * 2 / 3 + 1))
    assert loaded.turn_taking_share(4 * MS, 2 * MS) == loaded.turn_taking_share(2 * MS, 4 * MS)
    # Turns far shorter than a scheduler slice wait behind a neighbour's slice at each wake-up: the pair
    # competes like one busy process (HalfCheetah's 0.1 and 0.5 ms turns ran at 0.43, a busy process 0.39).
    assert loaded.turn_taking_share(1 * US, 500 * US) == pytest.approx(0.4, rel=0.01)
    # In between, the shorter turn's length against the slice weighs the two.
    assert 0.4 < loaded.turn_taking_share(0.75 * MS, 1.5 * MS) < loaded.turn_taking_share(1.5 * MS, 3 * MS)
    # A busier side that is all of the work is one busy process: its fair share.
    assert loaded.turn_taking_share(0.0, 4 * MS) == pytest.approx(0.4)
    # Quiet, or another session's load: as one busy process.
    assert costs(250 * US, CNN_CPU).turn_taking_share(2 * MS, 4 * MS) == 1.0
    assert costs(250 * US, CNN_CPU, capacity_one=1.0, capacity_all=1.0).turn_taking_share(2 * MS, 4 * MS) == 1.0
    # The prediction of GpuSampler with one worker takes it; with two workers (both stepping at once) not.
    pong = dict(env_s=250 * US, agent=CNN_CPU, served_s=0.0, capacity_one=0.4, capacity_all=2 * 2 / 6)
    pair = costs(**pong).turn_taking_share(CNN_CPU(16), 16 * (250 + 3) * US)
    as_busy = predict(Layout("gpu", 1), costs(**pong), 16, 5).steps_per_s
    quiet = predict(Layout("gpu", 1), costs(250 * US, CNN_CPU, served_s=0.0), 16, 5).steps_per_s
    assert as_busy == pytest.approx(quiet * pair, rel=0.02) and pair > 0.5
    two = predict(Layout("gpu", 2), costs(**pong), 16, 5).steps_per_s
    assert two < predict(Layout("gpu", 2), costs(250 * US, CNN_CPU, served_s=0.0), 16, 5).steps_per_s * 0.45


def test_call_sizes_cover_every_workers_share_and_the_halves():
    sizes = call_sizes(16, 3)
    assert {16, 8, 6, 5, 3, 2}.issubset(sizes) and 4 in call_sizes(16, 4)


def test_the_speed_check_warns_beyond_20_percent_and_unwraps_itself():
    class Sampler:
        def obtain_samples(self, itr: int) -> int:
            return itr

    sampler = Sampler()
    warnings: list[str] = []
    check = attach_speed_check(sampler, SpeedCheck(1e12, 10, "cpu, 2 workers", skip=1, batches=2, warn=warnings.append))
    assert [sampler.obtain_samples(i) for i in range(3)] == [0, 1, 2]
    assert check.result is not None and warnings and "off by more than 20%" in warnings[0]
    assert "obtain_samples" not in vars(sampler)  # back to the class's method
    fine = SpeedCheck(100.0, 10, "serial", skip=0, batches=1, warn=warnings.append)
    assert fine.record(0.1) and len(warnings) == 1


def test_projection_for_the_gpu_machine_grows_with_workers_up_to_the_env_bound():
    rows = project_served(env_step_s=0.29 * MS, call_s=0.55 * MS, batch_B=64, workers=[1, 2, 4, 8, 15], cores=16)
    rates = [r.steps_per_s for r in rows]
    assert rates == sorted(rates)
    assert rates[-1] < 15 / (0.29 * MS)  # never above the env-only bound of 15 cores
    assert rates[0] == pytest.approx(64 / (64 * 0.29 * MS + 0.55 * MS + rows[0].sync_s), rel=0.01)


def test_speed_check_logs_through_the_library_logger(caplog: pytest.LogCaptureFixture):
    with caplog.at_level(logging.INFO, logger="rlrun.samplers.auto.self_check"):
        SpeedCheck(100.0, 10, "serial", skip=0, batches=1).record(0.1)
    assert "sampled 100 steps/s" in caplog.text


def test_capacity_is_the_cpu_share_scaled_by_how_much_slower_steps_ran_with_every_core_busy():
    from rlrun.samplers.auto.measure import CapacityProbe, capacities

    one = CapacityProbe(processes=1, share=0.67, steps_per_cpu_s=1000.0)  # a loaded machine: 2/3 of a core
    every = CapacityProbe(processes=2, share=1.0, steps_per_cpu_s=900.0)  # steps 10% slower side by side
    assert capacities(one, every) == pytest.approx((0.67, 0.9))
    faster = CapacityProbe(processes=2, share=1.9, steps_per_cpu_s=1100.0)  # noise never adds cores
    assert capacities(CapacityProbe(1, 1.02, 1000.0), faster) == pytest.approx((1.0, 1.9))


def test_one_round_of_capacity_probes_that_hiccups_does_not_move_the_capacity():
    from rlrun.samplers.auto.measure import CapacityProbe, median_capacities

    one = CapacityProbe(processes=1, share=1.0, steps_per_cpu_s=12_000.0)
    steady = CapacityProbe(processes=2, share=1.99, steps_per_cpu_s=11_800.0)
    hiccup = CapacityProbe(processes=2, share=1.99, steps_per_cpu_s=7_100.0)  # the quiet HalfCheetah read 1.18
    # The first round hiccupped: taken alone (as before), it said 1.18 cores for two processes.
    assert median_capacities([(one, hiccup)]) == pytest.approx((1.0, 1.18), abs=0.01)
    assert median_capacities([(one, hiccup), (one, steady), (one, steady)]) == pytest.approx((1.0, 1.96), abs=0.01)
    # A steady load reads alike in every round, and stays.
    loaded_one = CapacityProbe(processes=1, share=0.5, steps_per_cpu_s=12_000.0)
    loaded = CapacityProbe(processes=2, share=0.7, steps_per_cpu_s=11_000.0)
    assert median_capacities([(loaded_one, loaded)] * 3) == pytest.approx((0.5, 0.7 * 11 / 12))
    with pytest.raises(ValueError, match="at least one round"):
        median_capacities([])


def test_the_capacity_probe_reports_the_cpu_share_its_forked_steppers_got():
    from rlrun.samplers.auto.busy_env import BusyEnv
    from rlrun.samplers.auto.measure import time_capacity

    probe = time_capacity(BusyEnv(step_seconds=0.0005), processes=2, seconds=0.1)
    assert probe.processes == 2
    assert 0.0 < probe.share <= 2.05  # at most one core each (plus clock granularity)
    assert probe.steps_per_cpu_s > 0


class _ForkShyEnv:
    """Steps in the process that made it, fails in a forked copy (as an env holding a socket might)."""

    def __init__(self) -> None:
        import os

        from rlrun.samplers.auto.busy_env import BusyEnv

        self._inner = BusyEnv(step_seconds=0.0001)
        self.action_space = self._inner.action_space
        self._owner = os.getpid()

    def step(self, action):
        import os

        if os.getpid() != self._owner:
            raise ConnectionError("the env's simulator connection does not survive fork")
        return self._inner.step(action)

    def reset(self):
        return self._inner.reset()


@pytest.mark.timeout(30)
def test_a_capacity_probe_whose_forked_env_fails_raises_naming_the_cause_instead_of_hanging():
    from rlrun.samplers.auto.measure import time_capacity

    with pytest.raises(RuntimeError, match=r"capacity probe process exited \(code 1\).*Pick the sampler by hand"):
        time_capacity(_ForkShyEnv(), processes=2, seconds=0.1)


def test_the_collectors_work_splits_into_a_part_per_time_step_and_a_part_per_env():
    from rlrun.samplers.auto.measure import collector_costs

    # HalfCheetah on the 2-core VM: 148 us of residual work a time step with 2 envs, 266 us with 8.
    per_step, per_env = collector_costs({2: 148 * US, 8: 266 * US}, env_s=34 * US)
    assert per_env == pytest.approx(118 / 6 * US) and per_step == pytest.approx((148 - 2 * 118 / 6) * US)
    # A faster loop with more envs (warm caches) keeps at most half an env step off per env, and no time
    # step costs less than nothing.
    assert collector_costs({2: 29 * US, 8: 14 * US}, env_s=13 * US) == pytest.approx((34 * US, -2.5 * US))
    assert collector_costs({2: 10 * US, 8: 200 * US}, env_s=13 * US)[0] == 0.0
    assert collector_costs({2: 20 * US, 8: -100 * US}, env_s=13 * US)[1] == pytest.approx(-6.5 * US)
    # One env count: all of it per env step.
    assert collector_costs({8: 80 * US}, env_s=13 * US) == pytest.approx((0.0, 10 * US))


def test_each_collector_pays_its_fixed_work_per_time_step_so_fewer_envs_per_worker_gain_less():
    # CartPole's costs on the fast VM: 13 us env steps, an MLP call of 90 us, 25 us of collector work a
    # time step. Spread per env from 8 envs (3 us), a worker of 4 envs would pay half of it.
    fixed = costs(13 * US, AgentCost.linear(90 * US, 0.5 * US), served_s=0.0)
    fixed = dataclasses.replace(fixed, collector_s=0.0, collector_step_s=25 * US)
    spread = dataclasses.replace(fixed, collector_s=25 * US / 8, collector_step_s=0.0)
    for layout in (Layout("serial"), Layout("cpu", 2)):
        steps = 8 if layout.kind == "serial" else 4
        work = predict(layout, fixed, 8, 32).steps_per_s, predict(layout, spread, 8, 32).steps_per_s
        # The same 25 us a time step at 8 envs; at 4 envs a worker pays all 25, not half of them.
        assert (work[0] == pytest.approx(work[1], rel=0.01)) == (steps == 8)
    assert (
        predict(Layout("cpu", 2), fixed, 8, 32).steps_per_s
        < 0.95 * predict(Layout("cpu", 2), spread, 8, 32).steps_per_s
    )


@pytest.mark.parametrize("capacity_one, capacity_all", [(1.0, None), (0.5, 1.0)], ids=["quiet", "two-busy-neighbours"])
def test_served_step_costs_reads_back_the_serving_costs_of_a_run_the_model_predicted(capacity_one, capacity_all):
    # A 2 ms env: beside busy processes its steps take longer than 2 ms of wall time, and the probe must
    # not count that as serving (it once read +5.7 ms a served step there).
    c = dataclasses.replace(
        costs(2 * MS, MLP, spread=0.0, capacity_one=capacity_one, capacity_all=capacity_all),
        served_step_s=150 * US,
        served_step_per_doubling_s=60 * US,
    )
    T = 8

    def run(workers: int) -> SamplerRun:
        per_step = 1 / predict(Layout("gpu", workers), c, 8, T).steps_per_s * 8
        return SamplerRun(per_step, MLP(8) + 100 * US, 0.0)

    served = served_step_costs({1: run(1), 2: run(2)}, c, 8, T)
    assert served.step_s == pytest.approx(150 * US, rel=1e-6)
    assert served.per_doubling_s == pytest.approx(60 * US, rel=1e-6)


@pytest.mark.parametrize("capacity_one, capacity_all", [(1.0, None), (0.5, 1.0)], ids=["quiet", "two-busy-neighbours"])
def test_cpu_worker_extra_reads_back_what_a_cpusampler_run_the_model_predicted_paid(capacity_one, capacity_all):
    base = costs(15 * US, MLP, capacity_one=capacity_one, capacity_all=capacity_all)
    paid = dataclasses.replace(base, cpu_worker_s=40 * US)
    B, T = 8, 32
    wall_s = B / predict(Layout("cpu", 2), paid, B, T).steps_per_s  # seconds per time step of the batch
    assert cpu_worker_extra(wall_s, base, 2, B, T) == pytest.approx(40 * US, rel=1e-6)
    assert cpu_worker_extra(0.8 * wall_s, base, 2, B, T) == 0.0  # faster than its parts: no negative extra


def test_cpu_worker_extra_slows_cpu_layouts_alone():
    base = costs(15 * US, MLP)
    slower = dataclasses.replace(base, cpu_worker_s=50 * US)
    for layout in (Layout("serial"), Layout("gpu", 2), Layout("alternating", 2)):
        assert predict(layout, slower, 8, 32).steps_per_s == predict(layout, base, 8, 32).steps_per_s
    assert predict(Layout("cpu", 2), slower, 8, 32).steps_per_s < predict(Layout("cpu", 2), base, 8, 32).steps_per_s
