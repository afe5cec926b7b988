"""Prioritized replay of single transitions with n-step returns (rlpyt's ``PrioritizedReplayBuffer``)."""

from __future__ import annotations

from typing import Any

from rlrun.replays.async_ import AsyncReplayBufferMixin
from rlrun.replays.base import PrioritizedReplayMethods
from rlrun.replays.n_step import NStepReturnStorage
from rlrun.replays.non_sequence.n_step import NStepReturnBuffer, SamplesFromReplay, SamplesFromReplayTl
from rlrun.replays.sampling import PrioritizedSampling
from rlrun.utils.collections import namedarraytuple

__all__ = ["SamplesFromReplayPri", "SamplesFromReplayTlPri", "PrioritizedReplayBuffer", "AsyncPrioritizedReplayBuffer"]

SamplesFromReplayPri = namedarraytuple("SamplesFromReplayPri", SamplesFromReplay._fields + ("is_weights",))
SamplesFromReplayTlPri = namedarraytuple("SamplesFromReplayTlPri", SamplesFromReplayTl._fields + ("is_weights",))


class PrioritizedReplayBuffer(PrioritizedReplayMethods, NStepReturnBuffer):
    """Stores the last ``size`` steps of ``B`` envs; ``sample_batch`` draws transitions in proportion to
    ``priority ** alpha`` (see :class:`~rlrun.replays.sampling.PrioritizedSampling`).

    The batch is the uniform replay's plus ``is_weights`` ``[batch_B]`` (float32, largest 1): multiply
    each sample's loss by it. After the gradient step, give the batch's new priorities (e.g.
    ``|TD error|``) to :meth:`update_batch_priorities`; new steps enter with the largest priority so
    far (``default_priority`` at first). :meth:`set_beta` anneals the weights' exponent.
    """

    StorageCls: type[NStepReturnStorage] = NStepReturnStorage
    sampling: PrioritizedSampling

    def __init__(
        self,
        example: Any,
        size: int,
        B: int,
        discount: float = 1,
        n_step_return: int = 1,
        alpha: float = 0.6,
        beta: float = 0.4,
        default_priority: float = 1,
        mid_batch_reset: bool = True,
    ) -> None:
        storage = self.StorageCls(
            example, size, B, discount, n_step_return, share_memory=self.async_, mid_batch_reset=mid_batch_reset
        )
        super().__init__(storage, PrioritizedSampling(storage, alpha, beta, default_priority, share_memory=self.async_))

    def sample_batch(self, batch_B: int) -> Any:
        """``batch_B`` transitions drawn by priority, with their ``is_weights``."""
        batch = super().sample_batch(batch_B)
        Cls = SamplesFromReplayTlPri if "steps_n" in batch._fields else SamplesFromReplayPri
        return Cls(*batch, is_weights=self.is_weights())


class AsyncPrioritizedReplayBuffer(AsyncReplayBufferMixin, PrioritizedReplayBuffer):
    """:class:`PrioritizedReplayBuffer` in shared memory (priorities and sum tree too) under a reader-writer
    lock, for asynchronous runners (see :mod:`rlrun.replays.async_`)."""
