"""The interface algorithms use to store and draw replay data."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from rlrun.replays.n_step import NStepReturnStorage
from rlrun.replays.sampling import PrioritizedSampling

__all__ = ["BaseReplayBuffer", "StorageReplayBuffer", "PrioritizedReplayMethods"]


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

    def state_dict(self) -> dict[str, Any]:
        """The buffer's contents and cursors, for checkpoints (arrays by reference: save them at once)."""
        raise NotImplementedError(
            f"{type(self).__name__} has no state_dict(), so a checkpoint cannot keep it. Implement state_dict() "
            "and load_state_dict(), or leave the replay out of checkpoints (CheckpointPolicy(replay=False))."
        )

    def load_state_dict(self, state: dict[str, Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} has no load_state_dict().")


class StorageReplayBuffer(BaseReplayBuffer):
    """A buffer drawing from an :class:`~rlrun.replays.n_step.NStepReturnStorage` (``self.storage``);
    exposes the storage's figures under the attribute names of rlpyt's buffers."""

    storage: NStepReturnStorage
    sampling: Any  # a rule of rlrun.replays.sampling

    def state_dict(self) -> dict[str, Any]:
        return dict(storage=self.storage.state_dict(), sampling=self.sampling.state_dict())

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Refill a buffer built with the same settings from :meth:`state_dict`'s output."""
        self.storage.load_state_dict(state["storage"])
        self.sampling.load_state_dict(state["sampling"])

    @property
    def samples(self) -> Any:
        return self.storage.samples

    @property
    def T(self) -> int:
        return self.storage.T

    @property
    def B(self) -> int:
        return self.storage.B

    @property
    def size(self) -> int:
        return self.storage.size

    @property
    def t(self) -> int:
        return self.storage.t

    @property
    def n_step_return(self) -> int:
        return self.storage.n_step_return

    @property
    def discount(self) -> float:
        return self.storage.discount


class PrioritizedReplayMethods:
    """What a prioritized buffer offers beyond its uniform version; its sampling rule does the work.
    Put it first among the bases: ``class P(PrioritizedReplayMethods, SomeStorageReplayBuffer)``."""

    storage: NStepReturnStorage
    sampling: PrioritizedSampling

    def update_batch_priorities(self, priorities: Any) -> None:
        """Priorities ``[batch_B]`` (numpy or torch, before ``** alpha``) for the entries last drawn."""
        if isinstance(priorities, torch.Tensor):
            priorities = priorities.detach().cpu().numpy()
        self.sampling.update_priorities(self.storage, np.asarray(priorities))

    def set_beta(self, beta: float) -> None:
        """The importance-sampling exponent for the next batches (DQN and R2D1 anneal it)."""
        self.sampling.beta = beta

    def is_weights(self) -> torch.Tensor:
        """The importance-sampling weights ``[batch_B]`` of the batch last drawn (largest 1)."""
        return torch.from_numpy(self.sampling.is_weights())

    @property
    def alpha(self) -> float:
        return self.sampling.alpha

    @property
    def beta(self) -> float:
        return self.sampling.beta

    @property
    def default_priority(self) -> float:
        return self.sampling.default_priority
