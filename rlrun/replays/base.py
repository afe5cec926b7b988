"""The interface algorithms use to store and draw replay data (rlpyt's ``BaseReplayBuffer``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rlrun.utils.collections import NamedArrayTuple

__all__ = ["BaseReplayBuffer"]


class BaseReplayBuffer:
    """Stores batches from the sampler and returns training batches drawn from them.

    Subclass it for a replay of your own (write :meth:`append_samples` and :meth:`sample_batch`);
    rlrun's replays are composed, see :func:`rlrun.replays.factory.make_replay_buffer`. ``async_`` is
    True for buffers in shared memory that a sampler process writes while the optimiser reads
    (asynchronous runners).
    """

    async_: bool = False

    def append_samples(self, samples: NamedArrayTuple) -> tuple[int, slice | np.ndarray] | None:
        """Store a ``[T, B]`` batch, overwriting the oldest data once full."""
        raise NotImplementedError

    def sample_batch(self, batch_B: int, batch_T: int | None = None) -> NamedArrayTuple:
        """A training batch of ``batch_B`` entries (torch tensors); ``batch_T`` for sequence replays."""
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """The buffer's contents and cursors, for checkpoints (arrays by reference: save them at once)."""
        raise NotImplementedError(
            f"{type(self).__name__} has no state_dict(), so a checkpoint cannot keep it. Implement state_dict() "
            "and load_state_dict(), or leave the replay out of checkpoints (CheckpointPolicy(replay=False))."
        )

    def load_state_dict(self, state: dict[str, Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} has no load_state_dict().")
