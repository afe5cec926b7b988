"""Replays shared between processes: the copiers of an asynchronous run append, the optimiser draws.

An asynchronous replay is its synchronous self built in shared memory (the storage's arrays, its
cursor, and a prioritized rule's priorities, sum tree and running maximum), plus an
:class:`~rlrun.utils.synchronize.RWLock`: appends and priority updates hold the write side, draws
the read side. A draw copies what it returns (fancy indexing) before it lets go, so a batch never
mixes rows from before and after an append. The lock prefers the writer, so the copiers keep up
however fast the optimiser draws. rlrun's replays get both from
:func:`~rlrun.replays.factory.make_replay_buffer` (``async_=True``) and the ``Async...`` names.

Build the buffer before the processes that use it start; they receive it by fork, or in their
arguments under spawn and forkserver.
"""

from __future__ import annotations

import copy
from typing import Any, Protocol, cast

import numpy as np
import torch

from rlrun.utils.collections import NamedArrayTuple
from rlrun.utils.synchronize import DEFAULT_LOCK_TIMEOUT_S, RWLock

__all__ = ["AsyncReplayBufferMixin"]


class _LockedReplay(Protocol):
    """What the mixin wraps: the methods of the replay class after it in the MRO."""

    def append_samples(self, samples: NamedArrayTuple) -> tuple[int, slice | np.ndarray] | None: ...
    def sample_batch(self, batch_B: int, *batch_T: int) -> NamedArrayTuple: ...
    def update_batch_priorities(self, priorities: torch.Tensor | np.ndarray) -> None: ...
    def state_dict(self) -> dict[str, Any]: ...
    def load_state_dict(self, state: dict[str, Any]) -> None: ...


class AsyncReplayBufferMixin:
    """For a replay of your own, as in rlpyt: ``class AsyncMine(AsyncReplayBufferMixin, Mine)`` takes the
    lock around ``Mine``'s methods and sets ``async_ = True`` (build the arrays in shared memory when it
    is). ``lock_timeout`` (seconds) bounds every wait for the lock; a longer wait raises
    :class:`~rlrun.utils.synchronize.LockTimeoutError` (a process died holding it, or is stuck).
    """

    async_ = True

    def __init__(self, *args: Any, lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S, **kwargs: Any) -> None:
        self.rw_lock = RWLock(timeout=lock_timeout)
        super().__init__(*args, **kwargs)

    def _locked(self) -> _LockedReplay:
        """The replay this mixin wraps (the next class in the MRO). The mixin has no base of its own, so
        that it goes in front of any replay class; the cast tells the type checker what it wraps."""
        return cast(_LockedReplay, super())

    def append_samples(self, samples: NamedArrayTuple) -> tuple[int, slice | np.ndarray] | None:
        with self.rw_lock.write_lock:
            return self._locked().append_samples(samples)

    def sample_batch(self, batch_B: int, batch_T: int | None = None) -> NamedArrayTuple:
        with self.rw_lock.read_lock:
            if batch_T is None:  # a transition replay's sample_batch takes batch_B alone
                return self._locked().sample_batch(batch_B)
            return self._locked().sample_batch(batch_B, batch_T)

    def update_batch_priorities(self, priorities: torch.Tensor | np.ndarray) -> None:
        with self.rw_lock.write_lock:
            self._locked().update_batch_priorities(priorities)

    def state_dict(self) -> dict[str, Any]:
        """Copies of the arrays (taken under the read lock: the copiers keep writing afterwards)."""
        with self.rw_lock.read_lock:
            return copy.deepcopy(self._locked().state_dict())

    def load_state_dict(self, state: dict[str, Any]) -> None:
        with self.rw_lock.write_lock:
            self._locked().load_state_dict(state)
