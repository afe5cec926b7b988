"""The interface algorithms use to store and draw replay data."""

from __future__ import annotations

from typing import Any

__all__ = ["BaseReplayBuffer"]


class BaseReplayBuffer:
    """Stores batches from the sampler and returns training batches drawn from them.

    ``async_`` is True for buffers in shared memory that a sampler process writes while the
    optimiser reads (asynchronous runners).
    """

    async_: bool = False

    def append_samples(self, samples: Any) -> Any:
        """Store a ``[T, B]`` batch, overwriting the oldest data once full."""
        raise NotImplementedError

    def sample_batch(self, batch_B: int) -> Any:
        """A training batch of ``batch_B`` entries (torch tensors)."""
        raise NotImplementedError
