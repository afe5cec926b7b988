"""Policy-gradient agents for continuous control (MuJoCo-style vector observations)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from rlrun.agents.base import BaseAgent, BaseAgentKwargs
from rlrun.agents.env_spaces import EnvModelKwargs, EnvSpacesLike, continuous_array_model_kwargs
from rlrun.agents.pg.gaussian import AlternatingRecurrentGaussianPgAgent, GaussianPgAgent, RecurrentGaussianPgAgent
from rlrun.models.pg.mujoco_ff_model import MujocoFfModel
from rlrun.models.pg.mujoco_lstm_model import MujocoLstmModel

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["MujocoMixin", "MujocoFfAgent", "MujocoLstmAgent", "AlternatingMujocoLstmAgent"]


class MujocoMixin(BaseAgent):
    """Gives the model ``observation_shape`` and ``action_size``; forwards observation-statistics updates."""

    def make_env_to_model_kwargs(self, env_spaces: EnvSpacesLike) -> EnvModelKwargs:
        return continuous_array_model_kwargs(self, env_spaces)

    def update_obs_rms(self, observation: torch.Tensor) -> None:
        """Fold observations into the model's normalisation statistics (the algorithm calls this)."""
        model: Any = self.model.module if hasattr(self.model, "module") else self.model  # under DDP
        model.update_obs_rms(self.inputs_to_device(observation))


class MujocoFfAgent(MujocoMixin, GaussianPgAgent):
    """A Gaussian policy-gradient agent with the feedforward :class:`MujocoFfModel` by default."""

    def __init__(
        self, ModelCls: type[torch.nn.Module] | None = MujocoFfModel, **kwargs: Unpack[BaseAgentKwargs]
    ) -> None:
        super().__init__(ModelCls=ModelCls, **kwargs)


class MujocoLstmAgent(MujocoMixin, RecurrentGaussianPgAgent):
    """A recurrent Gaussian policy-gradient agent with :class:`MujocoLstmModel` by default.

    Train it with A2C or PPO and a wait-reset collector (see ``docs/agents.md``).
    """

    def __init__(
        self, ModelCls: type[torch.nn.Module] | None = MujocoLstmModel, **kwargs: Unpack[BaseAgentKwargs]
    ) -> None:
        super().__init__(ModelCls=ModelCls, **kwargs)


class AlternatingMujocoLstmAgent(MujocoMixin, AlternatingRecurrentGaussianPgAgent):
    """rlpyt's name for :class:`MujocoLstmAgent` in an alternating sampler: the same agent with
    ``alternating = True`` (rlrun's ``AlternatingSampler`` serves :class:`MujocoLstmAgent` as well, keeping
    one recurrent state per group of envs).

    A sampler written for rlpyt that serves the two groups itself calls :meth:`toggle_alt` between them;
    the agent then keeps one recurrent state per group (:meth:`get_alt` says which is served)."""

    def __init__(
        self, ModelCls: type[torch.nn.Module] | None = MujocoLstmModel, **kwargs: Unpack[BaseAgentKwargs]
    ) -> None:
        super().__init__(ModelCls=ModelCls, **kwargs)
