"""What the DDPG and TD3 agents share: a deterministic policy mu(s), a critic Q(s, a), their targets,
and Gaussian exploration. Each agent adds its own critic calls (one critic or two)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, TypedDict

import torch

from rlrun.agents.base import AgentStep, SpaceTensor
from rlrun.agents.qpg.base import QpgAgentBase
from rlrun.distributions.gaussian import DistInfo, Gaussian
from rlrun.models.qpg.mlp import MuMlpModel, QofMuMlpModel
from rlrun.models.utils import polyak_update
from rlrun.utils.collections import namedarraytuple

__all__ = ["AgentInfo", "DdpgAgentKwargs", "DeterministicPolicyAgent"]

AgentInfo = namedarraytuple("AgentInfo", ["mu"])


class DdpgAgentKwargs(TypedDict, total=False):
    """:class:`DdpgAgent`'s keywords, as agents that pass them on take them (``**kwargs``)."""

    ModelCls: type[torch.nn.Module] | None
    QModelCls: type[torch.nn.Module]
    model_kwargs: dict[str, Any] | None
    q_model_kwargs: dict[str, Any] | None
    initial_model_state_dict: Mapping[str, Any] | None
    initial_q_model_state_dict: Mapping[str, Any] | None
    action_std: float
    action_noise_clip: float | None


class DeterministicPolicyAgent(QpgAgentBase):
    """What DDPG's and TD3's agents share: a deterministic policy ``mu(s)`` and a critic ``q_model``, their
    targets, and Gaussian exploration. It acts with ``clip(mu(s) + N(0, action_std), -1, 1)`` while sampling and ``mu(s)`` in eval mode.

    ``ModelCls`` (default :class:`MuMlpModel`) is the policy, ``QModelCls`` (default
    :class:`QofMuMlpModel`) the critic; both default to hidden sizes ``[400, 300]``.
    ``action_noise_clip`` clamps the exploration noise. State dict keys: ``model``, ``q_model``,
    ``target_model``, ``target_q_model``. ``initial_q_model_state_dict`` loads the critic (and its target).

    The critic calls whose results differ, one value (:class:`~rlrun.agents.qpg.ddpg_agent.DdpgAgent`) or
    a pair (:class:`~rlrun.agents.qpg.td3_agent.Td3Agent`), live in those two classes, which are siblings
    here rather than parent and child as in rlpyt: a TD3 agent's ``q`` returns two values where a DDPG
    agent's returns one, so it is not a DDPG agent that code written for one could use.
    """

    def __init__(
        self,
        ModelCls: type[torch.nn.Module] | None = MuMlpModel,
        QModelCls: type[torch.nn.Module] = QofMuMlpModel,
        model_kwargs: dict[str, Any] | None = None,
        q_model_kwargs: dict[str, Any] | None = None,
        initial_model_state_dict: Mapping[str, Any] | None = None,
        initial_q_model_state_dict: Mapping[str, Any] | None = None,
        action_std: float = 0.1,
        action_noise_clip: float | None = None,
    ) -> None:
        if model_kwargs is None:
            model_kwargs = dict(hidden_sizes=[400, 300])
        if q_model_kwargs is None:
            q_model_kwargs = dict(hidden_sizes=[400, 300])
        super().__init__(ModelCls, QModelCls, model_kwargs, q_model_kwargs, initial_model_state_dict)
        self.initial_q_model_state_dict = initial_q_model_state_dict
        self.action_std = action_std
        self.action_noise_clip = action_noise_clip
        # Built by initialize().
        self.q_model: torch.nn.Module = None  # type: ignore[assignment]
        self.target_model: torch.nn.Module = None  # type: ignore[assignment]
        self.target_q_model: torch.nn.Module = None  # type: ignore[assignment]

    def build_critics(self) -> None:
        self.q_model = self.make_q_model(self.initial_q_model_state_dict)
        self.target_model = self.make_target(self.model)
        self.target_q_model = self.make_target(self.q_model)

    def make_distribution(self, action_size: int) -> Gaussian:
        return Gaussian(dim=action_size, std=self.action_std, noise_clip=self.action_noise_clip, clip=1.0)

    def other_models(self) -> dict[str, torch.nn.Module]:
        return dict(q_model=self.q_model, target_model=self.target_model, target_q_model=self.target_q_model)

    # --- calls -----------------------------------------------------------------------------------

    def q_at_mu(self, observation: torch.Tensor, prev_action: torch.Tensor, prev_reward: torch.Tensor) -> torch.Tensor:
        """Q(s, mu(s)) ``[B]`` on the agent's device, with grad through the policy (DDPG's policy objective)."""
        inputs = self.model_inputs(observation, prev_action, prev_reward)
        q: torch.Tensor = self.q_model(*inputs, self.model(*inputs))
        return q

    @torch.no_grad()
    def step(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> AgentStep:
        mu = self.model(*self.model_inputs(observation, prev_action, prev_reward))
        if self.deterministic:
            action = mu.clamp(-1.0, 1.0)
        else:
            action = self.distribution.sample(DistInfo(mean=mu), uniform=self.env_stream_uniform(mu.shape[:-1]))
        action, agent_info = self.outputs_to_cpu((action, AgentInfo(mu=mu)))
        return AgentStep(action=action, agent_info=agent_info)

    def update_target(self, tau: float = 1) -> None:
        polyak_update(self.target_model, self.model, tau)
        polyak_update(self.target_q_model, self.q_model, tau)

    # --- parameters and modes ----------------------------------------------------------------------

    def q_parameters(self) -> Iterator[torch.nn.Parameter]:
        return self.q_model.parameters()

    def mu_parameters(self) -> Iterator[torch.nn.Parameter]:
        return self.model.parameters()

    def sample_mode(self, itr: int) -> None:
        super().sample_mode(itr)
        self.distribution.set_std(self.action_std)
