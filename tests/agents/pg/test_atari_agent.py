import pytest
import torch

from rlrun.agents.pg.atari import AtariFfAgent
from rlrun.models.pg.atari_ff_model import AtariFfModel

B = 3


def frames(*lead):
    return torch.randint(0, 256, (*lead, 4, 104, 80), dtype=torch.uint8)


def test_atari_ff_agent_steps_on_uint8_frames(atari_spaces):
    agent = AtariFfAgent()
    agent.initialize(atari_spaces)
    assert isinstance(agent.model, AtariFfModel)
    step = agent.step(frames(B), torch.zeros(B, dtype=torch.long), torch.zeros(B))
    assert step.action.shape == (B,) and step.action.dtype == torch.long
    assert ((step.action >= 0) & (step.action < 6)).all()
    assert step.agent_info.dist_info.prob.shape == (B, 6)
    assert not step.agent_info.value.requires_grad


def test_atari_ff_agent_call_has_grad(atari_spaces):
    agent = AtariFfAgent(model_kwargs=dict(fc_sizes=64))
    agent.initialize(atari_spaces)
    dist_info, value = agent(frames(2, B), torch.zeros(2, B, dtype=torch.long), torch.zeros(2, B))
    assert dist_info.prob.shape == (2, B, 6) and value.requires_grad


def test_atari_ff_agent_refuses_vector_observations_and_names_the_expected_layout(cartpole):
    with pytest.raises(ValueError, match=r"\[C, H, W\]"):
        AtariFfAgent().initialize(cartpole.spaces)
