"""rlpyt's module of the single-transition batch. The replay that draws it is composed:
:class:`~rlrun.replays.transitions.TransitionReplay` (rlpyt's ``NStepReturnBuffer``), built by
:func:`~rlrun.replays.factory.make_replay_buffer`."""

from rlrun.replays.transitions import SamplesFromReplay, SamplesFromReplayTl
from rlrun.replays.transitions import TransitionReplay as NStepReturnBuffer

__all__ = ["SamplesFromReplay", "SamplesFromReplayTl", "NStepReturnBuffer"]
