"""Prioritized replay of sequences (rlpyt's ``PrioritizedSequenceReplayBuffer``)."""

from __future__ import annotations

from typing import Any

from rlrun.replays.base import PrioritizedReplayMethods
from rlrun.replays.sampling import PrioritizedSampling, UniformSampling
from rlrun.replays.sequence.n_step import SamplesFromReplay, SamplesFromReplayTl, SequenceNStepReturnBuffer
from rlrun.utils.collections import namedarraytuple

__all__ = ["SamplesFromReplayPri", "SamplesFromReplayTlPri", "PrioritizedSequenceReplayBuffer"]

SamplesFromReplayPri = namedarraytuple("SamplesFromReplayPri", SamplesFromReplay._fields + ("is_weights",))
SamplesFromReplayTlPri = namedarraytuple("SamplesFromReplayTlPri", SamplesFromReplayTl._fields + ("is_weights",))


class PrioritizedSequenceReplayBuffer(PrioritizedReplayMethods, SequenceNStepReturnBuffer):
    """Sequences drawn in proportion to ``priority ** alpha``; one priority per possible start (a row where
    the recurrent state was stored), so a tree over ``T / rnn_state_interval`` slots per env.

    ``batch_T`` is required and fixed: which starts are valid depends on it. The batch is the uniform
    one's plus ``is_weights`` ``[batch_B]``. :meth:`update_batch_priorities` takes the new priorities of
    the sequences last drawn.

    Input priorities (R2D1): with ``input_priorities=True``, :meth:`append_samples` also accepts
    ``PrioritiesSamplesToBuffer(priorities, samples)``, priorities ``[B]`` computed from the new samples;
    they go to the start ``input_priority_shift`` intervals before the new rows' start, i.e. to the
    sequence whose training part these samples end (with 40-step batches, 40 warm-up steps and
    ``rnn_state_interval=40``, a shift of 1 gives them to the sequence that warms up on the previous
    batch and trains on these). Other starts enter at the largest priority so far.
    """

    sampling: PrioritizedSampling

    def __init__(
        self,
        example: Any,
        size: int,
        B: int,
        rnn_state_interval: int,
        batch_T: int | None = None,
        discount: float = 1,
        n_step_return: int = 1,
        alpha: float = 0.6,
        beta: float = 0.4,
        default_priority: float = 1,
        input_priorities: bool = False,
        input_priority_shift: int = 0,
        mid_batch_reset: bool = True,
    ) -> None:
        if batch_T is None:
            raise ValueError("A prioritized sequence replay needs a fixed batch_T (its valid starts depend on it).")
        self.input_priorities = input_priorities
        self._pri_args = (alpha, beta, default_priority, input_priority_shift)
        super().__init__(example, size, B, rnn_state_interval, batch_T, discount, n_step_return, mid_batch_reset)

    def _make_sampling(self, interval: int) -> UniformSampling | PrioritizedSampling:
        assert self.batch_T is not None
        alpha, beta, default_priority, shift = self._pri_args
        return PrioritizedSampling(self.storage, alpha, beta, default_priority, interval, self.batch_T, shift)

    def _appended(self, t: int, T: int, priorities: Any) -> None:
        self.sampling.appended(self.storage, t, T, priorities)

    def sample_batch(self, batch_B: int, batch_T: int | None = None) -> Any:
        """``batch_B`` sequences drawn by priority, with their ``is_weights``."""
        if batch_T is not None and batch_T != self.batch_T:
            raise ValueError(f"A prioritized sequence replay draws sequences of its fixed batch_T={self.batch_T}.")
        batch = super().sample_batch(batch_B)
        Cls = SamplesFromReplayTlPri if "steps_n" in batch._fields else SamplesFromReplayPri
        return Cls(*batch, is_weights=self.is_weights())
