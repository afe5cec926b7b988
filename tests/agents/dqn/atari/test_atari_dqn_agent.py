import torch

from rlrun.agents.dqn.atari.atari_dqn_agent import AtariDqnAgent
from rlrun.models.dqn.atari_dqn_model import AtariDqnModel


def test_atari_dqn_agent_steps_on_uint8_frames(atari_spaces):
    agent = AtariDqnAgent(model_kwargs=dict(dueling=True))
    agent.initialize(atari_spaces)
    agent.sample_mode(0)
    assert isinstance(agent.model, AtariDqnModel) and agent.model.dueling
    frames = torch.randint(0, 256, (3, 4, 104, 80), dtype=torch.uint8)
    step = agent.step(frames, torch.zeros(3, dtype=torch.long), torch.zeros(3))
    assert step.action.shape == (3,) and step.agent_info.q.shape == (3, 6)
    assert ((step.action >= 0) & (step.action < 6)).all()
    q = agent(frames[None], torch.zeros(1, 3, dtype=torch.long), torch.zeros(1, 3))
    assert q.shape == (1, 3, 6) and q.requires_grad
