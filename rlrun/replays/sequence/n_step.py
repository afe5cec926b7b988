"""rlpyt's module of the sequence batch. The replay that draws it is composed:
:class:`~rlrun.replays.sequences.SequenceReplay` (rlpyt's ``SequenceNStepReturnBuffer``), built by
:func:`~rlrun.replays.factory.make_replay_buffer` with ``sequence=Sequences(...)``."""

from rlrun.replays.sequences import SamplesFromReplay, SamplesFromReplayTl
from rlrun.replays.sequences import SequenceReplay as SequenceNStepReturnBuffer

__all__ = ["SamplesFromReplay", "SamplesFromReplayTl", "SequenceNStepReturnBuffer"]
