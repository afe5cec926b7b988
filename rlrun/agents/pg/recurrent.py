"""The calls the recurrent categorical and Gaussian policy-gradient agents share, as functions each agent
calls with its own parts: how it reads its model's outputs (``read``) and how it picks actions (``choose``).

The two agents are not one class: each sits under its own feedforward sibling's names (rlpyt's), and a
common base would put ``AtariLstmAgent`` and ``MujocoLstmAgent`` five classes deep. What differs between
them is only those two parts and how ``prev_action`` is encoded; the rest is here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

import torch

from rlrun.agents.base import AgentStep, BaseAgent, SpaceTensor
from rlrun.agents.pg.base import AgentInfoRnnStart, rnn_state_to_storage
from rlrun.agents.recurrent_state import hide_previous_step
from rlrun.models.lstm import RecurrentState
from rlrun.utils.collections import NamedArrayTuple

__all__ = ["ModelInputs", "PolicyOutputs", "model_inputs", "train_forward", "sample_step", "bootstrap_value"]

# (observation, prev_action, prev_reward, rnn_state) on the agent's device, as the model takes them.
ModelInputs: TypeAlias = "tuple[SpaceTensor, torch.Tensor, torch.Tensor, RecurrentState | None]"
# (dist_info, value, next_rnn_state), read from the model's outputs.
PolicyOutputs: TypeAlias = "tuple[NamedArrayTuple, torch.Tensor, RecurrentState]"
ReadOutputs: TypeAlias = "Callable[[tuple[torch.Tensor, ...]], PolicyOutputs]"


def model_inputs(
    agent: BaseAgent,
    observation: SpaceTensor,
    prev_action: torch.Tensor,
    prev_reward: torch.Tensor,
    rnn_state: RecurrentState | None,
    episode_start: torch.Tensor | None,
) -> ModelInputs:
    """The model's inputs and ``rnn_state`` on ``agent``'s device (``prev_action`` already encoded), with the
    previous action and reward zeroed where ``episode_start`` (bool, the shape of ``prev_reward``)."""
    observation, prev_action, prev_reward, rnn_state = agent.inputs_to_device(
        (observation, prev_action, prev_reward, rnn_state)
    )
    prev_action, prev_reward = hide_previous_step(prev_action, prev_reward, episode_start)
    return observation, prev_action, prev_reward, rnn_state


def train_forward(agent: BaseAgent, read: ReadOutputs, inputs: ModelInputs) -> PolicyOutputs:
    """The training forward pass (with grad): ``(dist_info, value, next state)``, all left on the agent's
    device, where the algorithm computes its losses (no host copy per minibatch)."""
    return read(agent.model(*inputs))


def sample_step(
    agent: BaseAgent,
    read: ReadOutputs,
    choose: Callable[[NamedArrayTuple], torch.Tensor],
    inputs: ModelInputs,
    episode_start: torch.Tensor,
) -> tuple[AgentStep, RecurrentState]:
    """One sampling step (call it without grad) from ``inputs``, whose state is the one the step starts
    from: the action and ``AgentInfoRnnStart`` (that state batch-first, and ``episode_start``) on the CPU,
    and the next state, left on the device, for the agent to keep."""
    prev_rnn_state = inputs[3]
    dist_info, value, next_rnn_state = read(agent.model(*inputs))
    agent_info = AgentInfoRnnStart(
        dist_info=dist_info,
        value=value,
        prev_rnn_state=rnn_state_to_storage(prev_rnn_state, next_rnn_state),
        episode_start=episode_start,
    )
    action, agent_info = agent.outputs_to_cpu((choose(dist_info), agent_info))
    return AgentStep(action=action, agent_info=agent_info), next_rnn_state


def bootstrap_value(agent: BaseAgent, read: ReadOutputs, inputs: ModelInputs) -> torch.Tensor:
    """V(s) ``[B]`` on the CPU (call it without grad); the state it reaches is dropped."""
    _dist_info, value, _next = read(agent.model(*inputs))
    return value.cpu()
