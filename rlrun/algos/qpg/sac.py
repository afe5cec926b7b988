"""Soft actor-critic (Haarnoja et al. 2018) with twin critics and a learned entropy temperature."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import torch

from rlrun.agents.qpg.sac_agent import SacAgent
from rlrun.algos.opt_info import StepValue
from rlrun.algos.qpg.base import OffPolicyActorCritic, SamplesToBuffer, SamplesToBufferTl, clipped_step
from rlrun.distributions.gaussian import DistInfo, Gaussian
from rlrun.utils.collections import NamedArrayTuple
from rlrun.utils.tensor import valid_mean

__all__ = ["SAC", "OptInfo", "SamplesToBuffer", "SamplesToBufferTl"]


class OptInfo(NamedTuple):
    """SAC's diagnostics, a list per field with one value per gradient step (batch means for the values)."""

    q1Loss: list[StepValue]
    q2Loss: list[StepValue]
    piLoss: list[StepValue]
    q1GradNorm: list[StepValue]
    q2GradNorm: list[StepValue]
    piGradNorm: list[StepValue]
    q1: list[StepValue]
    q2: list[StepValue]
    piMu: list[StepValue]
    piLogStd: list[StepValue]
    qMeanDiff: list[StepValue]
    alpha: list[StepValue]


class SAC(OffPolicyActorCritic[OptInfo]):
    """Maximum-entropy actor-critic with a tanh-squashed Gaussian policy (the agent's, see
    :class:`~rlrun.agents.qpg.sac_agent.SacAgent`) and two critics with target copies.

    With ``a' ~ pi(s_n)`` and ``alpha`` the temperature, per replay batch:

    - critics: ``y = reward_scale * R^(n) + (1 - done_n) * discount^n * (min(Q1'(s_n, a'),
      Q2'(s_n, a')) - alpha * log pi(a' | s_n))``; ``qi_loss = mean(0.5 * (y - Qi(s, a))^2)``;
    - policy, with ``a~ ~ pi(s)`` reparameterised: ``pi_loss = mean(alpha * log pi(a~ | s) -
      min(Q1(s, a~), Q2(s, a~)) - log prior(a~))``; the prior is ``"uniform"`` (0) or ``"gaussian"``
      (a unit normal over actions);
    - temperature: with ``fixed_alpha=None``, ``alpha = exp(log_alpha)`` follows ``alpha_loss =
      -mean(log_alpha * (log pi(a~ | s) + target_entropy))``, which raises alpha while the policy's
      entropy is below ``target_entropy`` (``"auto"``: minus the action dim) and lowers it above.
      ``alpha`` starts at 1. A float ``fixed_alpha`` keeps alpha there; ``target_entropy=None`` also
      stops its updates.

    All losses of a step use the same batch and the alpha of before the step; the temperature, the
    policy and then each critic take one optimiser step (each optimiser at ``learning_rate``). Targets
    follow by Polyak averaging. Replay, update schedule and time limits: see
    :class:`~rlrun.algos.qpg.base.OffPolicyActorCritic`. Defaults are rlpyt's.
    """

    agent: SacAgent  # the agent methods this algorithm calls

    opt_info_fields: tuple[str, ...] = OptInfo._fields
    agent_methods = ("give_min_itr_learn", "update_target", "q", "target_q", "pi", "pi_parameters", "q1_parameters", "q2_parameters")  # fmt: skip
    agent_example = "SacAgent"

    def __init__(
        self,
        discount: float = 0.99,
        batch_size: int = 256,
        min_steps_learn: int = int(1e4),
        replay_size: int = int(1e6),
        replay_ratio: float = 256,
        target_update_tau: float = 0.005,
        target_update_interval: int = 1,
        learning_rate: float = 3e-4,
        fixed_alpha: float | None = None,
        OptimCls: Callable[..., torch.optim.Optimizer] = torch.optim.Adam,
        optim_kwargs: dict[str, Any] | None = None,
        initial_optim_state_dict: dict[str, Any] | None = None,
        action_prior: str = "uniform",
        reward_scale: float = 1,
        target_entropy: str | float | None = "auto",
        reparameterize: bool = True,
        clip_grad_norm: float = 1e9,
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
        if action_prior not in ("uniform", "gaussian"):
            raise ValueError(f"SAC: action_prior must be 'uniform' or 'gaussian', got {action_prior!r}.")
        if not reparameterize:
            raise ValueError(
                "SAC: only the reparameterised policy gradient is implemented (as in rlpyt); use reparameterize=True."
            )
        if fixed_alpha is not None and fixed_alpha <= 0:
            raise ValueError(f"SAC: fixed_alpha must be positive (or None to learn it), got {fixed_alpha}.")
        if isinstance(target_entropy, str) and target_entropy != "auto":
            raise ValueError(f"SAC: target_entropy must be 'auto', a number or None, got {target_entropy!r}.")
        self.learning_rate = learning_rate
        self.fixed_alpha = fixed_alpha
        self.action_prior = action_prior
        self.reward_scale = reward_scale
        self.target_entropy = target_entropy
        self.reparameterize = reparameterize
        # Set by optim_initialize().
        self.alpha_optimizer: torch.optim.Optimizer | None = None
        self._log_alpha = torch.zeros(1)
        self._alpha = torch.ones(1)
        self.action_prior_distribution: Gaussian | None = None

    def optim_initialize(self, rank: int = 0) -> None:
        """Optimisers for the policy, each critic and (when learned) the temperature."""
        self.rank = rank
        agent = self.agent
        self.pi_optimizer = self.make_optimizer(agent.pi_parameters(), self.learning_rate)
        self.q1_optimizer = self.make_optimizer(agent.q1_parameters(), self.learning_rate)
        self.q2_optimizer = self.make_optimizer(agent.q2_parameters(), self.learning_rate)
        assert agent.env_spaces is not None  # set by the agent's initialize, which runs before this
        action_dim = int(np.prod(agent.env_spaces.action.shape))
        device = agent.device  # alpha meets the agent's log-likelihoods in the losses
        if self.fixed_alpha is None:
            self._log_alpha = torch.zeros(1, device=device, requires_grad=True)
            self._alpha = torch.exp(self._log_alpha.detach())
            self.alpha_optimizer = self.make_optimizer((self._log_alpha,), self.learning_rate)
        else:
            self._log_alpha = torch.tensor([math.log(self.fixed_alpha)], device=device)
            self._alpha = torch.tensor([float(self.fixed_alpha)], device=device)
            self.alpha_optimizer = None
        if self.target_entropy == "auto":
            self.target_entropy = -float(action_dim)
        if self.action_prior == "gaussian":
            self.action_prior_distribution = Gaussian(dim=action_dim, std=1.0)
        if self.initial_optim_state_dict is not None:
            self.load_optim_state_dict(self.initial_optim_state_dict)

    @property
    def alpha(self) -> float:
        """The current entropy temperature (read back from the agent's device: for logs and tests, not per step)."""
        return float(self._alpha)

    def empty_opt_info(self) -> OptInfo:
        return OptInfo(*([] for _ in OptInfo._fields))

    def train_step(self, samples: NamedArrayTuple, opt_info: OptInfo) -> None:
        """Temperature, policy, then critic steps on the losses of one batch."""
        losses, values = self.loss(samples)
        q1_loss, q2_loss, pi_loss, alpha_loss = losses
        if alpha_loss is not None:
            assert self.alpha_optimizer is not None
            self.alpha_optimizer.zero_grad()
            torch.autograd.backward(alpha_loss)
            self.alpha_optimizer.step()
            self._alpha = torch.exp(self._log_alpha.detach())
        agent = self.agent
        pi_grad_norm = clipped_step(self.pi_optimizer, pi_loss, agent.pi_parameters(), self.clip_grad_norm)
        q1_grad_norm = clipped_step(self.q1_optimizer, q1_loss, agent.q1_parameters(), self.clip_grad_norm)
        q2_grad_norm = clipped_step(self.q2_optimizer, q2_loss, agent.q2_parameters(), self.clip_grad_norm)

        self.append_opt_info_(opt_info, losses, (q1_grad_norm, q2_grad_norm, pi_grad_norm), values)

    def append_opt_info_(
        self,
        opt_info: OptInfo,
        losses: tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None],
        grad_norms: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
        values: tuple[torch.Tensor, ...],
    ) -> None:
        """Append one gradient step's diagnostics to ``opt_info``'s lists, in place: the losses
        ``(q1, q2, pi, alpha)`` and ``values`` ``(q1, q2, pi_mean, pi_log_std)`` of :meth:`loss`, the
        gradient norms ``(q1, q2, pi)``, all tensors. Append 0-dim tensors (or floats) to log more per step:
        :meth:`optimize_agent` reads the tensors back to the host once per iteration."""
        q1_loss, q2_loss, pi_loss, _alpha_loss = losses
        q1_grad_norm, q2_grad_norm, pi_grad_norm = grad_norms
        q1, q2, pi_mean, pi_log_std = values
        # 0-dim tensors, left on the device: optimize_agent reads them all back once per iteration.
        opt_info.q1Loss.append(q1_loss.detach())
        opt_info.q2Loss.append(q2_loss.detach())
        opt_info.piLoss.append(pi_loss.detach())
        opt_info.q1GradNorm.append(q1_grad_norm)
        opt_info.q2GradNorm.append(q2_grad_norm)
        opt_info.piGradNorm.append(pi_grad_norm)
        opt_info.q1.append(q1.mean())  # batch means: one value per gradient step
        opt_info.q2.append(q2.mean())
        opt_info.piMu.append(pi_mean.mean())
        opt_info.piLogStd.append(pi_log_std.mean())
        opt_info.qMeanDiff.append((q1 - q2).abs().mean())
        opt_info.alpha.append(self._alpha.reshape(()))

    def loss(
        self, samples: NamedArrayTuple
    ) -> tuple[tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None], tuple[torch.Tensor, ...]]:
        """``((q1_loss, q2_loss, pi_loss, alpha_loss or None), (q1, q2, pi_mean, pi_log_std))`` for a
        replay batch with leading dim ``[B]`` on the agent's device (:meth:`sample_replay`'s), all on that
        device; the second tuple is detached, for logging."""
        agent = self.agent
        observation, prev_action, prev_reward = samples.agent_inputs  # the critics take the action after them
        q1, q2 = agent.q(observation, prev_action, prev_reward, samples.action)
        with torch.no_grad():
            next_action, next_log_pi, _ = agent.pi(*samples.target_inputs)
            next_observation, next_prev_action, next_prev_reward = samples.target_inputs
            target_q1, target_q2 = agent.target_q(next_observation, next_prev_action, next_prev_reward, next_action)
            target_value = torch.min(target_q1, target_q2) - self._alpha * next_log_pi
            not_done = 1 - samples.done_n.float()
            y = self.reward_scale * samples.return_ + not_done * self.target_discount(samples) * target_value
        q1_loss = 0.5 * valid_mean((y - q1) ** 2)
        q2_loss = 0.5 * valid_mean((y - q2) ** 2)

        new_action, log_pi, (pi_mean, pi_log_std) = agent.pi(*samples.agent_inputs)
        new_q1, new_q2 = agent.q(observation, prev_action, prev_reward, new_action)
        pi_loss = valid_mean(self._alpha * log_pi - torch.min(new_q1, new_q2) - self.prior_log_pi(new_action))

        alpha_loss = None
        if self.alpha_optimizer is not None and self.target_entropy is not None:
            alpha_loss = -valid_mean(self._log_alpha * (log_pi.detach() + float(self.target_entropy)))
        values = tuple(v.detach() for v in (q1, q2, pi_mean, pi_log_std))
        return (q1_loss, q2_loss, pi_loss, alpha_loss), values

    def prior_log_pi(self, action: torch.Tensor) -> torch.Tensor | float:
        """The action prior's log density: 0 for ``"uniform"``, a unit normal's for ``"gaussian"``."""
        if self.action_prior_distribution is None:
            return 0.0
        return self.action_prior_distribution.log_likelihood(action, DistInfo(mean=torch.zeros_like(action)))

    def get_action_prior(self, action: torch.Tensor) -> torch.Tensor | float:
        """rlpyt's name for :meth:`prior_log_pi`."""
        return self.prior_log_pi(action)

    def optim_state_dict(self) -> dict[str, Any]:
        return dict(
            pi_optimizer=self.pi_optimizer.state_dict(),
            q1_optimizer=self.q1_optimizer.state_dict(),
            q2_optimizer=self.q2_optimizer.state_dict(),
            alpha_optimizer=None if self.alpha_optimizer is None else self.alpha_optimizer.state_dict(),
            log_alpha=float(self._log_alpha.detach()),
        )

    def load_optim_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.pi_optimizer.load_state_dict(state_dict["pi_optimizer"])
        self.q1_optimizer.load_state_dict(state_dict["q1_optimizer"])
        self.q2_optimizer.load_state_dict(state_dict["q2_optimizer"])
        if self.alpha_optimizer is not None and state_dict.get("alpha_optimizer") is not None:
            self.alpha_optimizer.load_state_dict(state_dict["alpha_optimizer"])
        with torch.no_grad():
            self._log_alpha[:] = state_dict["log_alpha"]
        self._alpha = torch.exp(self._log_alpha.detach())
