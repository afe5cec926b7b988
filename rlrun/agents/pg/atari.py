"""Policy-gradient agents for Atari: image observations, discrete actions."""

from __future__ import annotations

from typing import Any

import torch

from rlrun.agents.env_spaces import AtariMixin
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.models.pg.atari_ff_model import AtariFfModel

__all__ = ["AtariMixin", "AtariFfAgent"]


class AtariFfAgent(AtariMixin, CategoricalPgAgent):
    """A categorical policy-gradient agent with the feedforward :class:`AtariFfModel` by default."""

    def __init__(self, ModelCls: type[torch.nn.Module] | None = AtariFfModel, **kwargs: Any) -> None:
        super().__init__(ModelCls=ModelCls, **kwargs)
