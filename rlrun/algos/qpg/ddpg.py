"""Deep deterministic policy gradient (Lillicrap et al. 2016) from a replay buffer."""

from __future__ import annotations

import torch

from rlrun.agents.qpg.ddpg_agent import DdpgAgent
from rlrun.algos.qpg.base import SamplesToBufferTl
from rlrun.algos.qpg.deterministic_actor_critic import DeterministicActorCritic, OptInfo
from rlrun.utils.collections import NamedArrayTuple
from rlrun.utils.tensor import valid_mean

__all__ = ["DDPG", "OptInfo", "SamplesToBuffer"]

# rlpyt's DDPG stored one row type, with the time-limit flag.
SamplesToBuffer = SamplesToBufferTl


class DDPG(DeterministicActorCritic):
    """A critic ``Q(s, a)`` learned by TD and a deterministic policy ``mu(s)`` that climbs it.

    - Critic: ``q_loss = mean(0.5 * (y - Q(s, a))^2)`` with
      ``y = clip(R^(n) + (1 - done_n) * discount^n * Q'(s_n, mu'(s_n)), -q_target_clip, q_target_clip)``
      (primes: target networks); trained with ``q_learning_rate``.
    - Policy: ``mu_loss = -mean(Q(s, mu(s)))``, a step every ``policy_update_interval`` critic steps,
      trained with ``learning_rate``.
    - Targets follow by Polyak averaging (``target_update_tau``) every ``target_update_interval`` steps.

    Replay, update schedule and time limits: see :class:`~rlrun.algos.qpg.base.OffPolicyActorCritic`.
    Train :class:`~rlrun.agents.qpg.ddpg_agent.DdpgAgent`. Defaults are rlpyt's.
    """

    agent: DdpgAgent  # the agent methods this algorithm calls

    agent_example = "DdpgAgent"

    def q_loss(self, samples: NamedArrayTuple, valid: torch.Tensor | None = None) -> torch.Tensor:
        """``mean(0.5 * (y - Q(s, a))^2)`` against the clipped n-step target ``y``."""
        observation, prev_action, prev_reward = samples.agent_inputs  # the critics take the action after them
        q = self.agent.q(observation, prev_action, prev_reward, samples.action)
        with torch.no_grad():
            target_q = self.agent.target_q_at_mu(*samples.target_inputs)
            y = samples.return_ + (1 - samples.done_n.float()) * self.target_discount(samples) * target_q
            y = torch.clamp(y, -self.q_target_clip, self.q_target_clip)
        return valid_mean(0.5 * (y - q) ** 2, valid)
