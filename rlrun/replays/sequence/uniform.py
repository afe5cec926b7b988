"""Uniform replay of sequences (rlpyt's ``UniformSequenceReplayBuffer``)."""

from __future__ import annotations

from rlrun.replays.sequence.n_step import SequenceNStepReturnBuffer

__all__ = ["UniformSequenceReplayBuffer"]


class UniformSequenceReplayBuffer(SequenceNStepReturnBuffer):
    """Sequences whose first step is drawn uniformly among the valid starts (rows where the recurrent
    state was stored, with all ``batch_T`` steps valid). ``batch_T`` may be left None and given to
    :meth:`sample_batch` instead, or changed with :meth:`set_batch_T`. See
    :class:`SequenceNStepReturnBuffer` for the keywords and the batch."""

    def set_batch_T(self, batch_T: int) -> None:
        """The length of the sequences of the next batches."""
        self.batch_T = batch_T
