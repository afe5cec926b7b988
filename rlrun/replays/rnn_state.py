"""Recurrent states kept beside a replay, one every ``interval`` rows, for sequences to start from."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from rlrun.utils.buffer import buffer_from_example, numpify_buffer
from rlrun.utils.collections import NamedArrayTuple

__all__ = ["RnnStateStore"]


class RnnStateStore:
    """The agent's recurrent state at rows ``0, interval, 2 * interval, ...`` of a ``[T, B]`` replay.

    ``example`` is one env's state as the agent records it in ``agent_info.prev_rnn_state``: the state
    a step started from, batch-first (``[N, H]`` per env, or a namedtuple of them, e.g. ``RnnState(h,
    c)``). Keeping one state every ``interval`` rows instead of every row divides its memory by
    ``interval``; sequences can then start only at those rows. ``T`` must be a multiple of ``interval``.
    """

    def __init__(self, example: NamedArrayTuple, T: int, B: int, interval: int, share_memory: bool = False) -> None:
        if interval < 1 or T % interval:
            raise ValueError(f"The replay's T={T} must be a multiple of the RNN state interval {interval}.")
        self.interval = interval
        self.n_slots = T // interval
        self.states = buffer_from_example(example, (self.n_slots, B), share_memory)

    def bytes_per_slot(self) -> int:
        return sum(leaf[0].nbytes for leaf in _leaves(self.states))

    def append(self, t: int, prev_rnn_state: NamedArrayTuple | torch.Tensor) -> None:
        """Keep the states of the rows written from row ``t`` (``prev_rnn_state`` is ``[T, B, ...]``)
        that fall on the interval."""
        prev_rnn_state = numpify_buffer(prev_rnn_state)
        T = len(_first_leaf(prev_rnn_state))
        offsets = np.arange((-t) % self.interval, T, self.interval)  # rows of the batch on the interval
        if offsets.size:
            slots = ((t + offsets) // self.interval) % self.n_slots
            self.states[slots] = prev_rnn_state[offsets]

    def extract(self, T_idxs: np.ndarray, B_idxs: np.ndarray) -> NamedArrayTuple | np.ndarray:
        """The states ``[len(T_idxs), ...]`` at rows ``T_idxs`` (multiples of the interval)."""
        T_idxs = np.asarray(T_idxs)
        if np.any(T_idxs % self.interval):
            raise ValueError(
                f"Sequences must start at rows where the RNN state was stored (multiples of {self.interval}); "
                f"got rows {T_idxs[T_idxs % self.interval != 0][:5]}."
            )
        result: NamedArrayTuple | np.ndarray = self.states[T_idxs // self.interval, B_idxs]
        return result


def _leaves(x: Any) -> Iterator[np.ndarray]:
    if isinstance(x, tuple):
        for v in x:
            yield from _leaves(v)
    elif x is not None:
        yield x


def _first_leaf(x: Any) -> Any:
    return next(_leaves(x))
