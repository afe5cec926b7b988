"""PPO on real CartPole batches: updates, the linear schedule, and the clipped objective."""

import math

import pytest
import torch

from rlrun.agents.base import AgentInputs
from rlrun.algos.pg.ppo import PPO
from rlrun.distributions.categorical import DistInfo
from rlrun.utils.tensor import select_at_indexes


def test_ppo_takes_epochs_times_minibatches_steps_and_changes_parameters(pg_run):
    algo = PPO(epochs=3, minibatches=4)
    agent, _, samples = pg_run(algo, T=16, B=4)
    before = [p.detach().clone() for p in agent.parameters()]
    opt_info = algo.optimize_agent(0, samples)
    assert any(not torch.equal(b, p) for b, p in zip(before, agent.parameters()))
    assert algo.update_counter == 12 and algo.batch_size == 16
    assert opt_info._fields == algo.opt_info_fields
    for name, values in opt_info._asdict().items():
        assert len(values) == 12 and all(math.isfinite(v) for v in values), name
    # The first minibatch sees the sampling policy itself: ratio 1, nothing clipped, no KL.
    assert opt_info.clipFraction[0] == 0 and abs(opt_info.approxKl[0]) < 1e-6


@pytest.mark.parametrize("itr", [0, 4, 9])
def test_linear_schedule_scales_lr_and_ratio_clip_by_remaining_iterations(pg_run, itr):
    algo = PPO(learning_rate=0.01, ratio_clip=0.2, epochs=1, minibatches=1)
    _, _, samples = pg_run(algo, n_itr=10)
    algo.optimize_agent(itr, samples)
    assert algo.optimizer.param_groups[0]["lr"] == pytest.approx(0.01 * (10 - itr) / 10)
    assert algo.current_ratio_clip == pytest.approx(0.2 * (10 - itr) / 10)


def test_linear_schedule_can_leave_the_ratio_clip_fixed(pg_run):
    algo = PPO(learning_rate=0.01, ratio_clip=0.2, anneal_ratio_clip=False, epochs=1, minibatches=1)
    _, _, samples = pg_run(algo, n_itr=10)
    algo.optimize_agent(6, samples)
    assert algo.optimizer.param_groups[0]["lr"] == pytest.approx(0.01 * 4 / 10)
    assert algo.current_ratio_clip == 0.2  # what ``loss`` clips at


def test_without_linear_schedule_lr_stays(pg_run):
    algo = PPO(learning_rate=0.01, linear_lr_schedule=False, epochs=1, minibatches=1)
    _, _, samples = pg_run(algo, n_itr=10)
    algo.optimize_agent(9, samples)
    assert algo.optimizer.param_groups[0]["lr"] == 0.01 and algo.current_ratio_clip == 0.1


@pytest.mark.parametrize(
    ("ratio", "advantage", "clipped"),
    [
        (1.5, 1.0, True),  # above 1 + eps with a positive advantage: no incentive to go further
        (0.5, -1.0, True),  # below 1 - eps with a negative advantage: same, downwards
        (1.05, 1.0, False),  # inside the clip range
        (1.5, -1.0, False),  # the pessimistic (unclipped) term is the minimum
    ],
)
def test_policy_gradient_is_zero_exactly_where_the_ratio_is_clipped(pg_run, ratio, advantage, clipped):
    algo = PPO(value_loss_coeff=0.0, entropy_loss_coeff=0.0, ratio_clip=0.1)
    agent, _, samples = pg_run(algo, T=2, B=4)
    inputs = AgentInputs(samples.env.observation[0], samples.agent.prev_action[0], samples.env.prev_reward[0])
    action = samples.agent.action[0]
    with torch.no_grad():
        prob = agent(*inputs)[0].prob
    # An old policy under which the taken action was `ratio` times less likely (two actions).
    old_p_action = select_at_indexes(action, prob) / ratio
    old_prob = torch.stack([old_p_action, 1 - old_p_action], dim=-1)
    old_prob = torch.where(action.unsqueeze(-1) == 0, old_prob, old_prob.flip(-1))

    terms = algo.loss(inputs, action, torch.zeros(4), torch.full((4,), advantage), None, DistInfo(old_prob))
    algo.optimizer.zero_grad()
    terms.loss.backward()
    grad_norm = sum(float(p.grad.abs().sum()) for p in agent.parameters() if p.grad is not None)
    assert (grad_norm == 0) == clipped
    assert terms.clip_fraction.item() == (1.0 if ratio != 1.05 else 0.0)


def test_more_minibatches_than_steps_is_refused(pg_run):
    with pytest.raises(ValueError, match="lower minibatches"):
        pg_run(PPO(minibatches=100), T=4, B=2)
