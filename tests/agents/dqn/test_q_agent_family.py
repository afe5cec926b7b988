"""The epsilon-greedy Q agents are siblings under EpsilonGreedyQAgent, and share its schedule and target.

DqnAgent, CatDqnAgent and R2d1Agent return different things from ``__call__`` (Q-values, distributions,
Q-values with a recurrent state), so none subclasses another; what they share must behave the same in each.
"""

import pytest
import torch

from rlrun.agents.dqn.catdqn_agent import CatDqnAgent
from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.dqn.q_agent import EpsilonGreedyQAgent
from rlrun.agents.dqn.r2d1_agent import R2d1Agent
from rlrun.algos.dqn.cat_dqn import CategoricalDQN
from rlrun.algos.dqn.dqn import DQN, QLearning
from rlrun.algos.dqn.r2d1 import R2D1

B = 3
AGENTS = [DqnAgent, CatDqnAgent, R2d1Agent]


def test_the_agents_are_siblings_not_subclasses():
    assert all(issubclass(cls, EpsilonGreedyQAgent) for cls in AGENTS)
    assert not issubclass(CatDqnAgent, DqnAgent) and not issubclass(R2d1Agent, DqnAgent)


def test_the_algorithms_share_qlearning_and_categorical_dqn_stays_a_dqn():
    assert issubclass(DQN, QLearning) and issubclass(R2D1, QLearning)
    assert not issubclass(R2D1, DQN)
    assert issubclass(CategoricalDQN, DQN)


@pytest.mark.parametrize("AgentCls", AGENTS)
def test_each_agent_anneals_epsilon_and_moves_its_target(AgentCls, cartpole):
    agent = AgentCls(eps_init=1.0, eps_final=0.0, eps_itr_min=0, eps_itr_max=10)
    agent.initialize(cartpole.spaces)
    agent.sample_mode(5)
    assert agent.distribution.epsilon == pytest.approx(0.5)
    agent.eval_mode(1)
    assert agent.distribution.epsilon == pytest.approx(agent.eps_eval)
    with torch.no_grad():
        for p in agent.model.parameters():
            p.add_(1.0)
    before = [p.clone() for p in agent.target_model.parameters()]
    agent.update_target(tau=0.5)
    for old, new, online in zip(before, agent.target_model.parameters(), agent.model.parameters(), strict=True):
        assert torch.allclose(new, 0.5 * old + 0.5 * online)
    state = agent.state_dict()
    fresh = AgentCls()
    fresh.initialize(cartpole.spaces)
    fresh.load_state_dict(state)
    for a, b in zip(fresh.target_model.parameters(), agent.target_model.parameters(), strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("AgentCls", AGENTS)
def test_each_agent_refuses_an_epsilon_outside_0_1_naming_itself(AgentCls):
    with pytest.raises(ValueError, match=rf"{AgentCls.__name__}: eps_final must be in \[0, 1\]"):
        AgentCls(eps_final=1.5)
