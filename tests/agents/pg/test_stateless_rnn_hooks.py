"""The recurrent ``...Base`` agents share one set of stateless recurrent hooks (StatelessRnnHooks), and
RecurrentAgentMixin, put before them, replaces those hooks with its memory's in every recurrent agent."""

from __future__ import annotations

import pytest
import torch

from rlrun.agents.dqn.r2d1_agent import R2d1Agent, R2d1AgentBase
from rlrun.agents.pg.categorical import RecurrentCategoricalPgAgent, RecurrentCategoricalPgAgentBase
from rlrun.agents.pg.gaussian import RecurrentGaussianPgAgent, RecurrentGaussianPgAgentBase
from rlrun.agents.recurrent_state import StatelessRnnHooks

pytestmark = pytest.mark.timeout(60)

B = 3
DISCRETE = [(RecurrentCategoricalPgAgentBase, RecurrentCategoricalPgAgent), (R2d1AgentBase, R2d1Agent)]


def inputs(env, B):
    obs = torch.as_tensor(env.observation_space.sample(), dtype=torch.float32).expand(B, -1).clone()
    action = torch.as_tensor(env.action_space.sample()).expand(B, *env.action_space.shape).clone()
    return obs, action, torch.zeros(B)


def check(base_cls, agent_cls, env):
    assert issubclass(base_cls, StatelessRnnHooks) and issubclass(agent_cls, StatelessRnnHooks)
    base = base_cls()
    base.initialize(env.spaces)
    base.sample_mode(0)
    base.step(*inputs(env, B))
    # Without RecurrentAgentMixin nothing is kept: each step starts from zeros, no env marked as starting.
    assert base.prev_rnn_state is None and base.episode_starts(B) is None

    agent = agent_cls()
    agent.initialize(env.spaces)
    agent.sample_mode(0)
    agent.reset()
    assert agent.episode_starts(B).all()  # the mixin's hooks: after a reset every env starts
    agent.step(*inputs(env, B))
    assert agent.prev_rnn_state is not None and agent.episode_starts(B) is None


@pytest.mark.parametrize(("base_cls", "agent_cls"), DISCRETE)
def test_discrete_recurrent_agents(base_cls, agent_cls, cartpole):
    check(base_cls, agent_cls, cartpole)


def test_gaussian_recurrent_agents(pendulum):
    check(RecurrentGaussianPgAgentBase, RecurrentGaussianPgAgent, pendulum)
