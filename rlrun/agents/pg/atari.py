"""Policy-gradient agents for Atari: image observations, discrete actions.

Each is a categorical agent with an Atari model by default and the Atari sizes from the env
(:func:`~rlrun.agents.env_spaces.atari_model_kwargs`, given through rlpyt's :class:`AtariMixin`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from rlrun.agents.env_spaces import AtariMixin
from rlrun.agents.pg.categorical import (
    AlternatingRecurrentCategoricalPgAgent,
    CategoricalPgAgent,
    CategoricalPgAgentKwargs,
    RecurrentCategoricalPgAgent,
)
from rlrun.models.pg.atari_ff_model import AtariFfModel
from rlrun.models.pg.atari_lstm_model import AtariLstmModel

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["AtariMixin", "AtariFfAgent", "AtariLstmAgent", "AlternatingAtariLstmAgent"]


class AtariFfAgent(AtariMixin, CategoricalPgAgent):
    """A categorical policy-gradient agent with the feedforward :class:`AtariFfModel` by default."""

    def __init__(
        self, ModelCls: type[torch.nn.Module] | None = AtariFfModel, **kwargs: Unpack[CategoricalPgAgentKwargs]
    ) -> None:
        super().__init__(ModelCls=ModelCls, **kwargs)


class AtariLstmAgent(AtariMixin, RecurrentCategoricalPgAgent):
    """A recurrent categorical policy-gradient agent with :class:`AtariLstmModel` by default.

    Train it with A2C or PPO and a wait-reset collector (see ``docs/agents.md``).
    """

    def __init__(
        self, ModelCls: type[torch.nn.Module] | None = AtariLstmModel, **kwargs: Unpack[CategoricalPgAgentKwargs]
    ) -> None:
        super().__init__(ModelCls=ModelCls, **kwargs)


class AlternatingAtariLstmAgent(AtariMixin, AlternatingRecurrentCategoricalPgAgent):
    """rlpyt's name for :class:`AtariLstmAgent` in an alternating sampler: the same agent with
    ``alternating = True`` (rlrun's ``AlternatingSampler`` serves :class:`AtariLstmAgent` as well, keeping
    one recurrent state per group of envs).

    A sampler written for rlpyt that serves the two groups itself calls :meth:`toggle_alt` between them;
    the agent then keeps one recurrent state per group (:meth:`get_alt` says which is served)."""

    def __init__(
        self, ModelCls: type[torch.nn.Module] | None = AtariLstmModel, **kwargs: Unpack[CategoricalPgAgentKwargs]
    ) -> None:
        super().__init__(ModelCls=ModelCls, **kwargs)
