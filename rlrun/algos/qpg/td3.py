"""Twin delayed DDPG (Fujimoto et al. 2018)."""

from __future__ import annotations

from typing import Any

import torch

from rlrun.agents.qpg.td3_agent import Td3Agent
from rlrun.algos.qpg.deterministic_actor_critic import DeterministicActorCritic
from rlrun.utils.collections import NamedArrayTuple
from rlrun.utils.tensor import valid_mean

__all__ = ["TD3"]


class TD3(DeterministicActorCritic):
    """DDPG with the three fixes of TD3:

    - twin critics: both regress on ``y = R^(n) + (1 - done_n) * discount^n * min(Q1'(s_n, a~),
      Q2'(s_n, a~))``, loss ``mean(0.5 * (y - Q1)^2 + 0.5 * (y - Q2)^2)``;
    - target policy smoothing: ``a~`` is the target policy's action plus clipped noise (the agent's
      ``target_noise_std`` and ``target_noise_clip``, see :class:`~rlrun.agents.qpg.td3_agent.Td3Agent`);
    - delayed policy updates: the policy (trained on ``Q1`` alone) and the targets move every
      ``policy_update_interval`` and ``target_update_interval`` (2) critic steps.

    Learning rates: ``mu_learning_rate`` for the policy, ``q_learning_rate`` for the critics. rlpyt
    read DDPG's ``learning_rate`` (default 1e-4) for the policy and ignored ``mu_learning_rate``; here
    ``learning_rate``, when given, sets the policy's rate in place of ``mu_learning_rate`` (so rlpyt's
    configs, which pass it, train as before). Other keywords: :class:`~rlrun.algos.qpg.ddpg.DDPG`'s (a sibling
    here, not TD3's parent as in rlpyt).
    """

    agent: Td3Agent  # the agent methods this algorithm calls

    agent_example = "Td3Agent"

    def __init__(
        self,
        batch_size: int = 100,
        replay_ratio: float = 100,
        target_update_tau: float = 0.005,
        target_update_interval: int = 2,
        policy_update_interval: int = 2,
        mu_learning_rate: float = 1e-3,
        q_learning_rate: float = 1e-3,
        learning_rate: float | None = None,
        **kwargs: Any,
    ) -> None:
        mu_learning_rate = mu_learning_rate if learning_rate is None else learning_rate
        super().__init__(
            batch_size=batch_size,
            replay_ratio=replay_ratio,
            target_update_tau=target_update_tau,
            target_update_interval=target_update_interval,
            policy_update_interval=policy_update_interval,
            learning_rate=mu_learning_rate,
            q_learning_rate=q_learning_rate,
            **kwargs,
        )
        self.mu_learning_rate = mu_learning_rate

    def q_loss(self, samples: NamedArrayTuple, valid: torch.Tensor | None = None) -> torch.Tensor:
        """Both critics' squared errors against the clipped double-Q target at the smoothed action."""
        observation, prev_action, prev_reward = samples.agent_inputs  # the critics take the action after them
        q1, q2 = self.agent.q(observation, prev_action, prev_reward, samples.action)
        with torch.no_grad():
            target_q1, target_q2 = self.agent.target_q_at_mu(*samples.target_inputs)  # smoothed target action
            target_q = torch.min(target_q1, target_q2)
            y = samples.return_ + (1 - samples.done_n.float()) * self.target_discount(samples) * target_q
            y = torch.clamp(y, -self.q_target_clip, self.q_target_clip)
        return valid_mean(0.5 * (y - q1) ** 2 + 0.5 * (y - q2) ** 2, valid)
