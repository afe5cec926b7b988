"""Diagnostics on its own: what a log row is computed from, and its part of a checkpoint."""

from __future__ import annotations

import math

from rlrun.runners.diagnostics import Diagnostics
from rlrun.utils.collections import namedtuple


def traj(length: int, ret: float) -> dict:
    return dict(Length=length, Return=ret)


def test_the_window_keeps_the_last_trajectories_and_counts_new_ones_until_a_row_is_written():
    d = Diagnostics(("loss",), ("Length", "Return"), traj_window=2, itr_batch_size=10)
    d.add_trajs([traj(3, 1.0), traj(4, 2.0), traj(5, 6.0)])
    d.itr_done(0)
    assert d.cum_completed_trajs == 3 and d.new_completed_trajs == 3
    assert d.latest_return() == 4.0  # (2 + 6) / 2: the window holds the last two
    assert d.window_columns() == dict(NewCompletedTrajs=3, StepsInTrajWindow=9)
    no_window = Diagnostics(traj_window=None)
    no_window.add_trajs([traj(3, 1.0)])
    assert no_window.cum_completed_trajs == 1 and no_window.new_completed_trajs == 0
    assert no_window.latest_return() is None  # until a row reports a ReturnAverage
    no_window.last_row = {"ReturnAverage": 7.0}
    assert no_window.latest_return() == 7.0


def test_rates_are_nan_without_new_iterations_and_replay_ratio_needs_an_integer_batch_size():
    d = Diagnostics(itr_batch_size=8, world_size=2)
    first = d.own_columns(0, update_counter=0, algo_batch_size=32, eval_time=0.0)
    assert math.isnan(first["StepsPerSecond"]) and math.isnan(first["ReplayRatio"])
    d.itr_done(3)  # 4 iterations of 8 steps
    row = d.own_columns(3, update_counter=2, algo_batch_size=32, eval_time=0.0)
    assert row["CumSteps"] == 32
    assert row["ReplayRatio"] == 2 * 32 * 2 / 32  # updates x batch x ranks per new sample
    assert row["StepsPerSecond"] > 0
    assert "ReplayRatio" not in d.own_columns(3, 2, algo_batch_size=None, eval_time=0.0)
    assert "ReplayRatio" not in d.own_columns(3, 2, algo_batch_size=True, eval_time=0.0)


def test_optimiser_values_collect_until_they_are_recorded():
    d = Diagnostics(("loss", "gradNorm"))
    d.add_opt_info(namedtuple("OptInfo", ["loss", "gradNorm"])(loss=[1.0, 2.0], gradNorm=0.5))
    d.add_opt_info(namedtuple("LossOnly", ["loss"])(loss=3.0))  # a field missing from an opt_info adds nothing
    d.add_opt_info(None)  # an algorithm that took no step
    assert d.opt_infos == dict(loss=[1.0, 2.0, 3.0], gradNorm=[0.5])


def test_state_dict_round_trip_keeps_counters_window_and_eval_times():
    d = Diagnostics(("loss",), ("Return",), traj_window=3, itr_batch_size=4)
    d.add_trajs([traj(2, 1.0), traj(3, 5.0)])
    d.add_opt_info(namedtuple("LossOnly", ["loss"])(loss=0.25))
    d.itr_done(6)
    d.add_eval_time(1.5)
    d.add_eval_time(0.5)
    e = Diagnostics(("loss",), ("Return",), traj_window=3, itr_batch_size=4)
    e.load_state_dict(d.state_dict())
    assert (e.itrs_done, e.cum_steps, e.cum_completed_trajs, e.new_completed_trajs) == (7, 28, 2, 2)
    assert list(e.traj_window or ()) == [traj(2, 1.0), traj(3, 5.0)]
    assert e.opt_infos == dict(loss=[0.25])
    assert (e.cum_eval_time, e.last_eval_time) == (2.0, 0.5)
    assert e.start_time <= d.start_time + 0.5  # time since the start carries over as a duration
