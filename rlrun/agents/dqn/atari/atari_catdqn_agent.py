"""The Categorical DQN (C51) agent for Atari."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from rlrun.agents.dqn.catdqn_agent import CatDqnAgent
from rlrun.agents.env_spaces import AtariMixin
from rlrun.models.dqn.atari_catdqn_model import AtariCatDqnModel

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rlrun.agents.dqn.catdqn_agent import CatDqnAgentKwargs

__all__ = ["AtariCatDqnAgent"]


class AtariCatDqnAgent(AtariMixin, CatDqnAgent):
    """A :class:`CatDqnAgent` with the convolutional :class:`AtariCatDqnModel` by default."""

    def __init__(
        self, ModelCls: type[torch.nn.Module] | None = AtariCatDqnModel, **kwargs: Unpack[CatDqnAgentKwargs]
    ) -> None:
        super().__init__(ModelCls=ModelCls, **kwargs)
