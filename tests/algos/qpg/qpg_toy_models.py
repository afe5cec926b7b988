"""Linear models whose outputs can be computed by hand, and hand-built replay batches, for the qpg
loss tests. Observations are 3 numbers ``(s0, s1, s2)``; actions are 1 number."""

import torch

from rlrun.agents.base import AgentInputs
from rlrun.envs.base import EnvSpaces
from rlrun.replays.non_sequence.n_step import SamplesFromReplay, SamplesFromReplayTl
from rlrun.spaces.float_box import FloatBox

SPACES = EnvSpaces(
    observation=FloatBox(-float("inf"), float("inf"), shape=(3,)),
    action=FloatBox(-1.0, 1.0, shape=(1,)),
)


class LinearMu(torch.nn.Module):
    """mu(s) = m * s1 (m = 1 at first)."""

    def __init__(self, observation_shape, action_size, **kwargs):
        super().__init__()
        self.m = torch.nn.Parameter(torch.ones(1))

    def forward(self, observation, prev_action, prev_reward):
        return self.m * observation[..., 1:2]


class LinearQ(torch.nn.Module):
    """Q(s, a) = w * (s0 + a) (w = 1 at first)."""

    def __init__(self, observation_shape, action_size, **kwargs):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(1))

    def forward(self, observation, prev_action, prev_reward, action):
        return self.w * (observation[..., 0] + action[..., 0])


def set_weight(module, value):
    with torch.no_grad():
        next(module.parameters()).fill_(value)


def inputs(*observations):
    obs = torch.tensor(observations, dtype=torch.float32)
    return AgentInputs(obs, torch.zeros(len(obs), 1), torch.zeros(len(obs)))


def two_transitions(**tl):
    """Sample 0: s = (1, .5, 0), a = .2, return 1, continues to s_n = (2, .3, 0).
    Sample 1: s = (0, 0, 0), a = .5, return -1, terminal (done_n)."""
    batch = SamplesFromReplay(
        agent_inputs=inputs((1.0, 0.5, 0.0), (0.0, 0.0, 0.0)),
        action=torch.tensor([[0.2], [0.5]]),
        return_=torch.tensor([1.0, -1.0]),
        done=torch.tensor([False, False]),
        done_n=torch.tensor([False, True]),
        target_inputs=inputs((2.0, 0.3, 0.0), (9.0, 9.0, 0.0)),
    )
    if tl:
        batch = SamplesFromReplayTl(*batch, **tl)
    return batch
