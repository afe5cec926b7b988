"""CategoricalDQN: the projection and the loss on hand-checked cases, and updates on real CartPole batches."""

import math

import pytest
import torch

from rlrun.agents.base import AgentInputs
from rlrun.agents.dqn.catdqn_agent import CatDqnAgent
from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.algos.dqn.cat_dqn import CategoricalDQN, project_distribution
from rlrun.envs.gym import make
from rlrun.replays.non_sequence.n_step import SamplesFromReplay, SamplesFromReplayTl
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.collections import namedarraytuple

pytestmark = pytest.mark.timeout(60)

SamplesWithWeights = namedarraytuple("SamplesWithWeights", SamplesFromReplay._fields + ("is_weights",))


# --- the projection: atoms -1, 0, 1 ------------------------------------------------------------------


def project(p, values):
    return project_distribution(torch.tensor(p), torch.tensor(values), -1.0, 1.0)


def test_values_on_atoms_keep_their_mass():
    torch.testing.assert_close(project([[0.2, 0.5, 0.3]], [[-1.0, 0.0, 1.0]]), torch.tensor([[0.2, 0.5, 0.3]]))
    # Shifted by a whole atom: the mass moves one atom up, the top atom's stays on the top.
    torch.testing.assert_close(project([[0.2, 0.5, 0.3]], [[0.0, 1.0, 2.0]]), torch.tensor([[0.0, 0.2, 0.8]]))


def test_values_between_atoms_split_by_closeness_and_outside_values_go_to_the_ends():
    # -2 -> the bottom atom; 0.25 -> 3/4 to atom 0 and 1/4 to atom 1; 1 -> the top atom.
    got = project([[0.2, 0.5, 0.3]], [[-2.0, 0.25, 1.0]])
    torch.testing.assert_close(got, torch.tensor([[0.2, 0.375, 0.425]]))
    # All above V_max, all below V_min.
    torch.testing.assert_close(project([[0.2, 0.5, 0.3]], [[1.5, 3.0, 7.0]]), torch.tensor([[0.0, 0.0, 1.0]]))
    torch.testing.assert_close(project([[0.2, 0.5, 0.3]], [[-9.0, -1.5, -1.0]]), torch.tensor([[1.0, 0.0, 0.0]]))


def test_a_terminal_window_puts_all_mass_around_its_return():
    # done_n: every next value is the return itself, -0.25: 1/4 on atom -1, 3/4 on atom 0.
    torch.testing.assert_close(project([[0.2, 0.5, 0.3]], [[-0.25] * 3]), torch.tensor([[0.25, 0.75, 0.0]]))


def test_projection_keeps_mass_and_the_mean_inside_the_support():
    torch.manual_seed(0)
    p = torch.softmax(torch.randn(64, 11), -1)
    values = 3 * torch.randn(64, 11)
    out = project_distribution(p, values, -2.0, 2.0)
    z = torch.linspace(-2, 2, 11)
    torch.testing.assert_close(out.sum(-1), torch.ones(64))
    torch.testing.assert_close(out @ z, (p * values.clamp(-2, 2)).sum(-1))  # linear split keeps the mean


def test_projection_refuses_mismatched_shapes_and_a_single_atom():
    with pytest.raises(ValueError, match="must match"):
        project_distribution(torch.ones(2, 3), torch.ones(2, 4), -1.0, 1.0)
    with pytest.raises(ValueError, match="n_atoms >= 2"):
        project_distribution(torch.ones(2, 1), torch.ones(2, 1), -1.0, 1.0)


# --- the loss on a tiny batch -------------------------------------------------------------------------


class TableModel(torch.nn.Module):
    """Probabilities ``[A, n_atoms]`` looked up by the observation's first entry (a state index)."""

    def __init__(self, observation_shape=None, action_size=None, n_atoms=3):
        super().__init__()
        # State 0: action 0 [.2, .5, .3], action 1 [.1, .6, .3]. State 1, per action: expected Q 1 and -1.
        self.table = torch.nn.Parameter(
            torch.tensor(
                [
                    [[0.2, 0.5, 0.3], [0.1, 0.6, 0.3]],
                    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]],
                ]
            )
        )

    def forward(self, observation, prev_action, prev_reward):
        return self.table[observation[..., 0].long()]


def make_algo(n_step_return=1, **kwargs):
    """CategoricalDQN(discount=0.5) on atoms -1, 0, 1 with a TableModel agent. The target network at
    state 1 gives action 0 [.5, .25, .25] (expected -0.25) and action 1 [0, .5, .5] (expected 0.5)."""
    agent = CatDqnAgent(ModelCls=TableModel, n_atoms=3)
    agent.initialize(make(id="CartPole-v1").spaces)
    with torch.no_grad():
        agent.target_model.table[1] = torch.tensor([[0.5, 0.25, 0.25], [0.0, 0.5, 0.5]])
    algo = CategoricalDQN(V_min=-1, V_max=1, discount=0.5, n_step_return=n_step_return, **kwargs)
    algo.agent = agent
    agent.give_V_min_max(-1, 1)
    return algo


def loss_of(samples, n_step_return=1, **kwargs):
    return make_algo(n_step_return, **kwargs).loss(samples)


def state(*indexes):
    return torch.tensor([[float(i), 0.0, 0.0, 0.0] for i in indexes])


def two_samples(cls=SamplesFromReplay, **extra):
    # Sample 0: state 0, action 1, return 0.5, next state 1. Sample 1: state 0, action 0, return -0.25, done_n.
    zeros = torch.zeros(2)
    return cls(
        agent_inputs=AgentInputs(state(0, 0), torch.zeros(2, dtype=torch.long), zeros),
        action=torch.tensor([1, 0]),
        return_=torch.tensor([0.5, -0.25]),
        done=torch.tensor([False, False]),
        done_n=torch.tensor([False, True]),
        target_inputs=AgentInputs(state(1, 1), torch.zeros(2, dtype=torch.long), zeros),
        **extra,
    )


def cross_entropy(target, p):
    return -sum(t * math.log(q) for t, q in zip(target, p) if t > 0)


def entropy(target):
    return -sum(t * math.log(t) for t in target if t > 0)


# Sample 1 in every case: all mass at -0.25 -> target [.25, .75, 0] against online [.2, .5, .3].
CE1 = cross_entropy([0.25, 0.75, 0.0], [0.2, 0.5, 0.3])
KL1 = CE1 - entropy([0.25, 0.75, 0.0])


def test_loss_is_the_cross_entropy_to_the_projected_target_and_errors_are_kl():
    # Sample 0: target's greedy next action is 1 (0.5 > -0.25): masses [0, .5, .5] at 0.5 + 0.5 z =
    # [0, .5, 1] -> target [0, .25, .75] against online (state 0, action 1) [.1, .6, .3].
    target0 = [0.0, 0.25, 0.75]
    ce0 = cross_entropy(target0, [0.1, 0.6, 0.3])
    loss, kl = loss_of(two_samples())
    assert loss.item() == pytest.approx((ce0 + CE1) / 2, rel=1e-5)
    torch.testing.assert_close(kl, torch.tensor([ce0 - entropy(target0), KL1]))
    assert not kl.requires_grad and loss.requires_grad


def test_double_dqn_picks_the_next_action_by_the_online_expected_q():
    # The online network prefers action 0 at state 1 (expected 1 > -1): the target's action 0
    # [.5, .25, .25] at [0, .5, 1] -> [0, .625, .375].
    loss, _ = loss_of(two_samples(), double_dqn=True)
    assert loss.item() == pytest.approx((cross_entropy([0.0, 0.625, 0.375], [0.1, 0.6, 0.3]) + CE1) / 2, rel=1e-5)


def test_n_step_target_shrinks_the_support_by_discount_to_the_n():
    # n = 2: [0, .5, .5] at 0.5 + 0.25 z = [.25, .5, .75] -> [0, .375, .625].
    loss, _ = loss_of(two_samples(), n_step_return=2)
    assert loss.item() == pytest.approx((cross_entropy([0.0, 0.375, 0.625], [0.1, 0.6, 0.3]) + CE1) / 2, rel=1e-5)


def test_time_limit_windows_use_their_own_step_count():
    # n_step_return = 3, but sample 0's window was cut after 1 step: the same target as with n = 1.
    samples = two_samples(
        SamplesFromReplayTl,
        timeout=torch.tensor([True, False]),
        timeout_n=torch.tensor([True, False]),
        steps_n=torch.tensor([1, 3]),
    )
    loss, _ = loss_of(samples, n_step_return=3)
    assert loss.item() == pytest.approx((cross_entropy([0.0, 0.25, 0.75], [0.1, 0.6, 0.3]) + CE1) / 2, rel=1e-5)


def test_importance_weights_scale_each_sample_loss_but_not_the_errors():
    ce0 = cross_entropy([0.0, 0.25, 0.75], [0.1, 0.6, 0.3])
    plain_loss, plain_kl = loss_of(two_samples())
    loss, kl = loss_of(two_samples(SamplesWithWeights, is_weights=torch.tensor([2.0, 0.5])))
    assert loss.item() == pytest.approx((2 * ce0 + 0.5 * CE1) / 2, rel=1e-5)
    torch.testing.assert_close(kl, plain_kl)


def test_gradient_flows_into_the_online_distributions_only():
    algo = make_algo(double_dqn=True)
    loss, _ = algo.loss(two_samples())
    loss.backward()
    grad = algo.agent.model.table.grad
    assert grad[0].abs().sum() > 0  # state 0: the actions taken
    assert grad[1].abs().sum() == 0  # state 1 only chose the next action (no grad through the target side)
    assert all(p.grad is None for p in algo.agent.target_model.parameters())


# --- keywords, wiring and updates on real batches -----------------------------------------------------


def test_keywords_defaults_and_adam_eps():
    algo = CategoricalDQN(batch_size=64)
    assert (algo.V_min, algo.V_max) == (-10, 10)
    assert algo.optim_kwargs["eps"] == pytest.approx(0.01 / 64)
    # Given optim_kwargs without eps still get the C51 eps; an explicit one is kept; SGD takes none.
    assert CategoricalDQN(batch_size=32, optim_kwargs={}).optim_kwargs == {"eps": 0.01 / 32}
    assert CategoricalDQN(optim_kwargs=dict(eps=1e-4)).optim_kwargs == {"eps": 1e-4}
    assert CategoricalDQN(OptimCls=torch.optim.SGD, optim_kwargs={}).optim_kwargs == {}
    with pytest.raises(ValueError, match="V_min must be below V_max"):
        CategoricalDQN(V_min=1, V_max=1)


@pytest.fixture
def cat_run():
    samplers = []

    def run(algo, agent, T=8, B=2, seed=0):
        torch.manual_seed(seed)
        sampler = SerialSampler(make, dict(id="CartPole-v1"), batch_T=T, batch_B=B, max_decorrelation_steps=0)
        samplers.append(sampler)
        examples = sampler.initialize(agent, seed=seed, bootstrap_value=algo.bootstrap_value)
        algo.initialize(agent, 100, sampler.batch_spec, sampler.mid_batch_reset, examples)

        def step(itr):
            agent.sample_mode(itr)
            samples, _ = sampler.obtain_samples(itr)
            agent.train_mode(itr)
            return samples, algo.optimize_agent(itr, samples)

        return step

    yield run
    for sampler in samplers:
        sampler.shutdown()


def test_initialize_gives_the_agent_the_support_and_updates_run(cat_run):
    agent = CatDqnAgent(n_atoms=21)
    algo = CategoricalDQN(V_min=0, V_max=50, min_steps_learn=16, replay_size=1000, n_step_return=3, double_dqn=True)
    step = cat_run(algo, agent)
    torch.testing.assert_close(agent.distribution.z, torch.linspace(0, 50, 21))
    assert (agent.V_min, agent.V_max) == (0.0, 50.0)
    assert algo.updates_per_optimize == 4 and algo.min_itr_learn == 1  # 16 steps * ratio 8 / batch 32
    losses = []
    for itr in range(4):
        samples, opt_info = step(itr)
        losses += opt_info.loss
    assert samples.agent.agent_info.p.shape == (8, 2, 2, 21)
    assert len(losses) == 3 * 4 and all(math.isfinite(x) and x > 0 for x in losses)
    assert all(x > 0 for x in opt_info.tdAbsErr)


def test_prioritized_replay_gets_kl_priorities(cat_run):
    algo = CategoricalDQN(min_steps_learn=16, replay_size=1000, prioritized_replay=True)
    step = cat_run(algo, CatDqnAgent(n_atoms=11))
    given = []
    update = algo.replay_buffer.update_batch_priorities
    algo.replay_buffer.update_batch_priorities = lambda priorities: (given.append(priorities), update(priorities))
    for itr in range(4):
        _, opt_info = step(itr)
    assert len(given) == 3 * 4 and all(p.shape == (32,) and (p > 0).all() for p in given)
    assert opt_info.tdAbsErr == pytest.approx([p.mean().item() for p in given[-4:]])  # the KL divergences


def test_a_scalar_q_agent_is_refused():
    agent = DqnAgent()
    agent.initialize(make(id="CartPole-v1").spaces)
    with pytest.raises(TypeError, match="CatDqnAgent"):
        CategoricalDQN().initialize(agent, 10, None, True, examples={})
