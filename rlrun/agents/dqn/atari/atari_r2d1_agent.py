"""The R2D1 agent for Atari."""

from __future__ import annotations

from typing import Any

import torch

from rlrun.agents.dqn.r2d1_agent import R2d1Agent, R2d1AlternatingAgent
from rlrun.agents.env_spaces import AtariMixin
from rlrun.models.dqn.atari_r2d1_model import AtariR2d1Model

__all__ = ["AtariR2d1Agent", "AtariR2d1AlternatingAgent"]


class AtariR2d1Agent(AtariMixin, R2d1Agent):
    """An :class:`R2d1Agent` with the convolutional-LSTM :class:`AtariR2d1Model` by default."""

    def __init__(self, ModelCls: type[torch.nn.Module] | None = AtariR2d1Model, **kwargs: Any) -> None:
        super().__init__(ModelCls=ModelCls, **kwargs)


class AtariR2d1AlternatingAgent(AtariMixin, R2d1AlternatingAgent):
    """rlpyt's name for :class:`AtariR2d1Agent` in an alternating sampler (the same agent in rlrun)."""

    def __init__(self, ModelCls: type[torch.nn.Module] | None = AtariR2d1Model, **kwargs: Any) -> None:
        super().__init__(ModelCls=ModelCls, **kwargs)
