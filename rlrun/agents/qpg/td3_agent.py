"""The TD3 agent: DDPG's agent with twin critics and smoothed target actions."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import torch

from rlrun.agents.qpg.deterministic_policy import DeterministicPolicyAgent
from rlrun.distributions.gaussian import DistInfo, Gaussian
from rlrun.models.utils import polyak_update

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rlrun.agents.qpg.deterministic_policy import DdpgAgentKwargs

__all__ = ["Td3Agent"]

_log = logging.getLogger(__name__)


class Td3Agent(DeterministicPolicyAgent):
    """Two critics ``q_model`` and ``q2_model`` with targets; the target action is smoothed.

    Target policy smoothing: :meth:`target_q_at_mu` evaluates both target critics at
    ``clip(mu'(s) + clip(N(0, target_noise_std), -target_noise_clip, target_noise_clip), -1, 1)``.
    Exploration: noise of std ``pretrain_std`` (0.5, nearly uniform over ``[-1, 1]`` once clipped)
    before the algorithm's ``min_itr_learn``, ``action_std`` after. Other keywords as
    :class:`~rlrun.agents.qpg.ddpg_agent.DdpgAgent` (a sibling, not its parent: ``q`` returns a pair
    here); state dicts add ``q2_model`` and ``target_q2_model``.
    """

    def __init__(
        self,
        pretrain_std: float = 0.5,
        target_noise_std: float = 0.2,
        target_noise_clip: float = 0.5,
        initial_q2_model_state_dict: Mapping[str, Any] | None = None,
        **kwargs: Unpack[DdpgAgentKwargs],
    ) -> None:
        super().__init__(**kwargs)
        self.pretrain_std = pretrain_std
        self.target_noise_std = target_noise_std
        self.target_noise_clip = target_noise_clip
        self.initial_q2_model_state_dict = initial_q2_model_state_dict
        # Built by initialize().
        self.q2_model: torch.nn.Module = None  # type: ignore[assignment]
        self.target_q2_model: torch.nn.Module = None  # type: ignore[assignment]
        self.target_distribution: Gaussian = None  # type: ignore[assignment]

    def build_critics(self) -> None:
        super().build_critics()
        self.q2_model = self.make_q_model(self.initial_q2_model_state_dict)
        self.target_q2_model = self.make_target(self.q2_model)

    def make_distribution(self, action_size: int) -> Gaussian:
        self.target_distribution = Gaussian(
            dim=action_size, std=self.target_noise_std, noise_clip=self.target_noise_clip, clip=1.0
        )
        return super().make_distribution(action_size)

    def other_models(self) -> dict[str, torch.nn.Module]:
        return dict(super().other_models(), q2_model=self.q2_model, target_q2_model=self.target_q2_model)

    # --- calls -----------------------------------------------------------------------------------

    def q(
        self, observation: torch.Tensor, prev_action: torch.Tensor, prev_reward: torch.Tensor, action: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(Q1(s, a), Q2(s, a))``, each ``[B]`` on the agent's device, with grad."""
        inputs = self.model_inputs(observation, prev_action, prev_reward, action)
        return self.q_model(*inputs), self.q2_model(*inputs)

    @torch.no_grad()
    def target_q_at_mu(
        self, observation: torch.Tensor, prev_action: torch.Tensor, prev_reward: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(Q1'(s, a~), Q2'(s, a~))`` at the smoothed target action ``a~``, on the agent's device, without
        grad. The smoothing noise is drawn there too (from torch's generator of that device)."""
        inputs = self.model_inputs(observation, prev_action, prev_reward)
        target_action = self.target_distribution.sample(DistInfo(mean=self.target_model(*inputs)))
        return self.target_q_model(*inputs, target_action), self.target_q2_model(*inputs, target_action)

    def update_target(self, tau: float = 1) -> None:
        super().update_target(tau)
        polyak_update(self.target_q2_model, self.q2_model, tau)

    def q_parameters(self) -> Iterator[torch.nn.Parameter]:
        """Both critics' parameters (one optimiser trains them on the summed loss)."""
        yield from self.q_model.parameters()
        yield from self.q2_model.parameters()

    def set_target_noise(self, std: float, noise_clip: float | None = None) -> None:
        """Change the target smoothing noise (std and clip)."""
        self.target_distribution.set_std(std)
        self.target_distribution.set_noise_clip(noise_clip)

    def sample_mode(self, itr: int) -> None:
        super().sample_mode(itr)
        std = self.action_std if itr >= self.min_itr_learn else self.pretrain_std
        if itr == 0 or itr == self.min_itr_learn:
            _log.info("Td3Agent at itr %d: exploration noise std %s.", itr, std)
        self.distribution.set_std(std)
