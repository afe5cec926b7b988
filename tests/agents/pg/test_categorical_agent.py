import numpy as np
import pytest
import torch

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.envs.base import EnvSpaces
from rlrun.models.pg.mlp import CategoricalPgMlpModel
from rlrun.spaces.composite import Composite
from rlrun.spaces.float_box import FloatBox
from rlrun.spaces.int_box import IntBox
from rlrun.utils.collections import namedarraytuple

B, T = 4, 3


def batch(*lead):
    return torch.randn(*lead, 4), torch.zeros(lead, dtype=torch.long), torch.zeros(lead)


@pytest.fixture
def agent(cartpole):
    agent = CategoricalPgAgent()
    agent.initialize(cartpole.spaces)
    agent.sample_mode(0)
    return agent


def test_default_model_is_the_mlp_sized_from_the_env(agent):
    assert isinstance(agent.model, CategoricalPgMlpModel)
    pi, v = agent.model(torch.randn(4), None, None)
    assert pi.shape == (2,)


def test_step_returns_cpu_actions_and_agent_info_without_grad(agent, cartpole):
    step = agent.step(*batch(B))
    assert step.action.shape == (B,) and step.action.dtype == torch.long
    assert step.agent_info.dist_info.prob.shape == (B, 2)
    assert step.agent_info.value.shape == (B,)
    for x in (step.action, step.agent_info.dist_info.prob, step.agent_info.value):
        assert x.device.type == "cpu"
        assert not x.requires_grad
    assert all(cartpole.action_space.contains(a) for a in step.action.numpy())


def test_call_on_a_t_by_b_batch_has_grad(agent):
    dist_info, value = agent(*batch(T, B))
    assert dist_info.prob.shape == (T, B, 2) and value.shape == (T, B)
    (dist_info.prob[..., 0].sum() + value.sum()).backward()
    assert all(p.grad is not None for p in agent.parameters())


def test_value_is_the_models_value_without_grad(agent):
    inputs = batch(B)
    v = agent.value(*inputs)
    assert v.shape == (B,) and not v.requires_grad
    torch.testing.assert_close(v, agent.step(*inputs).agent_info.value)


def test_agent_actions_drive_the_real_env(agent, cartpole):
    observation = cartpole.reset()
    prev_action, prev_reward = torch.tensor(0), torch.tensor(0.0)
    for _ in range(20):
        step = agent.step(torch.from_numpy(observation)[None], prev_action[None], prev_reward[None])
        action = step.action[0]
        env_step = cartpole.step(action.numpy())
        observation = env_step.observation if not env_step.done else cartpole.reset()
        prev_action, prev_reward = action, torch.tensor(env_step.reward)
    assert observation.dtype == np.float32


def test_model_kwargs_reach_the_default_model(cartpole):
    agent = CategoricalPgAgent(model_kwargs=dict(hidden_sizes=(8,), shared_trunk=True))
    agent.initialize(cartpole.spaces)
    assert agent.model.trunk.output_size == 8


def test_a_user_model_class_gets_only_model_kwargs(cartpole):
    seen = {}

    class MyModel(CategoricalPgMlpModel):
        def __init__(self, **kwargs):
            seen.update(kwargs)
            super().__init__(**kwargs)

    agent = CategoricalPgAgent(ModelCls=MyModel, model_kwargs=dict(observation_shape=(4,), action_size=2))
    agent.initialize(cartpole.spaces)
    assert seen == dict(observation_shape=(4,), action_size=2)


def test_continuous_action_space_is_refused_with_the_agent_to_use(pendulum):
    with pytest.raises(ValueError, match="GaussianPgAgent"):
        CategoricalPgAgent().initialize(pendulum.spaces)


def test_structured_observations_need_a_user_model():
    Obs = namedarraytuple("Obs", ["position", "goal"])
    spaces = EnvSpaces(
        observation=Composite([FloatBox(-1, 1, shape=(2,)), FloatBox(-1, 1, shape=(2,))], Obs), action=IntBox(0, 3)
    )
    with pytest.raises(ValueError, match="ModelCls"):
        CategoricalPgAgent().initialize(spaces)
