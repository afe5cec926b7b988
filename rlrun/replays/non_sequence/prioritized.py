"""rlpyt's prioritized replays of single transitions: whole observations, draws by priority."""

from __future__ import annotations

from rlrun.replays.factory import Prioritized, replay_parts
from rlrun.replays.transitions import SamplesFromReplayPri, SamplesFromReplayTlPri, TransitionReplay
from rlrun.utils.collections import NamedArrayTuple

__all__ = ["SamplesFromReplayPri", "SamplesFromReplayTlPri", "PrioritizedReplayBuffer", "AsyncPrioritizedReplayBuffer"]


class PrioritizedReplayBuffer(TransitionReplay):
    """Transitions drawn in proportion to ``priority ** alpha`` (see
    :class:`~rlrun.replays.sampling.PrioritizedSampling`); batches add ``is_weights``.

    rlpyt's order: the rule's settings come first, and ``example``, ``size``, ``B`` (with ``discount``,
    ``n_step_return``) are keywords: ``PrioritizedReplayBuffer(example=..., size=..., B=...)``.
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
            mid_batch_reset=mid_batch_reset,
            async_=self.async_,
        )
        super().__init__(parts)


class AsyncPrioritizedReplayBuffer(PrioritizedReplayBuffer):
    """:class:`PrioritizedReplayBuffer` in shared memory (priorities and sum tree too) under a reader-writer
    lock, for asynchronous runners."""

    async_ = True
