"""The R2D1 agent for Atari."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from rlrun.agents.base import RecurrentAgentMixin
from rlrun.agents.dqn.r2d1_agent import R2d1Agent, R2d1AgentBase, R2d1AlternatingAgent  # noqa: F401
from rlrun.agents.env_spaces import AtariMixin
from rlrun.models.dqn.atari_r2d1_model import AtariR2d1Model

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rlrun.agents.dqn.dqn_agent import DqnAgentKwargs

__all__ = ["AtariR2d1Agent", "AtariR2d1AlternatingAgent"]

# R2d1Agent and R2d1AlternatingAgent are imported for rlpyt's star import of this module, which gave them.
# Both classes here are assembled as R2d1Agent and R2d1AlternatingAgent are (RecurrentAgentMixin before R2d1AgentBase),
# with the Atari sizes and model, rather than as subclasses of those: a fifth class level otherwise.


class AtariR2d1Agent(AtariMixin, RecurrentAgentMixin, R2d1AgentBase):
    """:class:`~rlrun.agents.dqn.r2d1_agent.R2d1Agent` with the convolutional-LSTM :class:`AtariR2d1Model`
    by default and the Atari sizes from the env."""

    def __init__(
        self, ModelCls: type[torch.nn.Module] | None = AtariR2d1Model, **kwargs: Unpack[DqnAgentKwargs]
    ) -> None:
        super().__init__(ModelCls=ModelCls, **kwargs)


class AtariR2d1AlternatingAgent(AtariMixin, RecurrentAgentMixin, R2d1AgentBase):
    """rlpyt's name for :class:`AtariR2d1Agent` in an alternating sampler: the same agent with
    ``alternating = True`` (see :class:`~rlrun.agents.dqn.r2d1_agent.R2d1AlternatingAgent`)."""

    alternating = True

    def __init__(
        self, ModelCls: type[torch.nn.Module] | None = AtariR2d1Model, **kwargs: Unpack[DqnAgentKwargs]
    ) -> None:
        super().__init__(ModelCls=ModelCls, **kwargs)
