"""The R2D1 agent: a recurrent Q model, its target copy, and epsilon-greedy exploration."""

from __future__ import annotations

from typing import Any

import torch

from rlrun.agents.base import AgentStep, RecurrentAgentMixin
from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.pg.base import rnn_state_to_storage
from rlrun.models.dqn.r2d1_mlp import R2d1MlpModel
from rlrun.utils.buffer import buffer_to
from rlrun.utils.collections import namedarraytuple

__all__ = ["AgentInfo", "R2d1AgentBase", "R2d1Agent", "R2d1AlternatingAgent"]

# q: the Q-values at the step (R2D1 computes the input priorities of new samples from them);
# prev_rnn_state: the recurrent state the step started from, batch-first ([B, N, H]).
AgentInfo = namedarraytuple("AgentInfo", ["q", "prev_rnn_state"])


class R2d1AgentBase(DqnAgent):
    """A :class:`DqnAgent` whose model also takes and returns a recurrent state.

    The model is called ``model(observation, prev_action_onehot, prev_reward, rnn_state)`` and returns
    ``(q, next_rnn_state)``, states ``[N, B, H]`` (a tensor or a tuple of them, e.g. ``RnnState(h,
    c)``; None means zeros). :meth:`step` records the state it started from in
    ``agent_info.prev_rnn_state`` (batch-first), which the sequence replay keeps every
    ``store_rnn_state_interval`` steps. Without ``ModelCls`` the agent builds an :class:`R2d1MlpModel`
    sized from the env.
    """

    recurrent = True
    default_model_cls = R2d1MlpModel

    @property
    def prev_rnn_state(self) -> Any:
        """The state the next step starts from: always None (zeros) here; :class:`RecurrentAgentMixin` keeps it."""
        return None

    def advance_rnn_state(self, new_rnn_state: Any) -> None:
        """Keep the state a step produced: nothing here; :class:`RecurrentAgentMixin` keeps it."""

    def __call__(  # type: ignore[override]
        self, observation: Any, prev_action: Any, prev_reward: torch.Tensor, init_rnn_state: Any = None
    ) -> tuple[torch.Tensor, Any]:
        """Q-values ``[T, B, n_actions]`` on the CPU (with grad) over a ``[T, B]`` batch from
        ``init_rnn_state`` (``[N, B, H]``, None for zeros), and the state after the last step, left on
        the agent's device."""
        q, rnn_state = self.model(
            *self._inputs(observation, prev_action, prev_reward), _to(init_rnn_state, self.device)
        )
        return q.cpu(), rnn_state

    @torch.no_grad()
    def target(  # type: ignore[override]
        self, observation: Any, prev_action: Any, prev_reward: torch.Tensor, init_rnn_state: Any = None
    ) -> tuple[torch.Tensor, Any]:
        """As :meth:`__call__` with the target network, without grad."""
        inputs = self._inputs(observation, prev_action, prev_reward)
        q, rnn_state = self.target_model(*inputs, _to(init_rnn_state, self.device))
        return q.cpu(), rnn_state

    @torch.no_grad()
    def step(self, observation: Any, prev_action: Any, prev_reward: torch.Tensor) -> AgentStep:
        prev_rnn_state = self.prev_rnn_state
        q, rnn_state = self.model(*self._inputs(observation, prev_action, prev_reward), prev_rnn_state)
        q = q.cpu()
        action = self.distribution.sample(q, uniform=self.env_stream_uniform(q.shape[:-1]))
        stored = buffer_to(rnn_state_to_storage(prev_rnn_state, rnn_state), device="cpu")
        self.advance_rnn_state(rnn_state)  # stays on the device
        return AgentStep(action=action, agent_info=AgentInfo(q=q, prev_rnn_state=stored))


def _to(state: Any, device: torch.device | None) -> Any:
    return None if state is None else buffer_to(state, device=device)


class R2d1Agent(RecurrentAgentMixin, R2d1AgentBase):
    """:class:`R2d1AgentBase` keeping its state between steps (see :class:`RecurrentAgentMixin`)."""


class R2d1AlternatingAgent(R2d1Agent):
    """rlpyt's name for the agent to use with an alternating sampler; in rlrun the same as
    :class:`R2d1Agent`, which every sampler can serve (``AlternatingSampler`` keeps one recurrent
    state per group of envs)."""

    alternating = True
