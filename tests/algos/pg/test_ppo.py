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


class RecordingPPO(PPO):
    """Keeps what each minibatch's loss was given."""

    def loss(self, agent_inputs, action, return_, advantage, valid, old_dist_info, init_rnn_state=None, **kwargs):
        self.seen.append((advantage.detach().clone(), kwargs.get("old_value")))
        return super().loss(agent_inputs, action, return_, advantage, valid, old_dist_info, init_rnn_state, **kwargs)


@pytest.mark.parametrize("per_minibatch", [False, True])
def test_advantages_can_be_normalised_in_each_minibatch(pg_run, per_minibatch):
    algo = RecordingPPO(epochs=2, minibatches=4, minibatch_advantage_norm=per_minibatch)
    algo.seen = []
    _, _, samples = pg_run(algo, T=16, B=4)
    algo.optimize_agent(0, samples)
    assert len(algo.seen) == 8
    for advantage, old_value in algo.seen:
        assert advantage.shape == (16,) and old_value is None  # no value_clip: loss() gets rlpyt's arguments
        normal = abs(float(advantage.mean())) < 1e-5 and float(advantage.std(correction=0)) == pytest.approx(
            1, abs=1e-4
        )
        assert normal == per_minibatch


def test_value_clip_gives_the_loss_the_sampled_values_of_its_minibatch(pg_run):
    algo = RecordingPPO(epochs=1, minibatches=2, value_clip=0.2)
    algo.seen = []
    _, _, samples = pg_run(algo, T=8, B=4)
    algo.optimize_agent(0, samples)
    flat_values = samples.agent.agent_info.value.transpose(0, 1).reshape(-1)  # env-major, as PPO indexes
    seen_values = torch.cat([old_value for _, old_value in algo.seen])
    assert sorted(seen_values.tolist()) == sorted(flat_values.tolist())  # each sampled step once per epoch


@pytest.mark.parametrize("value_clip", [None, 0.1])
def test_a_clipped_value_error_that_is_the_larger_gives_no_gradient(pg_run, value_clip):
    algo = PPO(value_loss_coeff=1.0, entropy_loss_coeff=0.0, value_clip=value_clip)
    agent, _, samples = pg_run(algo, T=2, B=4)
    inputs = AgentInputs(samples.env.observation[0], samples.agent.prev_action[0], samples.env.prev_reward[0])
    action, dist_info = samples.agent.action[0], samples.agent.agent_info.dist_info[0]
    with torch.no_grad():
        value = agent(*inputs)[1]
    # The new value equals the return, but the sampled one was 2 above it: moved by more than the clip.
    terms = algo.loss(inputs, action, value, torch.zeros(4), None, dist_info, old_value=value + 2)
    algo.optimizer.zero_grad()
    terms.loss.backward()
    value_grads = sum(float(p.grad.abs().sum()) for p in agent.model.v.parameters())
    if value_clip is None:  # the error is zero: nothing to learn
        assert float(terms.value_loss.detach()) == pytest.approx(0, abs=1e-10) and value_grads == 0
    else:  # the clipped value, 2 - 0.1 above the return, is the larger error; it does not depend on the new value
        assert float(terms.value_loss.detach()) == pytest.approx(0.5 * 1.9**2, rel=1e-5) and value_grads == 0


def test_value_clip_changes_nothing_while_the_value_is_where_it_was_sampled(pg_run):
    losses = []
    for value_clip in (None, 0.5):
        algo = PPO(value_loss_coeff=1.0, entropy_loss_coeff=0.0, value_clip=value_clip)
        agent, _, samples = pg_run(algo, T=2, B=4)
        inputs = AgentInputs(samples.env.observation[0], samples.agent.prev_action[0], samples.env.prev_reward[0])
        with torch.no_grad():
            value = agent(*inputs)[1]
        terms = algo.loss(inputs, samples.agent.action[0], value + 1, torch.zeros(4), None,
                          samples.agent.agent_info.dist_info[0], old_value=value)  # fmt: skip
        losses.append(float(terms.value_loss.detach()))
    assert losses[0] == pytest.approx(0.5) and losses[1] == pytest.approx(losses[0])


def test_a_value_clip_that_is_not_positive_is_refused():
    with pytest.raises(ValueError, match="value_clip must be positive"):
        PPO(value_clip=0.0)


def test_lr_schedule_steps_stretches_the_schedule_and_keeps_a_fixed_clip(pg_run):
    """CleanRL's Atari run as learning_pong.py reads it: the rate decays over 4x the run, the clip stays."""
    algo = PPO(learning_rate=0.01, epochs=1, minibatches=1, anneal_ratio_clip=False, lr_schedule_steps=4 * 10 * 64)
    _, _, samples = pg_run(algo, n_itr=10)  # 64 steps per iteration
    algo.optimize_agent(8, samples)
    assert algo.optimizer.param_groups[0]["lr"] == pytest.approx(0.01 * 32 / 40)
    assert algo.current_ratio_clip == 0.1
    with pytest.raises(ValueError, match="pass linear_lr_schedule=True with it"):
        PPO(linear_lr_schedule=False, lr_schedule_steps=640)
