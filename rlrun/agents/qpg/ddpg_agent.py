"""The DDPG agent: a deterministic policy mu(s), one critic Q(s, a), their targets, Gaussian exploration."""

from __future__ import annotations

import torch

from rlrun.agents.qpg.deterministic_policy import AgentInfo, DdpgAgentKwargs, DeterministicPolicyAgent

__all__ = ["AgentInfo", "DdpgAgent", "DdpgAgentKwargs"]


class DdpgAgent(DeterministicPolicyAgent):
    """Acts with ``clip(mu(s) + N(0, action_std), -1, 1)`` while sampling and ``mu(s)`` in eval mode; one
    critic. Keywords and state dict keys: :class:`~rlrun.agents.qpg.deterministic_policy.DeterministicPolicyAgent`.
    """

    def q(
        self, observation: torch.Tensor, prev_action: torch.Tensor, prev_reward: torch.Tensor, action: torch.Tensor
    ) -> torch.Tensor:
        """Q(s, a) ``[B]`` on the agent's device, with grad."""
        q: torch.Tensor = self.q_model(*self.model_inputs(observation, prev_action, prev_reward, action))
        return q

    @torch.no_grad()
    def target_q_at_mu(
        self, observation: torch.Tensor, prev_action: torch.Tensor, prev_reward: torch.Tensor
    ) -> torch.Tensor:
        """Q'(s, mu'(s)) ``[B]`` from the target networks, on the agent's device, without grad."""
        inputs = self.model_inputs(observation, prev_action, prev_reward)
        q: torch.Tensor = self.target_q_model(*inputs, self.target_model(*inputs))
        return q
