"""The DQN agent: Q-values from a model, a target copy of it, and epsilon-greedy exploration."""

from __future__ import annotations

import torch

from rlrun.agents.base import AgentStep, SpaceTensor
from rlrun.agents.dqn.q_agent import DqnAgentKwargs, EpsilonGreedyQAgent
from rlrun.models.dqn.mlp import DqnMlpModel
from rlrun.utils.collections import namedarraytuple

__all__ = ["DqnAgent", "DqnAgentKwargs", "AgentInfo"]

AgentInfo = namedarraytuple("AgentInfo", "q")


class DqnAgent(EpsilonGreedyQAgent):
    """Q-values from ``model``, targets from ``target_model``, actions epsilon-greedy on the Q-values.

    Exploration, the target network and the state dicts come from :class:`EpsilonGreedyQAgent`, which
    says how epsilon anneals. Without ``ModelCls`` the agent builds a :class:`DqnMlpModel` sized from the
    env; a user ``ModelCls`` receives only ``model_kwargs``, unless a subclass overrides
    :meth:`make_env_to_model_kwargs`. Models get ``prev_action`` one-hot encoded.
    """

    default_model_cls: type[torch.nn.Module] | None = DqnMlpModel  # subclasses name their own model

    def __call__(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> torch.Tensor:
        """Q-values ``[..., n_actions]`` on the agent's device, with grad (training; :meth:`step` acts)."""
        q: torch.Tensor = self.model(*self._inputs(observation, prev_action, prev_reward))
        return q

    @torch.no_grad()
    def step(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> AgentStep:
        q = self.model(*self._inputs(observation, prev_action, prev_reward)).cpu()
        action = self.distribution.sample(q, uniform=self.env_stream_uniform(q.shape[:-1]))
        return AgentStep(action=action, agent_info=AgentInfo(q=q))

    @torch.no_grad()
    def target(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> torch.Tensor:
        """Target-network Q-values ``[..., n_actions]`` on the agent's device, without grad."""
        q: torch.Tensor = self.target_model(*self._inputs(observation, prev_action, prev_reward))
        return q
