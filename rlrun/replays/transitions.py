"""Replays of single transitions with n-step returns: a storage, a sampling rule, and what a batch is."""

from __future__ import annotations

import numpy as np

from rlrun.agents.base import AgentInputs
from rlrun.replays.base import BaseReplayBuffer
from rlrun.replays.composed import ComposedReplay, ReplayParts
from rlrun.replays.sampling import PrioritizedSampling
from rlrun.utils.buffer import torchify_buffer
from rlrun.utils.collections import NamedArrayTuple, namedarraytuple

__all__ = [
    "SamplesFromReplay",
    "SamplesFromReplayTl",
    "SamplesFromReplayPri",
    "SamplesFromReplayTlPri",
    "TransitionReplay",
]

SamplesFromReplay = namedarraytuple(
    "SamplesFromReplay", ["agent_inputs", "action", "return_", "done", "done_n", "target_inputs"]
)
SamplesFromReplayTl = namedarraytuple(
    "SamplesFromReplayTl", SamplesFromReplay._fields + ("timeout", "timeout_n", "steps_n")
)
SamplesFromReplayPri = namedarraytuple("SamplesFromReplayPri", SamplesFromReplay._fields + ("is_weights",))
SamplesFromReplayTlPri = namedarraytuple("SamplesFromReplayTlPri", SamplesFromReplayTl._fields + ("is_weights",))


class TransitionReplay(ComposedReplay, BaseReplayBuffer):
    """Draws transitions ``(s_t, a_t, n-step return, s_{t+n})`` from a storage
    (:class:`~rlrun.replays.storage.NStepReturnStorage` or
    :class:`~rlrun.replays.frame_storage.NStepFrameStorage`) with a sampling rule
    (:mod:`rlrun.replays.sampling`); build one with :func:`rlrun.replays.factory.make_replay_buffer`.

    ``sample_batch(batch_B)`` returns :data:`SamplesFromReplay` of torch tensors with leading dim
    ``[batch_B]``: ``agent_inputs`` at ``t``, ``action`` at ``t``, ``return_`` and ``done_n`` of the
    window starting at ``t``, ``done`` at ``t`` and ``target_inputs`` for the bootstrap state
    ``t + n``. ``prev_action`` and ``prev_reward`` are zero where ``t`` starts an episode.

    With ``timeout`` stored it returns :data:`SamplesFromReplayTl`, adding ``timeout`` (at ``t``),
    ``timeout_n`` (the window was cut by a time limit) and ``steps_n`` (rewards in the window). A
    window cut by a time limit at step ``t + k``, ``k >= 1``, stops before the cut step: ``k``
    rewards, then ``discount ** k`` times the value of ``s_{t+k}`` (``target_inputs``), an exact
    target. A window cut at ``t`` itself keeps ``t``'s reward and bootstraps with ``discount`` from
    ``s_{t+1}``, which the storage does not hold (the env was reset): ``target_inputs`` then hold
    ``s_t`` as its estimate.

    With a prioritized rule the batch is :data:`SamplesFromReplayPri` (or ``...TlPri``), adding
    ``is_weights`` ``[batch_B]``; :meth:`update_batch_priorities` then takes the batch's new priorities.
    """

    def __init__(self, parts: ReplayParts) -> None:
        if parts.rnn_states is not None or parts.batch_T is not None:
            raise ValueError("A transition replay keeps no recurrent states or batch_T; build a SequenceReplay.")
        self._adopt(parts)

    def _append(self, samples: NamedArrayTuple, priorities: np.ndarray | None) -> tuple[int, slice | np.ndarray]:
        t = self.storage.t
        T, idxs = self.storage.append(samples)
        self.sampling.appended(self.storage, t, T, priorities)
        return T, idxs

    def _draw(self, batch_B: int, batch_T: int | None) -> NamedArrayTuple:
        if batch_T is not None:
            raise ValueError(f"{type(self).__name__} draws single transitions; batch_T is for sequence replays.")
        batch = self.extract_batch(*self.sample_idxs(batch_B))
        if isinstance(self.sampling, PrioritizedSampling):
            Cls = SamplesFromReplayTlPri if self.storage.has_timeout else SamplesFromReplayPri
            batch = Cls(*batch, is_weights=self.is_weights())
        return batch

    def sample_idxs(self, batch_B: int) -> tuple[np.ndarray, np.ndarray]:
        """``(T_idxs, B_idxs)``, each ``[batch_B]``, of valid transitions, drawn by the sampling rule."""
        return self.sampling.sample_idxs(self.storage, batch_B)

    def extract_observation(self, T_idxs: np.ndarray, B_idxs: np.ndarray) -> np.ndarray:
        """The observations ``[len(T_idxs), ...]`` at ``[T_idxs, B_idxs]`` (frame stacks are rebuilt)."""
        return self.storage.extract_observation(T_idxs, B_idxs)

    def extract_batch(self, T_idxs: np.ndarray, B_idxs: np.ndarray) -> NamedArrayTuple:
        """The training batch at storage locations ``[T_idxs, B_idxs]``, as torch tensors."""
        st = self.storage
        s = st.samples
        n = st.n_step_return
        if st.has_timeout:
            timeout_n = st.samples_timeout_n[T_idxs, B_idxs]
            steps_n = st.samples_steps_n[T_idxs, B_idxs]
            cut_here = s.timeout[T_idxs, B_idxs].astype(np.int64)  # a cut at the step itself: its own observation
            target_T_idxs = (T_idxs + np.where(timeout_n, steps_n - cut_here, n)) % st.T
        else:
            target_T_idxs = (T_idxs + n) % st.T
        batch = SamplesFromReplay(
            agent_inputs=self._agent_inputs(T_idxs, B_idxs),
            action=s.action[T_idxs, B_idxs],
            return_=st.samples_return_[T_idxs, B_idxs],
            done=s.done[T_idxs, B_idxs],
            done_n=st.samples_done_n[T_idxs, B_idxs],
            target_inputs=self._agent_inputs(target_T_idxs, B_idxs),
        )
        if st.has_timeout:
            batch = SamplesFromReplayTl(*batch, timeout=s.timeout[T_idxs, B_idxs], timeout_n=timeout_n, steps_n=steps_n)
        result: NamedArrayTuple = torchify_buffer(batch)
        return result

    def _agent_inputs(self, T_idxs: np.ndarray, B_idxs: np.ndarray) -> AgentInputs:
        s = self.storage.samples
        prev = T_idxs - 1  # -1 wraps to the last row, which is the previous step once full.
        prev_action = s.action[prev, B_idxs]
        prev_reward = s.reward[prev, B_idxs]
        new_episode = s.done[prev, B_idxs]
        prev_action[new_episode] = 0
        prev_reward[new_episode] = 0
        return AgentInputs(self.extract_observation(T_idxs, B_idxs), prev_action, prev_reward)
