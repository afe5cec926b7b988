"""What policy-gradient agents record per step, and how recurrent ones store their state there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeGuard

import torch

from rlrun.agents.base import BaseAgent, SpaceTensor
from rlrun.models.lstm import RecurrentState
from rlrun.utils.buffer import buffer_func, buffer_method
from rlrun.utils.collections import NamedArrayTuple, namedarraytuple

__all__ = [
    "AgentInfo",
    "AgentInfoRnn",
    "AgentInfoRnnStart",
    "RecurrentPgAgent",
    "is_recurrent_pg_agent",
    "rnn_state_to_storage",
    "rnn_state_from_storage",
    "step_episode_start",
]

# dist_info: the policy's distribution parameters at the step; value: the value estimate V(s_t).
AgentInfo = namedarraytuple("AgentInfo", ["dist_info", "value"])
# prev_rnn_state: the recurrent state the step started from, stored batch-first ([B, N, H]).
AgentInfoRnn = namedarraytuple("AgentInfoRnn", ["dist_info", "value", "prev_rnn_state"])
# What rlrun's recurrent agents record: AgentInfoRnn's fields, and episode_start: whether the step
# started an episode (bool), where the model saw zeros as the previous action and reward and the state
# started from zeros. A2C and PPO replay the batch with the same zeros at the same steps; an agent that
# records plain AgentInfoRnn is replayed as rlpyt did, with the previous action and reward as stored.
AgentInfoRnnStart = namedarraytuple("AgentInfoRnnStart", AgentInfoRnn._fields + ("episode_start",))


class RecurrentPgAgent(Protocol):
    """A recurrent policy-gradient agent's training call, as A2C and PPO make it: the forward pass over a
    ``[T, B]`` batch from ``init_rnn_state`` (``[N, B, H]``), returning ``(dist_info, value, next_rnn_state)``.
    ``episode_start`` is passed only to agents that record ``agent_info.episode_start`` (rlrun's do)."""

    def __call__(
        self,
        observation: SpaceTensor,
        prev_action: SpaceTensor,
        prev_reward: torch.Tensor,
        init_rnn_state: RecurrentState | None = None,
        episode_start: torch.Tensor | None = None,
    ) -> tuple[NamedArrayTuple, torch.Tensor, RecurrentState]: ...


def is_recurrent_pg_agent(agent: BaseAgent) -> TypeGuard[RecurrentPgAgent]:
    """Whether ``agent`` declares itself recurrent (``agent.recurrent``): its ``__call__`` then also takes
    the recurrent state (:class:`RecurrentPgAgent`), which ``BaseAgent``'s feedforward one does not."""
    return agent.recurrent


class _EpisodeStarts(Protocol):
    def episode_starts(self, B: int) -> torch.Tensor | None: ...


def step_episode_start(agent: _EpisodeStarts, prev_reward: torch.Tensor) -> torch.Tensor:
    """Which envs ``agent``'s next step starts an episode for (its :meth:`episode_starts
    <rlrun.agents.base.RecurrentAgentMixin.episode_starts>`), as a bool tensor shaped like one step's
    ``prev_reward`` (``[B]``, or a scalar for an unbatched step), on the CPU."""
    B = prev_reward.shape[0] if prev_reward.dim() else 1
    starts = agent.episode_starts(B)
    if starts is None:
        starts = torch.zeros(B, dtype=torch.bool)
    return starts if prev_reward.dim() else starts.reshape(())


def rnn_state_to_storage(prev_rnn_state: RecurrentState | None, next_rnn_state: RecurrentState) -> RecurrentState:
    """The state a step started from, as recurrent agents record it in ``agent_info.prev_rnn_state``.

    ``prev_rnn_state`` is the model's ``[N, B, H]`` state (a tensor or a tuple of them), or None
    after a reset, which stands for zeros shaped like ``next_rnn_state``. It is returned as a view
    ``[B, N, H]``, so that the samples buffer ``[T, B, ...]`` holds one state per env and step.
    """
    state = prev_rnn_state if prev_rnn_state is not None else buffer_func(next_rnn_state, torch.zeros_like)
    stored: RecurrentState = buffer_method(state, "transpose", 0, 1)
    return stored


def rnn_state_from_storage(stored_rnn_state: RecurrentState) -> RecurrentState:
    """A stored ``[B, N, H]`` state back in the model's layout ``[N, B, H]`` (contiguous)."""
    state: RecurrentState = buffer_method(buffer_method(stored_rnn_state, "transpose", 0, 1), "contiguous")
    return state


if TYPE_CHECKING:  # The type checker proves rlrun's recurrent pg agents meet the protocol.
    from rlrun.agents.pg.categorical import RecurrentCategoricalPgAgentBase
    from rlrun.agents.pg.gaussian import RecurrentGaussianPgAgentBase

    def _recurrent_agents_meet_the_protocol(
        categorical: RecurrentCategoricalPgAgentBase, gaussian: RecurrentGaussianPgAgentBase
    ) -> tuple[RecurrentPgAgent, RecurrentPgAgent]:
        return categorical, gaussian
