"""Policy-gradient agents for discrete actions: feedforward and recurrent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from rlrun.agents.base import AgentStep, BaseAgent, BaseAgentKwargs, RecurrentAgentMixin, SpaceTensor
from rlrun.agents.env_spaces import EnvModelKwargs, EnvSpacesLike, discrete_action_size, discrete_array_model_kwargs

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
from rlrun.distributions.categorical import Categorical, DistInfo
from rlrun.models.lstm import RecurrentState
from rlrun.models.pg.mlp import CategoricalPgMlpModel
from rlrun.models.pg.mlp_lstm_model import CategoricalPgLstmModel
from rlrun.models.utils import reads_prev_action, unwrap_ddp
from rlrun.utils.collections import NamedArrayTuple

__all__ = [
    "CategoricalPgAgentKwargs",
    "CategoricalPgAgent",
    "RecurrentCategoricalPgAgentBase",
    "RecurrentCategoricalPgAgent",
    "AlternatingRecurrentCategoricalPgAgent",
]


class CategoricalPgAgentKwargs(BaseAgentKwargs, total=False):
    """The categorical agents' keywords besides ``ModelCls`` (for subclasses that pass them on)."""

    greedy_eval: bool


# What the categorical agents share, as functions of the agent rather than a class level between them.


def _categorical(agent: BaseAgent, env_spaces: EnvSpacesLike) -> Categorical:
    return Categorical(dim=discrete_action_size(agent, env_spaces.action))


def _encode_prev_action(agent: BaseAgent, distribution: Categorical, prev_action: SpaceTensor) -> SpaceTensor:
    """``prev_action`` one-hot encoded for the model (left as indexes for a model whose forward never
    reads it: :func:`~rlrun.models.utils.ignores_prev_action`)."""
    if not reads_prev_action(agent.model):
        return prev_action
    if isinstance(prev_action, torch.Tensor):
        return distribution.to_onehot(prev_action)
    raise TypeError(
        f"{type(agent).__name__} takes discrete actions (one integer per env), but prev_action is a "
        f"{type(prev_action).__name__}. Use an agent for the env's action space, or a model whose forward "
        "ignores prev_action (rlrun.models.utils.ignores_prev_action)."
    )


def _choose(agent: BaseAgent, distribution: Categorical, pi: torch.Tensor, greedy: bool) -> torch.Tensor:
    """Sample from ``pi`` (from the env's own random stream where seeded), or its argmax if ``greedy``."""
    if greedy:
        return torch.argmax(pi, dim=-1)
    return distribution.sample(DistInfo(prob=pi), uniform=agent.env_stream_uniform(pi.shape[:-1]))


class CategoricalPgAgent(BaseAgent):
    """Samples actions from a categorical policy; the model returns ``(pi, value)``.

    The model gets ``prev_action`` one-hot encoded. Without ``ModelCls`` the agent builds a
    :class:`CategoricalPgMlpModel` sized from the env (array observations, discrete actions);
    ``model_kwargs`` such as ``hidden_sizes`` still apply. A user ``ModelCls`` receives only
    ``model_kwargs``, unless a subclass overrides :meth:`make_env_to_model_kwargs`.

    ``greedy_eval=True`` (not in rlpyt) takes the most probable action in eval mode instead of
    sampling, the deterministic evaluation most benchmarks report; training always samples.
    """

    default_model_cls = CategoricalPgMlpModel
    distribution: Categorical

    def __init__(
        self,
        ModelCls: type[torch.nn.Module] | None = None,
        model_kwargs: dict[str, Any] | None = None,
        initial_model_state_dict: Mapping[str, Any] | None = None,
        *,
        greedy_eval: bool = False,
    ) -> None:
        super().__init__(ModelCls, model_kwargs, initial_model_state_dict)
        self.greedy_eval = greedy_eval

    def initialize(
        self,
        env_spaces: EnvSpacesLike,
        share_memory: bool = False,
        global_B: int = 1,
        env_ranks: list[int] | None = None,
    ) -> None:
        distribution = _categorical(self, env_spaces)
        super().initialize(env_spaces, share_memory, global_B=global_B, env_ranks=env_ranks)
        self.distribution = distribution

    def make_env_to_model_kwargs(self, env_spaces: EnvSpacesLike) -> EnvModelKwargs:
        """The env's sizes for the default model; a user ``ModelCls`` gets none."""
        return {} if self.ModelCls is not None else discrete_array_model_kwargs(self, env_spaces)

    def _model_inputs(
        self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor
    ) -> tuple[SpaceTensor, SpaceTensor, torch.Tensor]:
        """The model's inputs on the agent's device, ``prev_action`` one-hot."""
        prev_action = _encode_prev_action(self, self.distribution, prev_action)
        return self.inputs_to_device((observation, prev_action, prev_reward))

    def __call__(
        self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor
    ) -> tuple[DistInfo, torch.Tensor]:
        """``(DistInfo(prob [T, B, A]), value [T, B])`` on the agent's device, with grad (training; the
        algorithm moved the batch there: :meth:`step` and :meth:`value` answer the sampler on the CPU)."""
        pi, value = self.model(*self._model_inputs(observation, prev_action, prev_reward))
        return DistInfo(prob=pi), value

    @torch.no_grad()
    def step(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> AgentStep:
        pi, value = self.model(*self._model_inputs(observation, prev_action, prev_reward))
        action = _choose(self, self.distribution, pi, self.greedy_eval and self._mode == "eval")
        agent_info = AgentInfo(dist_info=DistInfo(prob=pi), value=value)
        action, agent_info = self.outputs_to_cpu((action, agent_info))
        return AgentStep(action=action, agent_info=agent_info)

    @torch.no_grad()
    def value(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> torch.Tensor:
        """V(s) ``[B]`` on the CPU without grad, e.g. the bootstrap value after a batch's last step."""
        value: torch.Tensor  # the model is an nn.Module, whose outputs mypy sees as Any
        _pi, value = self.model(*self._model_inputs(observation, prev_action, prev_reward))
        return value.cpu()


class RecurrentCategoricalPgAgentBase(StatelessRnnHooks, BaseAgent):
    """A categorical policy whose model also takes and returns a recurrent state.

    The model is called ``model(observation, prev_action_onehot, prev_reward, rnn_state)`` and returns
    ``(pi, value, next_rnn_state)``, states ``[N, B, H]`` (a tensor or a tuple of them, e.g.
    :class:`RnnState <rlrun.models.lstm.RnnState>`; None means zeros). :meth:`step` starts from
    the state kept by :class:`RecurrentAgentMixin`, keeps the next one, and records the state it
    started from in ``agent_info.prev_rnn_state`` (batch-first, ``[B, N, H]``), from which A2C and
    PPO replay a batch. At a step that starts an episode (:meth:`episode_starts`: after a reset) the
    model sees zeros as the previous action and reward, as R2D1's agent does, in sampling and
    evaluation; ``agent_info.episode_start`` records those steps, and :meth:`__call__` takes them
    back (``episode_start``) so that training sees what sampling saw (docs/recurrent_pg.md). Without
    ``ModelCls`` the agent builds a :class:`CategoricalPgLstmModel` sized from the env.
    ``greedy_eval`` as in :class:`CategoricalPgAgent`.
    """

    recurrent = True
    default_model_cls = CategoricalPgLstmModel
    distribution: Categorical

    def __init__(
        self,
        ModelCls: type[torch.nn.Module] | None = None,
        model_kwargs: dict[str, Any] | None = None,
        initial_model_state_dict: Mapping[str, Any] | None = None,
        *,
        greedy_eval: bool = False,
    ) -> None:
        super().__init__(ModelCls, model_kwargs, initial_model_state_dict)
        self.greedy_eval = greedy_eval

    def initialize(
        self,
        env_spaces: EnvSpacesLike,
        share_memory: bool = False,
        global_B: int = 1,
        env_ranks: list[int] | None = None,
    ) -> None:
        distribution = _categorical(self, env_spaces)
        super().initialize(env_spaces, share_memory, global_B=global_B, env_ranks=env_ranks)
        self.distribution = distribution

    def make_env_to_model_kwargs(self, env_spaces: EnvSpacesLike) -> EnvModelKwargs:
        """The env's sizes for the default model; a user ``ModelCls`` gets none."""
        return {} if self.ModelCls is not None else discrete_array_model_kwargs(self, env_spaces)

    def update_obs_rms(self, observation: torch.Tensor) -> None:
        """Fold observations into a :class:`CategoricalPgLstmModel`'s normalisation statistics (the
        algorithm calls this once per batch; other models keep no statistics)."""
        model = unwrap_ddp(self.model)
        if isinstance(model, CategoricalPgLstmModel):
            model.update_obs_rms(self.inputs_to_device(observation))

    def _model_inputs(
        self,
        observation: SpaceTensor,
        prev_action: SpaceTensor,
        prev_reward: torch.Tensor,
        rnn_state: RecurrentState | None,
        episode_start: torch.Tensor | None = None,
    ) -> ModelInputs:
        """The model's inputs and ``rnn_state`` on the agent's device, ``prev_action`` one-hot, and the
        previous action and reward zeroed where ``episode_start`` (bool, the shape of ``prev_reward``)."""
        prev_action = _encode_prev_action(self, self.distribution, prev_action)
        assert isinstance(prev_action, torch.Tensor)  # _encode_prev_action refuses any other
        return model_inputs(self, observation, prev_action, prev_reward, rnn_state, episode_start)

    @staticmethod
    def _read(outputs: tuple[torch.Tensor, ...]) -> PolicyOutputs:
        """``(DistInfo(prob), value, next_rnn_state)`` from the model's ``(pi, value, next_rnn_state)``."""
        pi, value, next_rnn_state = outputs
        return DistInfo(prob=pi), value, next_rnn_state

    def _choose_from(self, dist_info: NamedArrayTuple) -> torch.Tensor:
        return _choose(self, self.distribution, dist_info.prob, self.greedy_eval and self._mode == "eval")

    def __call__(
        self,
        observation: SpaceTensor,
        prev_action: SpaceTensor,
        prev_reward: torch.Tensor,
        init_rnn_state: RecurrentState | None = None,
        episode_start: torch.Tensor | None = None,
    ) -> PolicyOutputs:
        """The forward pass over a ``[T, B]`` batch from ``init_rnn_state`` (``[N, B, H]``; None for zeros),
        with grad: ``(DistInfo(prob [T, B, A]), value [T, B])`` and the state after the last step, all on
        the agent's device (training; :meth:`step` and :meth:`value` answer the sampler on the CPU). ``episode_start`` (bool ``[T, B]``, optional; as recorded in
        ``agent_info.episode_start``): the steps whose previous action and reward the model sees as
        zeros, as :meth:`step` gave them. The state is not reset inside the batch; A2C and PPO cut the
        batch where episodes start (:func:`~rlrun.algos.recurrent.run_with_resets`)."""
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


class RecurrentCategoricalPgAgent(RecurrentAgentMixin, RecurrentCategoricalPgAgentBase):
    """:class:`RecurrentCategoricalPgAgentBase` keeping its state between steps (see :class:`RecurrentAgentMixin`)."""


class AlternatingRecurrentCategoricalPgAgent(RecurrentAgentMixin, RecurrentCategoricalPgAgentBase):
    """rlpyt's name for the agent to use with an alternating sampler: :class:`RecurrentCategoricalPgAgent`
    with ``alternating = True``. In rlrun every recurrent agent serves an alternating sampler, as
    ``AlternatingSampler`` keeps one recurrent state per group of envs and swaps it in before stepping
    that group.

    A sampler written for rlpyt that serves the two groups itself calls :meth:`toggle_alt` between them;
    the agent then keeps one recurrent state per group (:meth:`get_alt` says which is served)."""

    alternating = True
