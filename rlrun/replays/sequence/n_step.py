"""Replays of sequences with n-step returns and stored recurrent states, built from a storage, a sampling
rule and an :class:`~rlrun.replays.rnn_state.RnnStateStore`."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from rlrun.replays.base import StorageReplayBuffer
from rlrun.replays.n_step import NStepReturnStorage
from rlrun.replays.rnn_state import RnnStateStore
from rlrun.replays.sampling import PrioritizedSampling, UniformSampling
from rlrun.replays.state import copy_into
from rlrun.utils.buffer import numpify_buffer, torchify_buffer
from rlrun.utils.collections import namedarraytuple
from rlrun.utils.misc import extract_sequences

__all__ = ["SamplesFromReplay", "SamplesFromReplayTl", "SequenceNStepReturnBuffer"]

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


class SequenceNStepReturnBuffer(StorageReplayBuffer):
    """Draws sequences of ``batch_T`` steps for recurrent agents (R2D1).

    ``example`` is one step of what is stored, as for the single-transition replays, plus
    ``prev_rnn_state`` (the state the agent's step started from, batch-first) unless
    ``rnn_state_interval`` is 0. The state is kept every ``rnn_state_interval`` rows (the replay's
    ``T`` is rounded up to a multiple of it), and sequences start only there; 1 keeps every state, 0
    none (sequences start anywhere, from a zero state).

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
    ``steps_n`` (see :class:`~rlrun.replays.non_sequence.n_step.NStepReturnBuffer`).
    """

    StorageCls: type[NStepReturnStorage] = NStepReturnStorage
    input_priorities: bool = False  # whether append_samples takes PrioritiesSamplesToBuffer

    def __init__(
        self,
        example: Any,
        size: int,
        B: int,
        rnn_state_interval: int,
        batch_T: int | None = None,
        discount: float = 1,
        n_step_return: int = 1,
        mid_batch_reset: bool = True,
        sampling: UniformSampling | PrioritizedSampling | None = None,
    ) -> None:
        if rnn_state_interval < 0:
            raise ValueError(f"rnn_state_interval must be >= 0 (0: store no state), got {rnn_state_interval}.")
        has_state = "prev_rnn_state" in getattr(example, "_fields", ())
        if rnn_state_interval > 0 and not has_state:
            raise ValueError(
                f"rnn_state_interval={rnn_state_interval} stores the agent's recurrent state, but the example has no "
                "field 'prev_rnn_state' (fields: "
                f"{getattr(example, '_fields', None)}); add it (R2D1's SamplesToBufferRnn) or use rnn_state_interval=0."
            )
        self.rnn_state_interval = rnn_state_interval
        self.batch_T = batch_T
        interval = max(1, rnn_state_interval)
        T = interval * math.ceil(math.ceil(size / B) / interval)
        self.storage = self.StorageCls(
            _without_state(example), T * B, B, discount, n_step_return, mid_batch_reset=mid_batch_reset
        )
        self.rnn_states = (
            RnnStateStore(example.prev_rnn_state, self.storage.T, B, rnn_state_interval) if rnn_state_interval else None
        )
        if batch_T is not None and batch_T + n_step_return + self.storage.off_backward > self.storage.T:
            raise ValueError(
                f"Sequences of batch_T={batch_T} do not fit a replay of {self.storage.T} steps per env; raise size."
            )
        self.sampling = self._make_sampling(interval) if sampling is None else sampling

    def _make_sampling(self, interval: int) -> UniformSampling | PrioritizedSampling:
        return UniformSampling(interval, self.batch_T or 1)

    def state_dict(self) -> dict[str, Any]:
        """The storage's and the sampling rule's state, and the stored recurrent states."""
        states = None if self.rnn_states is None else self.rnn_states.states
        return dict(super().state_dict(), rnn_states=states)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        if (self.rnn_states is None) != (state["rnn_states"] is None):
            raise ValueError("The checkpoint's replay and this one differ in storing recurrent states.")
        if self.rnn_states is not None:
            copy_into(self.rnn_states.states, state["rnn_states"], "rnn_states")

    # --- appending --------------------------------------------------------------------------------

    def append_samples(self, samples: Any) -> tuple[int, slice | np.ndarray]:
        """Store a ``[T, B]`` batch (with ``prev_rnn_state`` if states are kept), or, for replays built
        with ``input_priorities=True``, ``PrioritiesSamplesToBuffer(priorities [B], samples)``.
        Returns ``(T, idxs)``, the rows written."""
        priorities = None
        if "priorities" in getattr(samples, "_fields", ()):
            if not self.input_priorities:
                raise ValueError(
                    f"{type(self).__name__} got input priorities but takes none; use PrioritizedSequenceReplayBuffer"
                    "(..., input_priorities=True), or append the samples alone."
                )
            priorities, samples = numpify_buffer(samples.priorities), samples.samples
        t = self.storage.t
        T, idxs = self.storage.append(_without_state(samples))
        if self.rnn_states is not None:
            self.rnn_states.append(t, samples.prev_rnn_state)
        self._appended(t, T, priorities)
        return T, idxs

    def _appended(self, t: int, T: int, priorities: Any) -> None:
        """Tell the sampling rule about the rows written (and the input priorities, where taken)."""
        self.sampling.appended(self.storage, t, T)

    # --- sampling ---------------------------------------------------------------------------------

    def sample_batch(self, batch_B: int, batch_T: int | None = None) -> Any:
        """``batch_B`` sequences of ``batch_T`` steps (the buffer's ``batch_T`` if None)."""
        batch_T = self.batch_T if batch_T is None else batch_T
        if batch_T is None:
            raise ValueError("Give batch_T, to the buffer or to sample_batch: the length of the sequences.")
        if isinstance(self.sampling, UniformSampling):
            T_idxs, B_idxs = self.sampling.sample_idxs(self.storage, batch_B, batch_T)
        else:
            T_idxs, B_idxs = self.sampling.sample_idxs(self.storage, batch_B)
        return self.extract_batch(T_idxs, B_idxs, batch_T)

    def extract_batch(self, T_idxs: np.ndarray, B_idxs: np.ndarray, T: int) -> Any:
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
        observation = st.extract_observation(rows.reshape(-1), cols.reshape(-1))
        batch = SamplesFromReplay(
            all_observation=observation.reshape(T_all, len(T_idxs), *observation.shape[1:]),
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
        return torchify_buffer(batch)


def _without_state(samples: Any) -> Any:
    """``samples`` without its ``prev_rnn_state`` field (what the step storage keeps)."""
    fields = getattr(samples, "_fields", ())
    if "prev_rnn_state" not in fields:
        return samples
    kept = tuple(f for f in fields if f != "prev_rnn_state")
    return _stateless_cls(kept)(*(getattr(samples, f) for f in kept))


@functools.cache
def _stateless_cls(fields: tuple[str, ...]) -> Any:
    return namedarraytuple("SamplesToBuffer", fields)
