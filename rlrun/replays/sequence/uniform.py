"""rlpyt's uniform sequence replays: whole observations, sequence starts drawn uniformly."""

from __future__ import annotations

from rlrun.replays.factory import Sequences, replay_parts
from rlrun.replays.sequences import SequenceReplay
from rlrun.utils.collections import NamedArrayTuple

__all__ = ["UniformSequenceReplayBuffer", "AsyncUniformSequenceReplayBuffer"]


class UniformSequenceReplayBuffer(SequenceReplay):
    """Sequences starting uniformly among the valid starts (see
    :class:`~rlrun.replays.sequences.SequenceReplay`). ``batch_T`` may be left None and given to
    ``sample_batch`` instead, or changed with ``set_batch_T``."""

    async_ = False

    def __init__(
        self,
        example: NamedArrayTuple,
        size: int,
        B: int,
        rnn_state_interval: int,
        batch_T: int | None = None,
        *,
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
            sequence=Sequences(rnn_state_interval, batch_T),
            mid_batch_reset=mid_batch_reset,
            async_=self.async_,
        )
        super().__init__(parts)


class AsyncUniformSequenceReplayBuffer(UniformSequenceReplayBuffer):
    """:class:`UniformSequenceReplayBuffer` in shared memory under a reader-writer lock (asynchronous runners)."""

    async_ = True
