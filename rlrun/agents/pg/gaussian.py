"""Policy-gradient agents for continuous actions: feedforward and recurrent."""

from __future__ import annotations

import torch

from rlrun.agents.base import AgentStep, BaseAgent, RecurrentAgentMixin, SpaceTensor
from rlrun.agents.env_spaces import (
    EnvModelKwargs,
    EnvSpacesLike,
    continuous_action_size,
    continuous_array_model_kwargs,
)

# AgentInfoRnn: rlpyt's module had it (its star import gave it); the agents record AgentInfoRnnStart.
from rlrun.agents.pg.base import AgentInfo, AgentInfoRnn, step_episode_start  # noqa: F401
from rlrun.agents.pg.recurrent import (
    ModelInputs,
    PolicyOutputs,
    bootstrap_value,
    model_inputs,
    sample_step,
    train_forward,
)
from rlrun.agents.recurrent_state import StatelessRnnHooks
from rlrun.distributions.gaussian import DistInfoStd, Gaussian
from rlrun.models.lstm import RecurrentState
from rlrun.models.pg.mujoco_ff_model import MujocoFfModel
from rlrun.models.pg.mujoco_lstm_model import MujocoLstmModel
from rlrun.utils.collections import NamedArrayTuple

__all__ = [
    "GaussianPgAgent",
    "RecurrentGaussianPgAgentBase",
    "RecurrentGaussianPgAgent",
    "AlternatingRecurrentGaussianPgAgent",
]


def _choose(agent: BaseAgent, distribution: Gaussian, dist_info: DistInfoStd) -> torch.Tensor:
    """Sample an action (from the env's own random stream where seeded)."""
    return distribution.sample(dist_info, uniform=agent.env_stream_uniform(dist_info.mean.shape[:-1]))


class GaussianPgAgent(BaseAgent):
    """Samples actions from a diagonal Gaussian policy; the model returns ``(mu, log_std, value)``.

    Actions are not clipped to the action space's bounds (Gymnasium's continuous envs clip them).
    Without ``ModelCls`` the agent builds a :class:`MujocoFfModel` sized from the env; a user
    ``ModelCls`` receives only ``model_kwargs``, unless a subclass overrides
    :meth:`make_env_to_model_kwargs`.
    """

    default_model_cls = MujocoFfModel
    distribution: Gaussian

    def initialize(
        self,
        env_spaces: EnvSpacesLike,
        share_memory: bool = False,
        global_B: int = 1,
        env_ranks: list[int] | None = None,
    ) -> None:
        action_size = continuous_action_size(self, env_spaces.action)
        super().initialize(env_spaces, share_memory, global_B=global_B, env_ranks=env_ranks)
        self.distribution = Gaussian(dim=action_size)

    def make_env_to_model_kwargs(self, env_spaces: EnvSpacesLike) -> EnvModelKwargs:
        """The env's sizes for the default model; a user ``ModelCls`` gets none."""
        return {} if self.ModelCls is not None else continuous_array_model_kwargs(self, env_spaces)

    def __call__(
        self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor
    ) -> tuple[DistInfoStd, torch.Tensor]:
        """``(DistInfoStd(mean, log_std) [T, B, A], value [T, B])`` on the agent's device, with grad
        (training; :meth:`step` and :meth:`value` answer the sampler on the CPU)."""
        mu, log_std, value = self.model(*self.inputs_to_device((observation, prev_action, prev_reward)))
        return DistInfoStd(mean=mu, log_std=log_std), value

    @torch.no_grad()
    def step(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> AgentStep:
        mu, log_std, value = self.model(*self.inputs_to_device((observation, prev_action, prev_reward)))
        dist_info = DistInfoStd(mean=mu, log_std=log_std)
        action = _choose(self, self.distribution, dist_info)
        agent_info = AgentInfo(dist_info=dist_info, value=value)
        action, agent_info = self.outputs_to_cpu((action, agent_info))
        return AgentStep(action=action, agent_info=agent_info)

    @torch.no_grad()
    def value(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> torch.Tensor:
        """V(s) ``[B]`` on the CPU without grad, e.g. the bootstrap value after a batch's last step."""
        value: torch.Tensor  # the model is an nn.Module, whose outputs mypy sees as Any
        _mu, _log_std, value = self.model(*self.inputs_to_device((observation, prev_action, prev_reward)))
        return value.cpu()


class RecurrentGaussianPgAgentBase(StatelessRnnHooks, BaseAgent):
    """A diagonal Gaussian policy whose model also takes and returns a recurrent state.

    The model is called ``model(observation, prev_action, prev_reward, rnn_state)`` and returns
    ``(mu, log_std, value, next_rnn_state)``, states ``[N, B, H]`` (None means zeros). State handling
    as in :class:`RecurrentCategoricalPgAgentBase
    <rlrun.agents.pg.categorical.RecurrentCategoricalPgAgentBase>`: ``agent_info.prev_rnn_state``
    records the state each step started from, batch-first, and at an episode's first step the model
    sees zeros as the previous action and reward (``agent_info.episode_start`` records those steps;
    :meth:`__call__` takes them back as ``episode_start``). Without ``ModelCls`` the agent builds a
    :class:`MujocoLstmModel` sized from the env.
    """

    recurrent = True
    default_model_cls = MujocoLstmModel
    distribution: Gaussian

    def initialize(
        self,
        env_spaces: EnvSpacesLike,
        share_memory: bool = False,
        global_B: int = 1,
        env_ranks: list[int] | None = None,
    ) -> None:
        action_size = continuous_action_size(self, env_spaces.action)
        super().initialize(env_spaces, share_memory, global_B=global_B, env_ranks=env_ranks)
        self.distribution = Gaussian(dim=action_size)

    def make_env_to_model_kwargs(self, env_spaces: EnvSpacesLike) -> EnvModelKwargs:
        """The env's sizes for the default model; a user ``ModelCls`` gets none."""
        return {} if self.ModelCls is not None else continuous_array_model_kwargs(self, env_spaces)

    def _model_inputs(
        self,
        observation: SpaceTensor,
        prev_action: SpaceTensor,
        prev_reward: torch.Tensor,
        rnn_state: RecurrentState | None,
        episode_start: torch.Tensor | None = None,
    ) -> ModelInputs:
        """The model's inputs and ``rnn_state`` on the agent's device, the previous action and reward
        zeroed where ``episode_start`` (bool, the shape of ``prev_reward``)."""
        if not isinstance(prev_action, torch.Tensor):
            raise TypeError(
                f"{type(self).__name__} takes continuous actions (one vector per env), but prev_action is a "
                f"{type(prev_action).__name__}. Use an agent for the env's action space."
            )
        return model_inputs(self, observation, prev_action, prev_reward, rnn_state, episode_start)

    @staticmethod
    def _read(outputs: tuple[torch.Tensor, ...]) -> PolicyOutputs:
        """``(DistInfoStd(mean, log_std), value, next_rnn_state)`` from the model's ``(mu, log_std, value,
        next_rnn_state)``."""
        mu, log_std, value, next_rnn_state = outputs
        return DistInfoStd(mean=mu, log_std=log_std), value, next_rnn_state

    def _choose_from(self, dist_info: NamedArrayTuple) -> torch.Tensor:
        return _choose(self, self.distribution, dist_info)

    def __call__(
        self,
        observation: SpaceTensor,
        prev_action: SpaceTensor,
        prev_reward: torch.Tensor,
        init_rnn_state: RecurrentState | None = None,
        episode_start: torch.Tensor | None = None,
    ) -> PolicyOutputs:
        """The forward pass over a ``[T, B]`` batch from ``init_rnn_state`` (``[N, B, H]``; None for zeros),
        with grad: ``(DistInfoStd(mean, log_std) [T, B, A], value [T, B])`` and the state after the last
        step, all on the agent's device (training; :meth:`step` and :meth:`value` answer the sampler on
        the CPU). ``episode_start`` (bool ``[T, B]``, optional):
        the steps whose previous action and reward the model sees as zeros, as :meth:`step` gave them."""
        inputs = self._model_inputs(observation, prev_action, prev_reward, init_rnn_state, episode_start)
        return train_forward(self, self._read, inputs)

    @torch.no_grad()
    def step(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> AgentStep:
        episode_start = step_episode_start(self, prev_reward)
        inputs = self._model_inputs(observation, prev_action, prev_reward, self.prev_rnn_state, episode_start)
        agent_step, next_rnn_state = sample_step(self, self._read, self._choose_from, inputs, episode_start)
        self.advance_rnn_state(next_rnn_state)
        return agent_step

    @torch.no_grad()
    def value(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> torch.Tensor:
        """V(s) ``[B]`` on the CPU from the kept state, which it does not advance (the bootstrap value),
        with the episode-start zeros :meth:`step` would give."""
        inputs = self._model_inputs(
            observation, prev_action, prev_reward, self.prev_rnn_state, step_episode_start(self, prev_reward)
        )
        return bootstrap_value(self, self._read, inputs)


class RecurrentGaussianPgAgent(RecurrentAgentMixin, RecurrentGaussianPgAgentBase):
    """:class:`RecurrentGaussianPgAgentBase` keeping its state between steps (see :class:`RecurrentAgentMixin`)."""


class AlternatingRecurrentGaussianPgAgent(RecurrentAgentMixin, RecurrentGaussianPgAgentBase):
    """rlpyt's name for the agent to use with an alternating sampler: :class:`RecurrentGaussianPgAgent`
    with ``alternating = True``. In rlrun every recurrent agent serves an alternating sampler, as
    ``AlternatingSampler`` keeps one recurrent state per group of envs and swaps it in before stepping
    that group.

    A sampler written for rlpyt that serves the two groups itself calls :meth:`toggle_alt` between them;
    the agent then keeps one recurrent state per group (:meth:`get_alt` says which is served)."""

    alternating = True
