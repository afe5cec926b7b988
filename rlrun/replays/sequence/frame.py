"""rlpyt's sequence replays that keep each frame of ``[k, H, W]`` frame stacks once (see
:class:`~rlrun.replays.frame_storage.NStepFrameStorage`); each sampled step's stack is rebuilt."""

from __future__ import annotations

from rlrun.replays.factory import Prioritized, Sequences, replay_parts
from rlrun.replays.sequences import SequenceReplay
from rlrun.utils.collections import NamedArrayTuple

__all__ = [
    "UniformSequenceReplayFrameBuffer",
    "PrioritizedSequenceReplayFrameBuffer",
    "AsyncUniformSequenceReplayFrameBuffer",
    "AsyncPrioritizedSequenceReplayFrameBuffer",
]


class UniformSequenceReplayFrameBuffer(SequenceReplay):
    """Frames kept once, sequence starts drawn uniformly. rlpyt's order: ``example``, then keywords."""

    async_ = False

    def __init__(
        self,
        example: NamedArrayTuple,
        *,
        size: int,
        B: int,
        rnn_state_interval: int,
        batch_T: int | None = None,
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
            sequence=Sequences(rnn_state_interval, batch_T),
            mid_batch_reset=mid_batch_reset,
            async_=self.async_,
        )
        super().__init__(parts)


class PrioritizedSequenceReplayFrameBuffer(SequenceReplay):
    """Frames kept once, sequence starts drawn by priority. rlpyt's order: the rule's settings, then
    keywords."""

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
        rnn_state_interval: int,
        batch_T: int | None = None,
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
            sequence=Sequences(rnn_state_interval, batch_T),
            mid_batch_reset=mid_batch_reset,
            async_=self.async_,
        )
        super().__init__(parts)


class AsyncUniformSequenceReplayFrameBuffer(UniformSequenceReplayFrameBuffer):
    """:class:`UniformSequenceReplayFrameBuffer` in shared memory under a reader-writer lock."""

    async_ = True


class AsyncPrioritizedSequenceReplayFrameBuffer(PrioritizedSequenceReplayFrameBuffer):
    """:class:`PrioritizedSequenceReplayFrameBuffer` in shared memory under a reader-writer lock."""

    async_ = True
