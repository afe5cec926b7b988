"""Replay storage for stacked-frame observations that keeps each frame once.

An Atari observation is ``[k, H, W]``: the last ``k`` frames, oldest first. Consecutive observations
of an episode share ``k - 1`` frames, so storing whole observations repeats every frame ``k`` times.
:class:`NStepFrameStorage` stores only each step's newest frame and rebuilds the stacks when a batch
is drawn (what rlpyt's ``FrameBufferMixin`` did for its frame buffers).
"""

from __future__ import annotations

import numpy as np

from rlrun.replays.storage import NStepReturnStorage
from rlrun.utils.buffer import build_array
from rlrun.utils.collections import NamedArrayTuple, namedarraytuple, optional_field

__all__ = ["NStepFrameStorage"]


class NStepFrameStorage(NStepReturnStorage):
    """:class:`~rlrun.replays.storage.NStepReturnStorage` whose observations ``[k, *frame]`` are kept as one
    frame per step.

    - ``samples_frames[k - 1 + t, b]`` is the newest frame of the observation at row ``t``; the first
      ``k - 1`` entries hold the older frames of the observation at row 0 (copied from it whenever row 0
      is written), so the stack of row ``t`` is ``samples_frames[t : t + k, b]`` even across the ring's
      end.
    - ``samples_history[t, b]`` counts the frames before row ``t``'s that belong to its episode (at most
      ``k - 1``); the older ones are zeroed when the stack is rebuilt. This reproduces envs whose reset
      fills the stack with zeros and puts the first frame last, as
      :class:`~rlrun.envs.atari.atari_env.AtariEnv` does (also after a lost life with
      ``episodic_lives``). It is computed when a batch is appended, from ``done``: no sampled stack
      ever shows a frame of another episode.
    - Once the ring wrapped, the rows from the cursor to ``k - 2`` after it have older frames that were
      just overwritten: ``off_forward = max(1, k - 1)`` rows are invalid there.

    Every append checks that the stored frames rebuild exactly the observations given (skipping
    wait-reset filler), so an env whose stacks do not follow this convention (newest frame last, one
    new frame per step, zeros before an episode's first frame) is refused at its first batch instead of
    training on wrong observations; use a replay that stores whole observations for those.
    """

    def __init__(
        self,
        example: NamedArrayTuple,
        size: int,
        B: int,
        discount: float = 1,
        n_step_return: int = 1,
        share_memory: bool = False,
        mid_batch_reset: bool = True,
    ) -> None:
        observation = np.asarray(optional_field(example, "observation"))
        if observation.ndim < 2:
            raise ValueError(
                "A frame replay needs observations that stack frames along their first dim ([k, H, W]); "
                f"got an example observation of shape {observation.shape}. Use UniformReplayBuffer (or "
                "PrioritizedReplayBuffer), which store whole observations."
            )
        self.n_frames: int = observation.shape[0]
        self._frame_example = observation[0]
        super().__init__(example, size, B, discount, n_step_return, share_memory, mid_batch_reset)
        k = self.n_frames
        # Frame of row t at k - 1 + t; the k - 1 before row 0's come first.
        self.samples_frames = build_array(self._frame_example, (self.T + k - 1, B), share_memory)
        # rlpyt's name: the newest frame of each row, [T, B, *frame].
        self.samples_new_frames = self.samples_frames[k - 1 :]
        self.samples_history = build_array(np.zeros((), np.uint8), (self.T, B), share_memory)
        self._stack_offsets = np.arange(k)

    state_arrays = (*NStepReturnStorage.state_arrays, "samples_frames", "samples_history")

    def _off_forward(self, example: NamedArrayTuple) -> int:
        return max(1, self.n_frames - 1)

    def _stored_example(self, example: NamedArrayTuple) -> NamedArrayTuple:
        return _drop_observation(example)

    def bytes_per_step(self, example: NamedArrayTuple) -> int:
        whole = super().bytes_per_step(example)
        result: int = whole - np.asarray(example.observation).nbytes + self._frame_example.nbytes + 1  # + history
        return result

    def _write(self, idxs: slice | np.ndarray, samples: NamedArrayTuple) -> None:
        observation = np.asarray(samples.observation)
        super()._write(idxs, _drop_observation(samples))
        k, t, T = self.n_frames, self.t, len(observation)
        rows = np.arange(t, t + T) % self.T
        self.samples_frames[rows + k - 1] = observation[:, :, -1]
        if k > 1 and (first := (self.T - t) % self.T) < T:  # row 0 written: keep its older frames
            self.samples_frames[: k - 1] = np.swapaxes(observation[first, :, : k - 1], 0, 1)
        self._write_history(rows, np.asarray(samples.done, dtype=bool))
        self._check_rebuilt(rows, observation)

    def _write_history(self, rows: np.ndarray, done: np.ndarray) -> None:
        """Episode frames before each new row's own, from ``done`` of the row before (rows already written)."""
        cap = self.n_frames - 1
        if self.t == 0 and not self.full:
            # The very first row: its older frames (in the prefix) are what the env showed, whatever they are.
            history = np.full(self.B, cap, np.int64)
        else:
            prev = self.t - 1  # -1 is the last row: the step before row 0 once wrapped
            history = np.where(
                self.samples.done[prev], 0, np.minimum(self.samples_history[prev].astype(np.int64) + 1, cap)
            )
        self.samples_history[rows[0]] = history
        for i in range(1, len(rows)):
            history = np.where(done[i - 1], 0, np.minimum(history + 1, cap))
            self.samples_history[rows[i]] = history

    def _check_rebuilt(self, rows: np.ndarray, observation: np.ndarray) -> None:
        T_idxs = np.repeat(rows, self.B)
        B_idxs = np.tile(np.arange(self.B), len(rows))
        given = observation.reshape(len(rows) * self.B, *observation.shape[2:])
        if self.samples_valid is not None:  # wait-reset filler repeats the last observation: not stored
            real = self.samples_valid[T_idxs, B_idxs]
            T_idxs, B_idxs, given = T_idxs[real], B_idxs[real], given[real]
        rebuilt = self.extract_observation(T_idxs, B_idxs)
        if np.array_equal(rebuilt, given):
            return
        i = int(np.flatnonzero((rebuilt != given).reshape(len(given), -1).any(axis=1))[0])
        bad = [f for f in range(self.n_frames) if not np.array_equal(rebuilt[i, f], given[i, f])]
        starts = int(self.samples_history[T_idxs[i], B_idxs[i]]) < self.n_frames - 1
        raise ValueError(
            f"The frame replay cannot rebuild the observation of env {B_idxs[i]} at replay row {T_idxs[i]}: "
            f"frames {bad} (0 = oldest) differ from the stacked frames it stored"
            + (" (zeros before the episode's first frame)" if starts else "")
            + ". A frame replay needs observations [k, H, W] whose newest frame is last, that gain one new frame "
            "per step, and that start each episode with zeros before the first frame (as AtariEnv does). Store "
            "whole observations instead: DQN(ReplayBufferCls=UniformReplayBuffer) from "
            "rlrun.replays.non_sequence.uniform (or PrioritizedReplayBuffer from ...prioritized), or "
            "make_replay_buffer(..., frames=False)."
        )

    def extract_observation(self, T_idxs: np.ndarray, B_idxs: np.ndarray) -> np.ndarray:
        """The ``[len(T_idxs), k, *frame]`` stacks at ``[T_idxs, B_idxs]``, with zeros for the frames from
        before each row's episode."""
        T_idxs = np.asarray(T_idxs)
        B_idxs = np.asarray(B_idxs)
        k = self.n_frames
        observation: np.ndarray = self.samples_frames[T_idxs[:, None] + self._stack_offsets, B_idxs[:, None]]
        if k > 1:
            n_zero = (k - 1) - self.samples_history[T_idxs, B_idxs].astype(np.int64)
            observation[self._stack_offsets[None, :] < n_zero[:, None]] = 0
        return observation


def _drop_observation(samples: NamedArrayTuple) -> NamedArrayTuple:
    """``samples`` (a namedtuple) without its ``observation`` field, as a namedarraytuple."""
    fields = [f for f in samples._fields if f != "observation"]
    result: NamedArrayTuple = namedarraytuple("BufferSamples", fields)(*(getattr(samples, f) for f in fields))
    return result
