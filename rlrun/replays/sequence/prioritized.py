"""rlpyt's prioritized sequence replays: whole observations, sequence starts drawn by priority."""

from __future__ import annotations

from rlrun.replays.factory import Prioritized, Sequences, replay_parts
from rlrun.replays.sequences import SamplesFromReplayPri, SamplesFromReplayTlPri, SequenceReplay
from rlrun.utils.collections import NamedArrayTuple

__all__ = [
    "SamplesFromReplayPri",
    "SamplesFromReplayTlPri",
    "PrioritizedSequenceReplayBuffer",
    "AsyncPrioritizedSequenceReplayBuffer",
]


class PrioritizedSequenceReplayBuffer(SequenceReplay):
    """Sequences drawn in proportion to ``priority ** alpha``, one priority per possible start (a row
    where the recurrent state was kept); ``batch_T`` is required and fixed.

    Input priorities (R2D1): with ``input_priorities=True``, ``append_samples`` also takes
    ``PrioritiesSamplesToBuffer(priorities, samples)``, priorities ``[B]`` computed from the new samples;
    they go to the start ``input_priority_shift`` intervals before the new rows' start, i.e. to the
    sequence whose training part these samples end. rlpyt's order: the rule's settings, then keywords.
    """

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
            prioritized=rule,
            sequence=Sequences(rnn_state_interval, batch_T),
            mid_batch_reset=mid_batch_reset,
            async_=self.async_,
        )
        super().__init__(parts)


class AsyncPrioritizedSequenceReplayBuffer(PrioritizedSequenceReplayBuffer):
    """:class:`PrioritizedSequenceReplayBuffer` in shared memory under a reader-writer lock (asynchronous runners)."""

    async_ = True
