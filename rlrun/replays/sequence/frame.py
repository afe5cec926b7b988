"""Sequence replays that store each frame of stacked-frame observations once (rlpyt's
``UniformSequenceReplayFrameBuffer`` and ``PrioritizedSequenceReplayFrameBuffer``)."""

from __future__ import annotations

from rlrun.replays.frame import NStepFrameStorage
from rlrun.replays.n_step import NStepReturnStorage
from rlrun.replays.sequence.prioritized import PrioritizedSequenceReplayBuffer
from rlrun.replays.sequence.uniform import UniformSequenceReplayBuffer

__all__ = ["UniformSequenceReplayFrameBuffer", "PrioritizedSequenceReplayFrameBuffer"]


class UniformSequenceReplayFrameBuffer(UniformSequenceReplayBuffer):
    """:class:`UniformSequenceReplayBuffer` over an :class:`~rlrun.replays.frame.NStepFrameStorage`:
    observations ``[k, H, W]`` cost one frame per step; each sampled step's stack is rebuilt, with zeros
    before episode starts."""

    StorageCls: type[NStepReturnStorage] = NStepFrameStorage


class PrioritizedSequenceReplayFrameBuffer(PrioritizedSequenceReplayBuffer):
    """:class:`PrioritizedSequenceReplayBuffer` over an :class:`~rlrun.replays.frame.NStepFrameStorage`."""

    StorageCls: type[NStepReturnStorage] = NStepFrameStorage
