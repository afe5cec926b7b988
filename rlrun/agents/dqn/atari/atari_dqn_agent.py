"""The DQN agent for Atari."""

from __future__ import annotations

from typing import Any

import torch

from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.env_spaces import AtariMixin
from rlrun.models.dqn.atari_dqn_model import AtariDqnModel

__all__ = ["AtariDqnAgent"]


class AtariDqnAgent(AtariMixin, DqnAgent):
    """A :class:`DqnAgent` with the Nature-DQN :class:`AtariDqnModel` by default."""

    def __init__(self, ModelCls: type[torch.nn.Module] | None = AtariDqnModel, **kwargs: Any) -> None:
        super().__init__(ModelCls=ModelCls, **kwargs)
