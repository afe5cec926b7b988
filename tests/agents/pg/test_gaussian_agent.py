import numpy as np
import pytest
import torch

from rlrun.agents.pg.gaussian import GaussianPgAgent
from rlrun.agents.pg.mujoco import MujocoFfAgent
from rlrun.models.pg.mujoco_ff_model import MujocoFfModel

B, T = 4, 3


def batch(*lead):
    return torch.randn(*lead, 3), torch.zeros(*lead, 1), torch.zeros(lead)


@pytest.fixture(params=[GaussianPgAgent, MujocoFfAgent])
def agent(request, pendulum):
    agent = request.param()
    agent.initialize(pendulum.spaces)
    agent.sample_mode(0)
    return agent


def test_step_returns_float_actions_and_gaussian_info_without_grad(agent):
    step = agent.step(*batch(B))
    assert step.action.shape == (B, 1) and step.action.dtype == torch.float32
    assert step.agent_info.dist_info.mean.shape == step.agent_info.dist_info.log_std.shape == (B, 1)
    assert step.agent_info.value.shape == (B,)
    for x in (step.action, *step.agent_info.dist_info, step.agent_info.value):
        assert x.device.type == "cpu" and not x.requires_grad


def test_call_on_a_t_by_b_batch_has_grad(agent):
    dist_info, value = agent(*batch(T, B))
    assert dist_info.mean.shape == (T, B, 1) and value.shape == (T, B)
    (dist_info.mean.sum() + dist_info.log_std.sum() + value.sum()).backward()
    assert all(p.grad is not None for p in agent.parameters())


def test_value_without_grad(agent):
    v = agent.value(*batch(B))
    assert v.shape == (B,) and not v.requires_grad


def test_actions_drive_the_real_env(agent, pendulum):
    observation = pendulum.reset()
    for _ in range(5):
        step = agent.step(torch.from_numpy(observation)[None], torch.zeros(1, 1), torch.zeros(1))
        env_step = pendulum.step(step.action[0].numpy())
        observation = env_step.observation
    assert np.isfinite(observation).all()


def test_default_model_is_mujoco_ff_model(pendulum):
    agent = GaussianPgAgent(model_kwargs=dict(hidden_sizes=[16]))
    agent.initialize(pendulum.spaces)
    assert isinstance(agent.model, MujocoFfModel)


def test_discrete_action_space_is_refused_with_the_agent_to_use(cartpole):
    with pytest.raises(ValueError, match="CategoricalPgAgent or DqnAgent"):
        GaussianPgAgent().initialize(cartpole.spaces)


def test_mujoco_agent_updates_observation_statistics(pendulum):
    agent = MujocoFfAgent(model_kwargs=dict(normalize_observation=True))
    agent.initialize(pendulum.spaces)
    agent.update_obs_rms(torch.ones(T, B, 3) * 2)
    torch.testing.assert_close(agent.model.obs_rms.mean, torch.full((3,), 2.0))
    assert int(agent.model.obs_rms.count) == T * B
