"""A2C on real CartPole batches."""

import math

import pytest
import torch

from rlrun.algos.pg.a2c import A2C


def params_of(agent):
    return [p.detach().clone() for p in agent.parameters()]


def changed(before, agent):
    return any(not torch.equal(b, p) for b, p in zip(before, agent.parameters()))


def test_a2c_one_step_changes_parameters_and_reports_one_value_per_field(pg_run):
    algo = A2C()
    agent, _, samples = pg_run(algo)
    before = params_of(agent)
    opt_info = algo.optimize_agent(0, samples)
    assert changed(before, agent)
    assert algo.update_counter == 1
    assert opt_info._fields == algo.opt_info_fields
    for name, values in opt_info._asdict().items():
        assert len(values) == 1 and math.isfinite(values[0]), name
    # A fresh two-action policy is near uniform: entropy ln 2, perplexity 2.
    assert abs(opt_info.entropy[0] - math.log(2)) < 0.05
    assert abs(opt_info.loss[0] - (opt_info.piLoss[0] + opt_info.valueLoss[0] - 0.01 * opt_info.entropy[0])) < 1e-4


def test_a2c_gradient_norm_is_clipped(pg_run):
    algo = A2C(clip_grad_norm=1e-3, learning_rate=1.0, OptimCls=torch.optim.SGD)
    agent, _, samples = pg_run(algo)
    before = params_of(agent)
    algo.optimize_agent(0, samples)
    step = sum(((b - p.detach()) ** 2).sum() for b, p in zip(before, agent.parameters())) ** 0.5
    assert step <= 1e-3 + 1e-6  # SGD with lr 1 moves by exactly the clipped gradient


@pytest.mark.parametrize("itr", [0, 5, 9])
def test_a2c_linear_lr_schedule_scales_lr_by_remaining_iterations(pg_run, itr):
    algo = A2C(learning_rate=1e-3, linear_lr_schedule=True)
    _, _, samples = pg_run(algo, n_itr=10)
    algo.optimize_agent(itr, samples)
    assert algo.optimizer.param_groups[0]["lr"] == pytest.approx(1e-3 * (10 - itr) / 10)


def test_a2c_without_linear_lr_schedule_keeps_its_lr(pg_run):
    algo = A2C(learning_rate=1e-3)
    _, _, samples = pg_run(algo, n_itr=10)
    algo.optimize_agent(9, samples)
    assert algo.optimizer.param_groups[0]["lr"] == pytest.approx(1e-3)


@pytest.mark.parametrize(("itr", "fraction"), [(0, 1.0), (5, 0.875), (9, 0.775), (50, 0.0)])
def test_lr_schedule_steps_puts_the_schedules_zero_past_the_runs_end(pg_run, itr, fraction):
    """A 10-iteration run of 64 steps each, on a schedule of 2,560 steps (40 iterations): the rate at
    iteration 9 is still 31/40 of the initial one, as in a published run read at a quarter of its length."""
    algo = A2C(learning_rate=1e-3, linear_lr_schedule=True, lr_schedule_steps=2560)
    _, _, samples = pg_run(algo, n_itr=10)  # T=16, B=4: 64 steps per iteration
    algo.optimize_agent(itr, samples)
    assert algo.optimizer.param_groups[0]["lr"] == pytest.approx(1e-3 * fraction)


@pytest.mark.parametrize("bad", [0, -5, True])
def test_lr_schedule_steps_must_be_positive(bad):
    with pytest.raises(ValueError, match="lr_schedule_steps must be a positive number of env steps"):
        A2C(linear_lr_schedule=True, lr_schedule_steps=bad)


def test_lr_schedule_steps_without_the_schedule_is_refused():
    with pytest.raises(ValueError, match="pass linear_lr_schedule=True with it"):
        A2C(lr_schedule_steps=1000)
