"""The SAC agent: a tanh-squashed Gaussian policy and twin critics with target copies."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Mapping
from typing import Any

import torch

from rlrun.agents.base import AgentStep, SpaceTensor
from rlrun.agents.qpg.base import QpgAgentBase
from rlrun.distributions.gaussian import DistInfoStd, Gaussian
from rlrun.models.qpg.mlp import PiMlpModel, QofMuMlpModel
from rlrun.models.utils import polyak_update
from rlrun.utils.collections import NamedArrayTuple, namedarraytuple, namedtuple

__all__ = ["MIN_LOG_STD", "MAX_LOG_STD", "AgentInfo", "Models", "SacAgent"]

_log = logging.getLogger(__name__)

MIN_LOG_STD = -20
MAX_LOG_STD = 2

AgentInfo = namedarraytuple("AgentInfo", ["dist_info"])
Models = namedtuple("Models", ["pi", "q1", "q2", "v"])


class SacAgent(QpgAgentBase):
    """Acts with ``action_squash * tanh(u)``, ``u ~ N(mean(s), std(s))``; ``mean`` only in eval mode.

    ``ModelCls`` (default :class:`PiMlpModel`) returns ``(mean, log_std)``, with log std bounded to
    ``[MIN_LOG_STD, MAX_LOG_STD]``; ``QModelCls`` (default :class:`QofMuMlpModel`) is each of the two
    critics. Networks default to hidden sizes ``[256, 256]``. Before the algorithm's ``min_itr_learn``
    the std is fixed at ``pretrain_std`` (0.75 spreads squashed actions almost uniformly), or, with
    ``uniform_warmup=True``, actions are drawn uniformly from ``[-action_squash, action_squash]`` as
    Stable-Baselines3 does before its ``learning_starts`` (the RL Zoo's SAC results are made that way).
    ``action_squash=None`` leaves actions unbounded. ``v_model_kwargs`` is kept for rlpyt's scripts
    and unused (this SAC has no V network). ``initial_model_state_dict`` may be a whole
    :meth:`state_dict` (keys ``model``, ``q1_model``, ``q2_model``, ``target_q1_model``,
    ``target_q2_model``) or the policy's.
    """

    def __init__(
        self,
        ModelCls: type[torch.nn.Module] | None = PiMlpModel,
        QModelCls: type[torch.nn.Module] = QofMuMlpModel,
        model_kwargs: dict[str, Any] | None = None,
        q_model_kwargs: dict[str, Any] | None = None,
        v_model_kwargs: dict[str, Any] | None = None,
        initial_model_state_dict: Mapping[str, Any] | None = None,
        action_squash: float | None = 1.0,
        pretrain_std: float = 0.75,
        uniform_warmup: bool = False,
    ) -> None:
        if uniform_warmup and action_squash is None:
            raise ValueError(
                "SacAgent(uniform_warmup=True) draws warm-up actions uniformly from [-action_squash, "
                "action_squash], so it needs a bounded action: pass action_squash (1.0 for an env rescaled "
                "to [-1, 1]) or leave uniform_warmup False to warm up with pretrain_std."
            )
        if model_kwargs is None:
            model_kwargs = dict(hidden_sizes=[256, 256])
        if q_model_kwargs is None:
            q_model_kwargs = dict(hidden_sizes=[256, 256])
        super().__init__(ModelCls, QModelCls, model_kwargs, q_model_kwargs, initial_model_state_dict)
        self.v_model_kwargs = dict(hidden_sizes=[256, 256]) if v_model_kwargs is None else dict(v_model_kwargs)
        self.action_squash = action_squash
        self.pretrain_std = pretrain_std
        self.uniform_warmup = uniform_warmup
        self._acting_uniformly = False  # set by sample_mode: uniform_warmup and still before min_itr_learn
        # Built by initialize().
        self.q1_model: torch.nn.Module = None  # type: ignore[assignment]
        self.q2_model: torch.nn.Module = None  # type: ignore[assignment]
        self.target_q1_model: torch.nn.Module = None  # type: ignore[assignment]
        self.target_q2_model: torch.nn.Module = None  # type: ignore[assignment]

    def build_critics(self) -> None:
        self.q1_model = self.make_q_model()
        self.q2_model = self.make_q_model()
        self.target_q1_model = self.make_target(self.q1_model)
        self.target_q2_model = self.make_target(self.q2_model)

    def make_distribution(self, action_size: int) -> Gaussian:
        return Gaussian(
            dim=action_size,
            squash=self.action_squash,
            min_std=math.exp(MIN_LOG_STD),
            max_std=math.exp(MAX_LOG_STD),
        )

    def other_models(self) -> dict[str, torch.nn.Module]:
        return dict(
            q1_model=self.q1_model,
            q2_model=self.q2_model,
            target_q1_model=self.target_q1_model,
            target_q2_model=self.target_q2_model,
        )

    # --- calls -----------------------------------------------------------------------------------

    def q(
        self, observation: torch.Tensor, prev_action: torch.Tensor, prev_reward: torch.Tensor, action: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(Q1(s, a), Q2(s, a))``, each ``[B]`` on the agent's device, with grad."""
        inputs = self.model_inputs(observation, prev_action, prev_reward, action)
        return self.q1_model(*inputs), self.q2_model(*inputs)

    @torch.no_grad()
    def target_q(
        self, observation: torch.Tensor, prev_action: torch.Tensor, prev_reward: torch.Tensor, action: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(Q1'(s, a), Q2'(s, a))`` from the target critics, on the agent's device, without grad."""
        inputs = self.model_inputs(observation, prev_action, prev_reward, action)
        return self.target_q1_model(*inputs), self.target_q2_model(*inputs)

    def pi(
        self, observation: torch.Tensor, prev_action: torch.Tensor, prev_reward: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, NamedArrayTuple]:
        """A reparameterised action, its log-likelihood (squashing included) and the policy's
        ``DistInfoStd``, with grad, all on the agent's device."""
        mean, log_std = self.model(*self.model_inputs(observation, prev_action, prev_reward))
        dist_info = DistInfoStd(mean=mean, log_std=log_std)
        action, log_pi = self.distribution.sample_loglikelihood(dist_info)
        return action, log_pi, dist_info

    @torch.no_grad()
    def step(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> AgentStep:
        mean, log_std = self.model(*self.model_inputs(observation, prev_action, prev_reward))
        dist_info = DistInfoStd(mean=mean, log_std=log_std)
        if self.deterministic:
            action = mean if self.action_squash is None else self.action_squash * torch.tanh(mean)
        elif self._acting_uniformly:
            assert self.action_squash is not None  # refused at construction
            uniform = self.env_stream_uniform(mean.shape[:-1])
            if uniform is None:
                uniform = torch.rand(mean.shape, device=mean.device)
            action = self.action_squash * (2 * uniform.to(mean) - 1)
        else:
            action = self.distribution.sample(dist_info, uniform=self.env_stream_uniform(mean.shape[:-1]))
        action, agent_info = self.outputs_to_cpu((action, AgentInfo(dist_info=dist_info)))
        return AgentStep(action=action, agent_info=agent_info)

    def update_target(self, tau: float = 1) -> None:
        polyak_update(self.target_q1_model, self.q1_model, tau)
        polyak_update(self.target_q2_model, self.q2_model, tau)

    # --- parameters and modes ----------------------------------------------------------------------

    @property
    def models(self) -> Any:
        """``Models(pi, q1, q2, v=None)``."""
        return Models(pi=self.model, q1=self.q1_model, q2=self.q2_model, v=None)

    def pi_parameters(self) -> Iterator[torch.nn.Parameter]:
        return self.model.parameters()

    def q1_parameters(self) -> Iterator[torch.nn.Parameter]:
        return self.q1_model.parameters()

    def q2_parameters(self) -> Iterator[torch.nn.Parameter]:
        return self.q2_model.parameters()

    def train_mode(self, itr: int) -> None:
        super().train_mode(itr)
        self.distribution.set_std(None)  # the policy's own std, whatever sampling used

    def sample_mode(self, itr: int) -> None:
        super().sample_mode(itr)
        pretraining = itr < self.min_itr_learn
        if itr == 0 or itr == self.min_itr_learn:
            how = ("uniform" if self.uniform_warmup else f"std {self.pretrain_std}") if pretraining else "learned std"
            _log.info("SacAgent at itr %d: sampling with %s.", itr, how)
        self.distribution.set_std(self.pretrain_std if pretraining else None)
        self._acting_uniformly = self.uniform_warmup and pretraining
