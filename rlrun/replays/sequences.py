"""Replays of sequences with n-step returns for recurrent agents: a storage, a sampling rule, the stored
recurrent states (:class:`~rlrun.replays.rnn_state.RnnStateStore`), and what a batch is."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from rlrun.replays.base import BaseReplayBuffer
from rlrun.replays.composed import ComposedReplay, ReplayParts
from rlrun.replays.rnn_state import RnnStateStore
from rlrun.replays.sampling import PrioritizedSampling, UniformSampling
from rlrun.replays.state import copy_into
from rlrun.utils.buffer import torchify_buffer
from rlrun.utils.collections import NamedArrayTuple, fields_of, namedarraytuple
from rlrun.utils.misc import extract_sequences

__all__ = [
    "SamplesFromReplay",
    "SamplesFromReplayTl",
    "SamplesFromReplayPri",
    "SamplesFromReplayTlPri",
    "SequenceReplay",
    "without_rnn_state",
]

SamplesFromReplay = namedarraytuple(
    "SamplesFromReplay",
    [
        "all_observation",
        "all_action",
        "all_reward",
        "return_",
        "done",
        "done_n",
        "init_rnn_state",
        "all_reset",
        "valid",
    ],
)
SamplesFromReplayTl = namedarraytuple(
    "SamplesFromReplayTl", SamplesFromReplay._fields + ("timeout", "timeout_n", "steps_n")
)
SamplesFromReplayPri = namedarraytuple("SamplesFromReplayPri", SamplesFromReplay._fields + ("is_weights",))
SamplesFromReplayTlPri = namedarraytuple("SamplesFromReplayTlPri", SamplesFromReplayTl._fields + ("is_weights",))


class SequenceReplay(ComposedReplay, BaseReplayBuffer):
    """Draws sequences of ``batch_T`` steps for recurrent agents (R2D1); build one with
    :func:`rlrun.replays.factory.make_replay_buffer` and ``sequence=Sequences(...)``.

    The rows stored are those of the single-transition replays plus ``prev_rnn_state`` (the state the
    agent's step started from, batch-first) when states are kept. The state is kept every
    ``rnn_state_interval`` rows (the storage's ``T`` is a multiple of it), and sequences start only
    there; 1 keeps every state, 0 none (sequences start anywhere, from a zero state).

    ``sample_batch(batch_B)`` returns :data:`SamplesFromReplay` of torch tensors, a sequence per column,
    starting at row ``t``:

    - ``all_observation``, ``all_action``, ``all_reward``: ``[batch_T + n, batch_B]``. Observations of
      rows ``t .. t + batch_T + n - 1`` (the extra ``n`` for the n-step targets); actions and rewards
      start one row earlier, so ``all_action[i]`` and ``all_reward[i]`` are the previous action and
      reward of step ``i`` and ``all_action[i + 1]`` is its action.
    - ``all_reset`` ``[batch_T + n]``: step ``i`` starts an episode (the previous step was done, or
      was wait-reset filler). Its previous action and reward are not its episode's, and the recurrent
      state must start from zeros there.
    - ``return_``, ``done``, ``done_n``, ``valid`` (not wait-reset filler): ``[batch_T]``.
    - ``init_rnn_state``: the stored state at ``t``, ``[batch_B, N, H]`` (or None without states).

    With ``timeout`` stored, :data:`SamplesFromReplayTl` adds ``timeout``, ``timeout_n`` and
    ``steps_n`` (see :class:`~rlrun.replays.transitions.TransitionReplay`). With a prioritized rule
    (one priority per possible start, ``batch_T`` fixed) the batch adds ``is_weights`` ``[batch_B]``.
    """

    def __init__(self, parts: ReplayParts) -> None:
        self._adopt(parts)
        self.rnn_states: RnnStateStore | None = parts.rnn_states
        self.batch_T = parts.batch_T
        self.rnn_state_interval = 0 if parts.rnn_states is None else parts.rnn_states.interval
        if isinstance(self.sampling, PrioritizedSampling) and self.batch_T is None:
            raise ValueError("A prioritized sequence replay needs a fixed batch_T (its valid starts depend on it).")

    def set_batch_T(self, batch_T: int) -> None:
        """The length of the sequences of the next batches (fixed for prioritized replays)."""
        if isinstance(self.sampling, PrioritizedSampling) and batch_T != self.batch_T:
            raise ValueError(f"A prioritized sequence replay draws sequences of its fixed batch_T={self.batch_T}.")
        self.batch_T = batch_T

    @property
    def samples_prev_rnn_state(self) -> NamedArrayTuple | np.ndarray:
        """rlpyt's name: the stored states, ``[T // rnn_state_interval, B, ...]``."""
        if self.rnn_states is None:
            raise AttributeError("samples_prev_rnn_state: this replay keeps no recurrent states.")
        result: NamedArrayTuple | np.ndarray = self.rnn_states.states
        return result

    @property
    def rnn_T(self) -> int:
        """rlpyt's name: the number of stored states per env."""
        return self.storage.T // max(1, self.rnn_state_interval)

    def _state(self) -> dict[str, Any]:
        states = None if self.rnn_states is None else self.rnn_states.states
        return dict(super()._state(), rnn_states=states)

    def _load_state(self, state: dict[str, Any]) -> None:
        super()._load_state(state)
        if (self.rnn_states is None) != (state["rnn_states"] is None):
            raise ValueError("The checkpoint's replay and this one differ in storing recurrent states.")
        if self.rnn_states is not None:
            copy_into(self.rnn_states.states, state["rnn_states"], "rnn_states")

    def _append(self, samples: NamedArrayTuple, priorities: np.ndarray | None) -> tuple[int, slice | np.ndarray]:
        t = self.storage.t
        T, idxs = self.storage.append(without_rnn_state(samples))
        if self.rnn_states is not None:
            self.rnn_states.append(t, samples.prev_rnn_state)
        self.sampling.appended(self.storage, t, T, priorities)
        return T, idxs

    # --- sampling ---------------------------------------------------------------------------------

    def _draw(self, batch_B: int, batch_T: int | None) -> NamedArrayTuple:
        """``batch_B`` sequences of ``batch_T`` steps (the buffer's ``batch_T`` if None)."""
        batch_T = self._batch_T(batch_T)
        batch = self.extract_batch(*self.sample_idxs(batch_B, batch_T), batch_T)
        if isinstance(self.sampling, PrioritizedSampling):
            Cls = SamplesFromReplayTlPri if self.storage.has_timeout else SamplesFromReplayPri
            batch = Cls(*batch, is_weights=self.is_weights())
        return batch

    def _batch_T(self, batch_T: int | None) -> int:
        if batch_T is None:
            if self.batch_T is None:
                raise ValueError("Give batch_T, to the buffer or to sample_batch: the length of the sequences.")
            return self.batch_T
        if isinstance(self.sampling, PrioritizedSampling) and batch_T != self.batch_T:
            raise ValueError(f"A prioritized sequence replay draws sequences of its fixed batch_T={self.batch_T}.")
        return batch_T

    def sample_idxs(self, batch_B: int, batch_T: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(T_idxs, B_idxs)``, each ``[batch_B]``: starts of valid sequences of ``batch_T`` steps (the
        buffer's if None), on rows where the recurrent state was kept."""
        batch_T = self._batch_T(batch_T)
        if isinstance(self.sampling, UniformSampling):
            return self.sampling.sample_idxs(self.storage, batch_B, batch_T)
        return self.sampling.sample_idxs(self.storage, batch_B)

    def extract_observation(self, T_idxs: np.ndarray, B_idxs: np.ndarray, T: int) -> np.ndarray:
        """The observations ``[T, len(T_idxs), ...]`` of the ``T`` steps from each ``[T_idxs, B_idxs]``
        (frame stacks rebuilt for every step)."""
        rows = (np.asarray(T_idxs)[None, :] + np.arange(T)[:, None]) % self.storage.T
        cols = np.broadcast_to(np.asarray(B_idxs)[None, :], rows.shape)
        observation = self.storage.extract_observation(rows.reshape(-1), cols.reshape(-1))
        return observation.reshape(T, len(T_idxs), *observation.shape[1:])

    def extract_batch(self, T_idxs: np.ndarray, B_idxs: np.ndarray, T: int) -> NamedArrayTuple:
        """The sequences of ``T`` steps starting at ``[T_idxs, B_idxs]``, as torch tensors."""
        st = self.storage
        s = st.samples
        n = st.n_step_return
        T_all = T + n
        rows = (np.asarray(T_idxs)[None, :] + np.arange(T_all)[:, None]) % st.T  # [T + n, batch_B]
        cols = np.broadcast_to(np.asarray(B_idxs)[None, :], rows.shape)
        prev_rows = rows - 1  # -1 is the last row: the previous step once the ring wrapped
        reset = s.done[prev_rows, cols].astype(bool)
        if st.samples_valid is not None:
            reset |= ~st.samples_valid[prev_rows, cols]
            valid = st.samples_valid[rows[:T], cols[:T]]
        else:
            valid = np.ones((T, len(T_idxs)), dtype=bool)
        batch = SamplesFromReplay(
            all_observation=self.extract_observation(T_idxs, B_idxs, T_all),
            all_action=extract_sequences(s.action, T_idxs - 1, B_idxs, T_all),
            all_reward=extract_sequences(s.reward, T_idxs - 1, B_idxs, T_all),
            return_=extract_sequences(st.samples_return_, T_idxs, B_idxs, T),
            done=extract_sequences(s.done, T_idxs, B_idxs, T),
            done_n=extract_sequences(st.samples_done_n, T_idxs, B_idxs, T),
            init_rnn_state=None if self.rnn_states is None else self.rnn_states.extract(T_idxs, B_idxs),
            all_reset=reset,
            valid=valid,
        )
        if st.has_timeout:
            batch = SamplesFromReplayTl(
                *batch,
                timeout=extract_sequences(s.timeout, T_idxs, B_idxs, T),
                timeout_n=extract_sequences(st.samples_timeout_n, T_idxs, B_idxs, T),
                steps_n=extract_sequences(st.samples_steps_n, T_idxs, B_idxs, T),
            )
        result: NamedArrayTuple = torchify_buffer(batch)
        return result


def without_rnn_state(samples: NamedArrayTuple) -> NamedArrayTuple:
    """``samples`` without its ``prev_rnn_state`` field (what the step storage keeps)."""
    fields = fields_of(samples)
    if "prev_rnn_state" not in fields:
        return samples
    kept = tuple(f for f in fields if f != "prev_rnn_state")
    result: NamedArrayTuple = _stateless_cls(kept)(*(getattr(samples, f) for f in kept))
    return result


@functools.cache
def _stateless_cls(fields: tuple[str, ...]) -> Any:
    return namedarraytuple("SamplesToBuffer", fields)
