"""CatDqnAgent and AtariCatDqnAgent: distributions per action, the support, and epsilon-greedy on expected Q."""

import pytest
import torch

from rlrun.agents.dqn.atari.atari_catdqn_agent import AtariCatDqnAgent
from rlrun.agents.dqn.catdqn_agent import CatDqnAgent
from rlrun.distributions.epsilon_greedy import CategoricalEpsilonGreedy
from rlrun.models.dqn.atari_catdqn_model import AtariCatDqnModel
from rlrun.models.dqn.catdqn_mlp import CatDqnMlpModel

pytestmark = pytest.mark.timeout(60)

B, T = 4, 3


def batch(*lead):
    return torch.randn(*lead, 4), torch.zeros(lead, dtype=torch.long), torch.zeros(lead)


def make_agent(spaces, **kwargs):
    agent = CatDqnAgent(**kwargs)
    agent.initialize(spaces)
    return agent


def test_default_model_gets_n_atoms_and_the_distribution_the_support(cartpole):
    agent = make_agent(cartpole.spaces, n_atoms=11, model_kwargs=dict(dueling=True))
    assert isinstance(agent.model, CatDqnMlpModel) and agent.model.n_atoms == 11
    assert agent.model_kwargs == dict(dueling=True, n_atoms=11)
    assert isinstance(agent.distribution, CategoricalEpsilonGreedy) and agent.distribution.dim == 2
    torch.testing.assert_close(agent.distribution.z, torch.linspace(-10, 10, 11))
    agent.give_V_min_max(0, 100)
    torch.testing.assert_close(agent.distribution.z, torch.linspace(0, 100, 11))
    assert (agent.V_min, agent.V_max) == (0.0, 100.0)


def test_step_gives_actions_and_probabilities_without_grad(cartpole):
    agent = make_agent(cartpole.spaces)
    agent.sample_mode(0)
    step = agent.step(*batch(B))
    assert step.action.shape == (B,) and step.action.dtype == torch.long
    assert step.agent_info._fields == ("p",)
    p = step.agent_info.p
    assert p.shape == (B, 2, 51) and not p.requires_grad
    torch.testing.assert_close(p.sum(-1), torch.ones(B, 2))


def test_call_and_target_give_distributions_with_and_without_grad(cartpole):
    agent = make_agent(cartpole.spaces, n_atoms=5)
    inputs = batch(T, B)
    p = agent(*inputs)
    assert p.shape == (T, B, 2, 5) and p.requires_grad
    target_p = agent.target(*inputs)
    assert target_p.shape == (T, B, 2, 5) and not target_p.requires_grad
    torch.testing.assert_close(target_p, p.detach())  # the target starts as a copy


def test_greedy_action_maximises_the_expected_q_whatever_the_support(cartpole):
    agent = make_agent(cartpole.spaces, n_atoms=7, eps_eval=0.0)
    agent.eval_mode(1)
    inputs = batch(200)
    step = agent.step(*inputs)
    torch.testing.assert_close(step.action, (step.agent_info.p @ torch.linspace(-10, 10, 7)).argmax(-1))
    agent.give_V_min_max(-3, 250)  # an increasing affine map of the atoms: the same argmax
    torch.testing.assert_close(agent.step(*inputs).action, step.action)


def test_per_env_epsilons_survive_the_distribution_swap(cartpole):
    agent = CatDqnAgent(eps_final_min=0.01, eps_final=0.1)
    agent.initialize(cartpole.spaces, global_B=4, env_ranks=[0, 1, 2, 3])
    agent.sample_mode(10**6)
    torch.testing.assert_close(agent.distribution.epsilon, torch.logspace(-2, -1, 4))


def test_n_atoms_is_checked(cartpole):
    with pytest.raises(ValueError, match="n_atoms=5 but the agent has n_atoms=51"):
        CatDqnAgent(model_kwargs=dict(n_atoms=5))
    with pytest.raises(ValueError, match="at least 2"):
        CatDqnAgent(n_atoms=1)
    agent = make_agent(cartpole.spaces, n_atoms=3)
    with pytest.raises(ValueError, match="V_min must be below V_max"):
        agent.give_V_min_max(1, -1)


def test_state_dict_round_trip_keeps_model_and_target(cartpole):
    agent = make_agent(cartpole.spaces, n_atoms=5)
    other = make_agent(cartpole.spaces, n_atoms=5)
    other.load_state_dict(agent.state_dict())
    inputs = batch(B)
    torch.testing.assert_close(other.target(*inputs), agent.target(*inputs))


def test_atari_agent_steps_on_uint8_frames(atari_spaces):
    agent = AtariCatDqnAgent(n_atoms=11, model_kwargs=dict(dueling=True))
    agent.initialize(atari_spaces)
    agent.sample_mode(0)
    assert isinstance(agent.model, AtariCatDqnModel) and agent.model.dueling
    frames = torch.randint(0, 256, (3, 4, 104, 80), dtype=torch.uint8)
    step = agent.step(frames, torch.zeros(3, dtype=torch.long), torch.zeros(3))
    assert step.action.shape == (3,) and step.agent_info.p.shape == (3, 6, 11)
    assert ((step.action >= 0) & (step.action < 6)).all()
    p = agent(frames[None], torch.zeros(1, 3, dtype=torch.long), torch.zeros(1, 3))
    assert p.shape == (1, 3, 6, 11) and p.requires_grad
