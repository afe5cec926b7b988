"""Ring storage of ``[T, B]`` samples that keeps every step's n-step return up to date.

Replay buffers compose this storage with a rule that picks indexes (uniform, later prioritized)
and an extraction that turns indexes into a training batch (single transitions, later sequences).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import psutil

from rlrun.utils.buffer import buffer_from_example, get_leading_dims, numpify_buffer
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

    Rows that cannot be trained on yet (see :meth:`valid_rows`): the ``n_step_return`` rows before the
    cursor, whose window or next observation is not written yet, and the cursor row itself once the
    buffer wrapped, whose previous step (prev_action, prev_reward) was just overwritten.
    """

    def __init__(
        self,
        example: Any,
        size: int,
        B: int,
        discount: float = 1,
        n_step_return: int = 1,
        share_memory: bool = False,
    ) -> None:
        for field in ("observation", "action", "reward", "done"):
            if field not in getattr(example, "_fields", ()):
                raise ValueError(
                    f"The replay example needs a field {field!r}; got {type(example).__name__} with fields "
                    f"{getattr(example, '_fields', None)}. Build it like SamplesToBuffer(observation, action, "
                    "reward, done)."
                )
        if B < 1 or n_step_return < 1:
            raise ValueError(f"B and n_step_return must be at least 1, got B={B}, n_step_return={n_step_return}.")
        self.T = math.ceil(size / B)
        self.B = B
        self.size = self.T * B
        if self.T < n_step_return + 2:
            raise ValueError(
                f"A replay of size {size} over B={B} envs holds {self.T} steps per env, too few for "
                f"{n_step_return}-step returns (needs at least {n_step_return + 2}); raise replay_size."
            )
        _check_memory(example, self.size)
        self.discount = discount
        self.n_step_return = n_step_return
        self.has_timeout = "timeout" in example._fields
        self.t = 0
        self.full = False
        self.samples = buffer_from_example(example, (self.T, B), share_memory)
        if n_step_return == 1 and not self.has_timeout:
            # With one step and no time limits the return is the reward and done_n is done.
            self.samples_return_ = self.samples.reward
            self.samples_done_n = self.samples.done
        else:
            self.samples_return_ = buffer_from_example(example.reward, (self.T, B), share_memory)
            self.samples_done_n = buffer_from_example(np.bool_(False), (self.T, B), share_memory)
        if self.has_timeout:
            self.samples_timeout_n = buffer_from_example(np.bool_(False), (self.T, B), share_memory)
            self.samples_steps_n = buffer_from_example(np.int64(0), (self.T, B), share_memory)

    def append(self, samples: Any) -> tuple[int, slice | np.ndarray]:
        """Write a ``[T, B]`` batch at the cursor (wrapping around), update the n-step returns the new
        rewards complete, and advance the cursor. Returns ``(T, idxs)``: the rows written."""
        samples = numpify_buffer(samples)
        dims = get_leading_dims(samples, n_dim=2)
        if dims is None:
            raise ValueError("The replay got samples=None; append a [T, B] batch.")
        T, B = dims
        if B != self.B:
            raise ValueError(f"The replay was built for B={self.B} envs but the samples have B={B}.")
        if T + self.n_step_return > self.T:
            raise ValueError(
                f"A batch of T={T} steps does not fit a replay of {self.T} steps per env with "
                f"n_step_return={self.n_step_return}; raise replay_size."
            )
        t = self.t
        idxs = slice(t, t + T) if t + T <= self.T else np.arange(t, t + T) % self.T
        self.samples[idxs] = samples
        self._update_returns(T)
        self.full = self.full or t + T >= self.T
        self.t = (t + T) % self.T
        return T, idxs

    def _update_returns(self, T: int) -> None:
        """Recompute the returns of every row whose window gained rewards in the last ``T`` rows written
        (before the cursor moves). Only rows with a complete window are written."""
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

    def valid_rows(self) -> tuple[int, int]:
        """``(start, count)``: rows ``(start + i) % T`` for ``i < count`` can be trained on.

        Before the first wrap these are rows ``1 .. t - n - 1`` (row 0 has no previous step); after it,
        every row but the ``n`` before the cursor and the cursor row.
        """
        n = self.n_step_return
        if self.full:
            return (self.t + 1) % self.T, self.T - n - 1
        return 1, max(0, self.t - n - 1)

    def extract_observation(self, T_idxs: np.ndarray, B_idxs: np.ndarray) -> np.ndarray:
        """Observations at ``[T_idxs, B_idxs]``; frame-based storages rebuild them from frames."""
        return self.samples.observation[T_idxs, B_idxs]


def _check_memory(example: Any, size: int) -> None:
    """Refuse a replay larger than this machine's memory, and warn above half of what is free: numpy
    reserves the arrays lazily, so an oversized replay would otherwise fail hours later, when full."""
    step_bytes = sum(np.asarray(leaf).nbytes for leaf in _leaves(example)) + 16  # + return_, done_n, ...
    need = step_bytes * size
    memory = psutil.virtual_memory()
    gib = 2**30
    advice = (
        "lower replay_size (full observations are stored per step; a frame-based replay that stores "
        "each Atari frame once is not available in rlrun yet)."
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
            stacklevel=3,
        )


def _leaves(x: Any):
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        for v in x:
            yield from _leaves(v)
    elif x is not None:
        yield x
