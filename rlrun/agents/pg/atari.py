"""Policy-gradient agents for Atari: image observations, discrete actions."""

from __future__ import annotations

from typing import Any

import torch

from rlrun.agents.env_spaces import AtariMixin
from rlrun.agents.pg.categorical import CategoricalPgAgent, RecurrentCategoricalPgAgent
from rlrun.models.pg.atari_ff_model import AtariFfModel
from rlrun.models.pg.atari_lstm_model import AtariLstmModel

__all__ = ["AtariMixin", "AtariFfAgent", "AtariLstmAgent", "AlternatingAtariLstmAgent"]


class AtariFfAgent(AtariMixin, CategoricalPgAgent):
    """A categorical policy-gradient agent with the feedforward :class:`AtariFfModel` by default."""

    def __init__(self, ModelCls: type[torch.nn.Module] | None = AtariFfModel, **kwargs: Any) -> None:
        super().__init__(ModelCls=ModelCls, **kwargs)


class AtariLstmAgent(AtariMixin, RecurrentCategoricalPgAgent):
    """A recurrent categorical policy-gradient agent with :class:`AtariLstmModel` by default.

    Train it with A2C or PPO and a wait-reset collector (see ``docs/agents.md``).
    """

    def __init__(self, ModelCls: type[torch.nn.Module] | None = AtariLstmModel, **kwargs: Any) -> None:
        super().__init__(ModelCls=ModelCls, **kwargs)


class AlternatingAtariLstmAgent(AtariLstmAgent):
    """rlpyt's name for :class:`AtariLstmAgent` in an alternating sampler; the same agent in rlrun, whose
    ``AlternatingSampler`` keeps one recurrent state per group of envs.

    A sampler written for rlpyt that serves the two groups itself calls :meth:`toggle_alt` between them;
    the agent then keeps one recurrent state per group (:meth:`get_alt` says which is served)."""

    alternating = True
