"""The R2D1 agent: a recurrent Q model, its target copy, and epsilon-greedy exploration."""

from __future__ import annotations

import torch

from rlrun.agents.base import AgentStep, RecurrentAgentMixin, SpaceTensor
from rlrun.agents.dqn.q_agent import EpsilonGreedyQAgent
from rlrun.agents.pg.base import rnn_state_to_storage
from rlrun.agents.recurrent_state import StatelessRnnHooks, hide_previous_step
from rlrun.models.dqn.r2d1_mlp import R2d1MlpModel
from rlrun.models.lstm import RecurrentState
from rlrun.utils.buffer import buffer_to
from rlrun.utils.collections import namedarraytuple

__all__ = ["AgentInfo", "R2d1AgentBase", "R2d1Agent", "R2d1AlternatingAgent"]

# q: the Q-values at the step (R2D1 computes the input priorities of new samples from them);
# prev_rnn_state: the recurrent state the step started from, batch-first ([B, N, H]).
AgentInfo = namedarraytuple("AgentInfo", ["q", "prev_rnn_state"])


class R2d1AgentBase(StatelessRnnHooks, EpsilonGreedyQAgent):
    """An epsilon-greedy Q agent (:class:`EpsilonGreedyQAgent`) whose model also takes and returns a
    recurrent state. A sibling of ``DqnAgent``, no longer its subclass as in rlpyt: its ``__call__`` and
    ``target`` return ``(q, rnn_state)`` where a ``DqnAgent``'s return ``q`` (see ``docs/migration.md``).

    The model is called ``model(observation, prev_action_onehot, prev_reward, rnn_state)`` and returns
    ``(q, next_rnn_state)``, states ``[N, B, H]`` (a tensor or a tuple of them, e.g. ``RnnState(h,
    c)``; None means zeros). :meth:`step` records the state it started from in
    ``agent_info.prev_rnn_state`` (batch-first), which the sequence replay keeps every
    ``store_rnn_state_interval`` steps. Without ``ModelCls`` the agent builds an :class:`R2d1MlpModel`
    sized from the env.
    """

    recurrent = True
    default_model_cls = R2d1MlpModel

    def _inputs(
        self,
        observation: SpaceTensor,
        prev_action: SpaceTensor,
        prev_reward: torch.Tensor,
        episode_start: torch.Tensor | None = None,
    ) -> tuple[SpaceTensor, SpaceTensor, torch.Tensor]:
        """The model's inputs on the agent's device: ``prev_action`` one-hot, and at the steps where
        ``episode_start`` (bool, the shape of ``prev_reward``) the previous action and reward zeroed
        (:func:`~rlrun.agents.recurrent_state.hide_previous_step`, which says why), in sampling,
        evaluation and replayed sequences alike.
        """
        observation, prev_action, prev_reward = super()._inputs(observation, prev_action, prev_reward)
        assert isinstance(prev_action, torch.Tensor)  # discrete actions, one-hot: a tensor
        return observation, *hide_previous_step(prev_action, prev_reward, episode_start)

    def __call__(
        self,
        observation: SpaceTensor,
        prev_action: SpaceTensor,
        prev_reward: torch.Tensor,
        init_rnn_state: RecurrentState | None = None,
        episode_start: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, RecurrentState]:
        """Q-values ``[T, B, n_actions]`` (with grad) over a ``[T, B]`` batch from ``init_rnn_state``
        (``[N, B, H]``, None for zeros), and the state after the last step, both on the agent's device
        (training; :meth:`step` answers the sampler on the CPU). ``episode_start`` (bool ``[T, B]``, optional): the steps that begin an
        episode, whose previous action and reward the model sees as zeros, as :meth:`step` gave them."""
        inputs = self._inputs(observation, prev_action, prev_reward, episode_start)
        q: torch.Tensor  # the model is an nn.Module, whose outputs mypy sees as Any
        q, rnn_state = self.model(*inputs, _to(init_rnn_state, self.device))
        return q, rnn_state

    @torch.no_grad()
    def target(
        self,
        observation: SpaceTensor,
        prev_action: SpaceTensor,
        prev_reward: torch.Tensor,
        init_rnn_state: RecurrentState | None = None,
        episode_start: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, RecurrentState]:
        """As :meth:`__call__` with the target network, without grad."""
        inputs = self._inputs(observation, prev_action, prev_reward, episode_start)
        q: torch.Tensor
        q, rnn_state = self.target_model(*inputs, _to(init_rnn_state, self.device))
        return q, rnn_state

    @torch.no_grad()
    def step(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> AgentStep:
        prev_rnn_state = self.prev_rnn_state
        episode_start = self.episode_starts(prev_reward.shape[0]) if prev_reward.dim() else None
        q, rnn_state = self.model(*self._inputs(observation, prev_action, prev_reward, episode_start), prev_rnn_state)
        q = q.cpu()
        action = self.distribution.sample(q, uniform=self.env_stream_uniform(q.shape[:-1]))
        stored = buffer_to(rnn_state_to_storage(prev_rnn_state, rnn_state), device="cpu")
        self.advance_rnn_state(rnn_state)  # stays on the device
        return AgentStep(action=action, agent_info=AgentInfo(q=q, prev_rnn_state=stored))


def _to(state: RecurrentState | None, device: torch.device) -> RecurrentState | None:
    moved: RecurrentState | None = None if state is None else buffer_to(state, device=device)
    return moved


class R2d1Agent(RecurrentAgentMixin, R2d1AgentBase):
    """:class:`R2d1AgentBase` keeping its state between steps (see :class:`RecurrentAgentMixin`), and
    which envs start an episode at the next step (:meth:`episode_starts`): all after :meth:`reset` (and
    on entering evaluation), env ``idx`` after ``reset_one(idx)``. Those get zeros for the previous
    action and reward. Envs reset at a batch's last step start at the next batch's first."""


class R2d1AlternatingAgent(RecurrentAgentMixin, R2d1AgentBase):
    """rlpyt's name for the agent to use with an alternating sampler: :class:`R2d1Agent` with
    ``alternating = True``. In rlrun every recurrent agent serves an alternating sampler
    (``AlternatingSampler`` keeps one recurrent state per group of envs).

    A sampler written for rlpyt that serves the two groups itself calls :meth:`toggle_alt` between them;
    the agent then keeps one recurrent state and one set of starting envs per group (:meth:`get_alt`
    says which is served)."""

    alternating = True
