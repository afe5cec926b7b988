"""The DQN agent for Atari."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.env_spaces import AtariMixin
from rlrun.models.dqn.atari_dqn_model import AtariDqnModel

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rlrun.agents.dqn.dqn_agent import DqnAgentKwargs

__all__ = ["AtariDqnAgent"]


class AtariDqnAgent(AtariMixin, DqnAgent):
    """A :class:`DqnAgent` with the Nature-DQN :class:`AtariDqnModel` by default."""

    def __init__(
        self, ModelCls: type[torch.nn.Module] | None = AtariDqnModel, **kwargs: Unpack[DqnAgentKwargs]
    ) -> None:
        super().__init__(ModelCls=ModelCls, **kwargs)
