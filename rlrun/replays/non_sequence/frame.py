"""rlpyt's replays of single transitions that keep each frame of ``[k, H, W]`` frame stacks once (see
:class:`~rlrun.replays.frame_storage.NStepFrameStorage`)."""

from __future__ import annotations

from rlrun.replays.factory import Prioritized, replay_parts
from rlrun.replays.transitions import TransitionReplay
from rlrun.utils.collections import NamedArrayTuple

__all__ = [
    "UniformReplayFrameBuffer",
    "PrioritizedReplayFrameBuffer",
    "AsyncUniformReplayFrameBuffer",
    "AsyncPrioritizedReplayFrameBuffer",
]


class UniformReplayFrameBuffer(TransitionReplay):
    """Frames kept once, transitions drawn uniformly. rlpyt's order: ``example``, then keywords."""

    async_ = False

    def __init__(
        self,
        example: NamedArrayTuple,
        *,
        size: int,
        B: int,
        discount: float = 1,
        n_step_return: int = 1,
        mid_batch_reset: bool = True,
    ) -> None:
        parts = replay_parts(
            example,
            size,
            B,
            discount=discount,
            n_step_return=n_step_return,
            frames=True,
            mid_batch_reset=mid_batch_reset,
            async_=self.async_,
        )
        super().__init__(parts)


class PrioritizedReplayFrameBuffer(TransitionReplay):
    """Frames kept once, transitions drawn by priority. rlpyt's order: the rule's settings, then keywords."""

    async_ = False

    def __init__(
        self,
        alpha: float = 0.6,
        beta: float = 0.4,
        default_priority: float = 1,
        unique: bool = False,
        input_priorities: bool = False,
        input_priority_shift: int = 0,
        *,
        example: NamedArrayTuple,
        size: int,
        B: int,
        discount: float = 1,
        n_step_return: int = 1,
        mid_batch_reset: bool = True,
    ) -> None:
        rule = Prioritized(alpha, beta, default_priority, unique, input_priorities, input_priority_shift)
        parts = replay_parts(
            example,
            size,
            B,
            discount=discount,
            n_step_return=n_step_return,
            frames=True,
            prioritized=rule,
            mid_batch_reset=mid_batch_reset,
            async_=self.async_,
        )
        super().__init__(parts)


class AsyncUniformReplayFrameBuffer(UniformReplayFrameBuffer):
    """:class:`UniformReplayFrameBuffer` in shared memory under a reader-writer lock (asynchronous runners)."""

    async_ = True


class AsyncPrioritizedReplayFrameBuffer(PrioritizedReplayFrameBuffer):
    """:class:`PrioritizedReplayFrameBuffer` in shared memory under a reader-writer lock (asynchronous runners)."""

    async_ = True
