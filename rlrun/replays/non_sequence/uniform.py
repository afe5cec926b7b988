"""Uniform replay of single transitions with n-step returns (rlpyt's ``UniformReplayBuffer``)."""

from __future__ import annotations

from typing import Any

from rlrun.replays.async_ import AsyncReplayBufferMixin
from rlrun.replays.n_step import NStepReturnStorage
from rlrun.replays.non_sequence.n_step import NStepReturnBuffer
from rlrun.replays.sampling import UniformSampling

__all__ = ["UniformReplayBuffer", "AsyncUniformReplayBuffer"]


class UniformReplayBuffer(NStepReturnBuffer):
    """Stores the last ``size`` steps of ``B`` envs; ``sample_batch`` draws transitions uniformly.

    ``example`` is one step of what is stored, e.g. ``SamplesToBuffer(observation, action, reward,
    done[, timeout])`` from :meth:`rlrun.algos.dqn.dqn.DQN.samples_to_buffer`. Observations are stored
    whole; :class:`~rlrun.replays.non_sequence.frame.UniformReplayFrameBuffer` stores stacked frames once.
    ``mid_batch_reset=False`` for wait-reset samplers (their filler steps are never drawn). See
    :class:`NStepReturnBuffer` for the batch returned.
    """

    StorageCls: type[NStepReturnStorage] = NStepReturnStorage

    def __init__(
        self,
        example: Any,
        size: int,
        B: int,
        discount: float = 1,
        n_step_return: int = 1,
        mid_batch_reset: bool = True,
    ) -> None:
        storage = self.StorageCls(
            example, size, B, discount, n_step_return, share_memory=self.async_, mid_batch_reset=mid_batch_reset
        )
        super().__init__(storage, UniformSampling())


class AsyncUniformReplayBuffer(AsyncReplayBufferMixin, UniformReplayBuffer):
    """:class:`UniformReplayBuffer` in shared memory under a reader-writer lock, for asynchronous runners
    (see :mod:`rlrun.replays.async_`)."""
