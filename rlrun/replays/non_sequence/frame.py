"""Replays of single transitions that store each frame of stacked-frame observations once (rlpyt's
``UniformReplayFrameBuffer`` and ``PrioritizedReplayFrameBuffer``)."""

from __future__ import annotations

from rlrun.replays.async_ import AsyncReplayBufferMixin
from rlrun.replays.frame import NStepFrameStorage
from rlrun.replays.n_step import NStepReturnStorage
from rlrun.replays.non_sequence.prioritized import PrioritizedReplayBuffer
from rlrun.replays.non_sequence.uniform import UniformReplayBuffer

__all__ = [
    "UniformReplayFrameBuffer",
    "PrioritizedReplayFrameBuffer",
    "AsyncUniformReplayFrameBuffer",
    "AsyncPrioritizedReplayFrameBuffer",
]


class UniformReplayFrameBuffer(UniformReplayBuffer):
    """:class:`UniformReplayBuffer` over an :class:`~rlrun.replays.frame.NStepFrameStorage`: observations
    ``[k, H, W]`` cost one frame per step, and sampled stacks are rebuilt with zeros before episode starts."""

    StorageCls: type[NStepReturnStorage] = NStepFrameStorage


class PrioritizedReplayFrameBuffer(PrioritizedReplayBuffer):
    """:class:`PrioritizedReplayBuffer` over an :class:`~rlrun.replays.frame.NStepFrameStorage`."""

    StorageCls: type[NStepReturnStorage] = NStepFrameStorage


class AsyncUniformReplayFrameBuffer(AsyncReplayBufferMixin, UniformReplayFrameBuffer):
    """:class:`UniformReplayFrameBuffer` in shared memory under a reader-writer lock (asynchronous runners)."""


class AsyncPrioritizedReplayFrameBuffer(AsyncReplayBufferMixin, PrioritizedReplayFrameBuffer):
    """:class:`PrioritizedReplayFrameBuffer` in shared memory under a reader-writer lock (asynchronous runners)."""
