"""What DDPG and TD3 share: a deterministic policy trained through a critic, each with its own optimiser,
and the policy step every ``policy_update_interval`` critic steps. DDPG and TD3 differ in their critic
loss (one critic, or twin critics with a clipped double-Q target) and their defaults."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import torch

from rlrun.agents.qpg.deterministic_policy import DeterministicPolicyAgent
from rlrun.algos.opt_info import StepValue
from rlrun.algos.qpg.base import OffPolicyActorCritic, clipped_step
from rlrun.utils.collections import NamedArrayTuple
from rlrun.utils.tensor import valid_mean

__all__ = ["DeterministicActorCritic", "OptInfo"]


class OptInfo(NamedTuple):
    """DDPG's and TD3's diagnostics: a value per critic step in ``qLoss`` and ``qGradNorm``, per policy step
    in ``muLoss`` and ``muGradNorm``."""

    muLoss: list[StepValue]
    qLoss: list[StepValue]
    muGradNorm: list[StepValue]
    qGradNorm: list[StepValue]


class DeterministicActorCritic(OffPolicyActorCritic[OptInfo]):
    """A critic learned by TD (:meth:`q_loss`, in each subclass) and a deterministic policy ``mu(s)`` that
    climbs it (``mu_loss = -mean(Q(s, mu(s)))``), with DDPG's keywords and rlpyt's defaults.

    :class:`~rlrun.algos.qpg.ddpg.DDPG` and :class:`~rlrun.algos.qpg.td3.TD3` are siblings here, where rlpyt
    derived TD3 from DDPG: their agents' critic calls return one value and two, so neither algorithm could
    train the other's agent.
    """

    agent: DeterministicPolicyAgent  # the agent methods this class calls

    opt_info_fields: tuple[str, ...] = OptInfo._fields
    agent_methods = ("give_min_itr_learn", "update_target", "q", "q_at_mu", "target_q_at_mu", "mu_parameters", "q_parameters")  # fmt: skip

    def __init__(
        self,
        discount: float = 0.99,
        batch_size: int = 64,
        min_steps_learn: int = int(1e4),
        replay_size: int = int(1e6),
        replay_ratio: float = 64,
        target_update_tau: float = 0.01,
        target_update_interval: int = 1,
        policy_update_interval: int = 1,
        learning_rate: float = 1e-4,
        q_learning_rate: float = 1e-3,
        OptimCls: Callable[..., torch.optim.Optimizer] = torch.optim.Adam,
        optim_kwargs: dict[str, Any] | None = None,
        initial_optim_state_dict: dict[str, Any] | None = None,
        clip_grad_norm: float = 1e8,
        q_target_clip: float = 1e6,
        n_step_return: int = 1,
        updates_per_sync: int = 1,
        bootstrap_timelimit: bool = True,
        ReplayBufferCls: type | None = None,
    ) -> None:
        super().__init__(
            discount=discount,
            batch_size=batch_size,
            min_steps_learn=min_steps_learn,
            replay_size=replay_size,
            replay_ratio=replay_ratio,
            target_update_tau=target_update_tau,
            target_update_interval=target_update_interval,
            n_step_return=n_step_return,
            OptimCls=OptimCls,
            optim_kwargs=optim_kwargs,
            initial_optim_state_dict=initial_optim_state_dict,
            clip_grad_norm=clip_grad_norm,
            updates_per_sync=updates_per_sync,
            bootstrap_timelimit=bootstrap_timelimit,
            ReplayBufferCls=ReplayBufferCls,
        )
        if policy_update_interval < 1:
            raise ValueError(f"{type(self).__name__}: policy_update_interval must be at least 1, got {policy_update_interval}.")  # fmt: skip
        self.policy_update_interval = policy_update_interval
        self.learning_rate = learning_rate
        self.q_learning_rate = q_learning_rate
        self.q_target_clip = q_target_clip

    def optim_initialize(self, rank: int = 0) -> None:
        """The policy's and the critic's optimisers (``optim_kwargs`` for both)."""
        self.rank = rank
        self.mu_optimizer = self.make_optimizer(self.agent.mu_parameters(), self.learning_rate)
        self.q_optimizer = self.make_optimizer(self.agent.q_parameters(), self.q_learning_rate)
        if self.initial_optim_state_dict is not None:
            self.load_optim_state_dict(self.initial_optim_state_dict)

    def empty_opt_info(self) -> OptInfo:
        return OptInfo(*([] for _ in OptInfo._fields))

    def train_step(self, samples: NamedArrayTuple, opt_info: OptInfo) -> None:
        """A critic step, then a policy step on the same batch when ``update_counter`` is due."""
        q_loss = self.q_loss(samples)
        q_grad_norm = clipped_step(self.q_optimizer, q_loss, self.agent.q_parameters(), self.clip_grad_norm)
        opt_info.qLoss.append(q_loss.detach())  # read back once per iteration, by optimize_agent
        opt_info.qGradNorm.append(q_grad_norm)
        if self.update_counter % self.policy_update_interval == 0:
            mu_loss = self.mu_loss(samples)
            mu_grad_norm = clipped_step(self.mu_optimizer, mu_loss, self.agent.mu_parameters(), self.clip_grad_norm)
            opt_info.muLoss.append(mu_loss.detach())
            opt_info.muGradNorm.append(mu_grad_norm)

    def q_loss(self, samples: NamedArrayTuple, valid: torch.Tensor | None = None) -> torch.Tensor:
        """The critics' loss on a training batch: one critic's in DDPG, two in TD3."""
        raise NotImplementedError

    def mu_loss(self, samples: NamedArrayTuple, valid: torch.Tensor | None = None) -> torch.Tensor:
        """``-mean(Q(s, mu(s)))`` over the batch (``valid`` masks samples, as in rlpyt)."""
        return -valid_mean(self.agent.q_at_mu(*samples.agent_inputs), valid)

    def optim_state_dict(self) -> dict[str, Any]:
        return dict(q=self.q_optimizer.state_dict(), mu=self.mu_optimizer.state_dict())

    def load_optim_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.q_optimizer.load_state_dict(state_dict["q"])
        self.mu_optimizer.load_state_dict(state_dict["mu"])
