"""Ring storage of ``[T, B]`` samples that keeps every step's n-step return up to date.

Replay buffers compose this storage with a rule that picks indexes (uniform or prioritized, see
:mod:`rlrun.replays.sampling`) and an extraction that turns indexes into a training batch (single
transitions in :mod:`rlrun.replays.transitions`, sequences in :mod:`rlrun.replays.sequences`);
:func:`rlrun.replays.factory.make_replay_buffer` puts them together.
:class:`rlrun.replays.frame_storage.NStepFrameStorage` changes only how observations are kept.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import psutil

from rlrun.replays.state import copy_into
from rlrun.utils.buffer import buffer_from_example, build_array, get_leading_dims, numpify_buffer
from rlrun.utils.collections import NamedArrayTuple, fields_of
from rlrun.utils.returns import discount_return_n_step, discount_return_n_step_tl

__all__ = ["NStepReturnStorage"]


class NStepReturnStorage:
    """The last ``size`` steps of ``B`` envs in ``[T, B]`` numpy arrays, ``T = ceil(size / B)``.

    ``example`` is one step of what gets stored (a namedtuple with at least ``observation``,
    ``action``, ``reward``, ``done``; no leading dims). The cursor ``t`` is the next row written.

    For each row it keeps ``samples_return_`` (the discounted sum of the rewards of its n-step
    window) and ``samples_done_n`` (no bootstrap after the window). If the example has a
    ``timeout`` field, episodes cut by a time limit are not terminal: ``samples_done_n`` is True only
    for real terminals, ``samples_timeout_n`` marks windows cut by a time limit and
    ``samples_steps_n`` holds how many rewards each window summed (see
    :func:`rlrun.utils.returns.discount_return_n_step_tl`). Without ``timeout`` every ``done`` ends the
    window and counts as terminal, as in rlpyt.

    Rows that cannot be trained on (see :meth:`valid_rows`): the ``off_backward = n_step_return``
    rows before the cursor, whose window or next observation is not written yet, and from the cursor
    on ``off_forward`` rows (1 here: the cursor row, whose previous step was just overwritten).

    ``mid_batch_reset=False`` is for samplers that reset a done env only at the next batch
    (wait-reset collectors): the steps after an env's first ``done`` in an appended batch are filler,
    marked False in ``samples_valid`` and never trained on. Each append must then be one whole sampler
    batch. With the default ``True`` every step is a real one and ``samples_valid`` is None.
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
        for field in ("observation", "action", "reward", "done"):
            if field not in fields_of(example):
                raise ValueError(
                    f"The replay example needs a field {field!r}; got {type(example).__name__} with fields "
                    f"{fields_of(example)}. Build it like SamplesToBuffer(observation, action, "
                    "reward, done)."
                )
        if B < 1 or n_step_return < 1:
            raise ValueError(f"B and n_step_return must be at least 1, got B={B}, n_step_return={n_step_return}.")
        self.T = math.ceil(size / B)
        self.B = B
        self.size = self.T * B
        self.discount = discount
        self.n_step_return = n_step_return
        self.off_backward = n_step_return
        self.off_forward = self._off_forward(example)
        self.mid_batch_reset = mid_batch_reset
        min_T = n_step_return + self.off_forward + 1
        if self.T < min_T:
            raise ValueError(
                f"A replay of size {size} over B={B} envs holds {self.T} steps per env, too few for "
                f"{n_step_return}-step returns (needs at least {min_T}); raise replay_size."
            )
        self.has_timeout = "timeout" in example._fields
        _check_memory(self.bytes_per_step(example), self.size)
        # The cursor and the fill flag live in an array, shared with the buffer's other processes
        # when the storage is (asynchronous runs): a buffer is arrays plus indices.
        self._cursor = build_array(np.zeros((), np.int64), 2, share_memory)
        self.samples: NamedArrayTuple = buffer_from_example(self._stored_example(example), (self.T, B), share_memory)
        if n_step_return == 1 and not self.has_timeout:
            # With one step and no time limits the return is the reward and done_n is done.
            self.samples_return_: np.ndarray = self.samples.reward
            self.samples_done_n: np.ndarray = self.samples.done
        else:
            self.samples_return_ = buffer_from_example(example.reward, (self.T, B), share_memory)
            self.samples_done_n = buffer_from_example(np.bool_(False), (self.T, B), share_memory)
        if self.has_timeout:
            self.samples_timeout_n: np.ndarray = buffer_from_example(np.bool_(False), (self.T, B), share_memory)
            self.samples_steps_n = buffer_from_example(np.int64(0), (self.T, B), share_memory)
        self.samples_valid: np.ndarray | None = None
        if not mid_batch_reset:
            self.samples_valid = buffer_from_example(np.bool_(False), (self.T, B), share_memory)

    @property
    def t(self) -> int:
        """The next row written."""
        return int(self._cursor[0])

    @t.setter
    def t(self, value: int) -> None:
        self._cursor[0] = value

    @property
    def full(self) -> bool:
        """True once the ring has wrapped around."""
        return bool(self._cursor[1])

    @full.setter
    def full(self, value: bool) -> None:
        self._cursor[1] = bool(value)

    # --- what is stored per step (subclasses that store observations differently override these) ---

    def _off_forward(self, example: NamedArrayTuple) -> int:
        """Rows from the cursor on that are invalid once the ring wrapped."""
        return 1

    def _stored_example(self, example: NamedArrayTuple) -> NamedArrayTuple:
        """The part of a step kept in ``samples``."""
        return example

    def bytes_per_step(self, example: NamedArrayTuple) -> int:
        """Bytes this storage allocates per stored step for rows like ``example``."""
        n = sum(np.asarray(leaf).nbytes for leaf in _leaves(example))
        if self.n_step_return > 1 or self.has_timeout:
            n += np.asarray(example.reward).nbytes + 1  # samples_return_, samples_done_n
        if self.has_timeout:
            n += 1 + 8  # samples_timeout_n, samples_steps_n
        if not self.mid_batch_reset:
            n += 1  # samples_valid
        return n

    def _write(self, idxs: slice | np.ndarray, samples: NamedArrayTuple) -> None:
        """Write a numpy ``[T, B]`` batch at rows ``idxs`` (the cursor has not moved yet)."""
        self.samples[idxs] = samples

    # --- appending --------------------------------------------------------------------------------

    def append(self, samples: NamedArrayTuple) -> tuple[int, slice | np.ndarray]:
        """Write a ``[T, B]`` batch at the cursor (wrapping around), update the n-step returns the new
        rewards complete, and advance the cursor. Returns ``(T, idxs)``: the rows written."""
        samples = numpify_buffer(samples)
        dims = get_leading_dims(samples, n_dim=2)
        if dims is None:
            raise ValueError("The replay got samples=None; append a [T, B] batch.")
        T, B = dims
        if B != self.B:
            raise ValueError(f"The replay was built for B={self.B} envs but the samples have B={B}.")
        if T + self.n_step_return + self.off_forward - 1 > self.T:
            raise ValueError(
                f"A batch of T={T} steps does not fit a replay of {self.T} steps per env with "
                f"n_step_return={self.n_step_return}; raise replay_size."
            )
        t = self.t
        idxs = slice(t, t + T) if t + T <= self.T else np.arange(t, t + T) % self.T
        if self.samples_valid is not None:
            self.samples_valid[idxs] = _until_first_done(np.asarray(samples.done, dtype=bool))
        self._write(idxs, samples)
        self.compute_returns(T)
        self.full = self.full or t + T >= self.T
        self.t = (t + T) % self.T
        return T, idxs

    def compute_returns(self, T: int) -> None:
        """Recompute the returns of every row whose window gained rewards in the last ``T`` rows written
        (called before the cursor moves, as :meth:`append` does). Only rows with a complete window are
        written."""
        n = self.n_step_return
        if n == 1 and not self.has_timeout:
            return
        first = self.t - (n - 1)
        if not self.full:
            first = max(0, first)  # Nothing was ever written before row 0.
        rows = np.arange(first, self.t + T) % self.T
        if len(rows) < n:
            return  # No window is complete yet.
        dest = rows[: len(rows) - (n - 1)]
        s = self.samples
        reward, done = s.reward[rows], s.done[rows]
        if self.has_timeout:
            return_, done_n, timeout_n, steps_n = discount_return_n_step_tl(
                reward, done, s.timeout[rows], n, self.discount
            )
            self.samples_timeout_n[dest] = timeout_n
            self.samples_steps_n[dest] = steps_n
        else:
            return_, done_n = discount_return_n_step(reward, done, n, self.discount)
        self.samples_return_[dest] = return_
        self.samples_done_n[dest] = done_n

    # --- what can be sampled ----------------------------------------------------------------------

    def valid_rows(self) -> tuple[int, int]:
        """``(start, count)``: rows ``(start + i) % T`` for ``i < count`` can be trained on (of envs whose
        step there is not filler, see ``samples_valid``).

        Before the first wrap these are rows ``1 .. t - n - 1`` (row 0 has no previous step); after it,
        every row but the ``off_backward`` before the cursor and the ``off_forward`` from it on.
        """
        if self.full:
            return (self.t + self.off_forward) % self.T, self.T - self.off_backward - self.off_forward
        return 1, max(0, self.t - self.off_backward - 1)

    def is_valid(self, T_idxs: np.ndarray, B_idxs: np.ndarray, length: int = 1) -> np.ndarray:
        """Bool array (broadcast shape of the indexes): may the step at ``[T_idxs, B_idxs]`` be sampled now;
        with ``length > 1``, may the sequence of ``length`` steps starting there (all rows valid, the
        first not filler)."""
        start, count = self.valid_rows()
        valid = (np.asarray(T_idxs) - start) % self.T + (length - 1) < count
        if self.samples_valid is not None:
            valid = valid & self.samples_valid[T_idxs, B_idxs]
        return np.broadcast_to(valid, np.broadcast_shapes(np.shape(T_idxs), np.shape(B_idxs)))

    def extract_observation(self, T_idxs: np.ndarray, B_idxs: np.ndarray) -> np.ndarray:
        """Observations at ``[T_idxs, B_idxs]``; frame-based storages rebuild them from frames."""
        result: np.ndarray = self.samples.observation[T_idxs, B_idxs]
        return result

    # --- checkpoints ------------------------------------------------------------------------------

    # The arrays a checkpoint keeps (those that exist); subclasses storing more add their names.
    state_arrays: tuple[str, ...] = (
        "samples",
        "samples_return_",
        "samples_done_n",
        "samples_timeout_n",
        "samples_steps_n",
        "samples_valid",
    )

    def stored_state_arrays(self) -> list[str]:
        """The names in :attr:`state_arrays` this storage holds: the time-limit arrays only with
        ``has_timeout``, ``samples_valid`` only under a wait-reset sampler."""
        absent = set() if self.has_timeout else {"samples_timeout_n", "samples_steps_n"}
        if self.samples_valid is None:
            absent.add("samples_valid")
        return [name for name in self.state_arrays if name not in absent]

    def state_dict(self) -> dict[str, Any]:
        """The cursor, the fill flag and every stored array (references, for saving at once)."""
        arrays = {name: getattr(self, name) for name in self.stored_state_arrays()}
        return dict(t=self.t, full=self.full, arrays=arrays)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Refill this storage (built with the same settings) from :meth:`state_dict`'s output."""
        arrays = state["arrays"]
        mine = self.stored_state_arrays()
        if sorted(arrays) != sorted(mine):
            raise ValueError(
                f"The checkpoint's replay stores {sorted(arrays)}, this one {sorted(mine)}: it was saved by a run "
                "with other replay settings (n_step_return, time limits, wait-reset sampler)."
            )
        for name in mine:
            copy_into(getattr(self, name), arrays[name], name)
        self.t = int(state["t"])
        self.full = bool(state["full"])


def _until_first_done(done: np.ndarray) -> np.ndarray:
    """``[T, B]`` bool: True up to and including each column's first ``done`` (the real steps of a
    wait-reset batch), False after it (filler)."""
    valid = np.ones(done.shape, dtype=bool)
    valid[1:] = ~np.logical_or.accumulate(done[:-1], axis=0)
    return valid


def _check_memory(step_bytes: int, size: int) -> None:
    """Refuse a replay larger than this machine's memory, and warn above half of what is free: numpy
    reserves the arrays lazily, so an oversized replay would otherwise fail hours later, when full."""
    need = step_bytes * size
    memory = psutil.virtual_memory()
    gib = 2**30
    advice = (
        "lower replay_size. For stacks of image frames ([k, H, W] uint8, e.g. Atari), a frame replay "
        "(make_replay_buffer(..., frames=True) from rlrun.replays.factory; DQN's default for such "
        "observations) stores each frame once: about 8.3 kB a step for Atari's 104x80 "
        "frames instead of 33 kB for whole 4-frame stacks."
    )
    if need > memory.total:
        raise ValueError(
            f"A replay of {size} steps of {step_bytes} bytes needs {need / gib:.1f} GiB, more than this "
            f"machine's {memory.total / gib:.1f} GiB; {advice}"
        )
    if need > memory.available / 2:
        warnings.warn(
            f"The replay will use up to {need / gib:.1f} GiB as it fills ({memory.available / gib:.1f} GiB "
            f"free now); if the run is killed for memory, {advice}",
            stacklevel=4,
        )


def _leaves(x: Any) -> Iterator[np.ndarray]:
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        for v in x:
            yield from _leaves(v)
    elif x is not None:
        yield x
