"""rlpyt's module path ``rlpyt.replays.frame``. Its frame mixin is not a base class in rlrun: frames are
kept by a storage, :class:`~rlrun.replays.frame_storage.NStepFrameStorage`, that frame replays compose
(``make_replay_buffer(..., frames=True)``, see :mod:`rlrun.replays.factory`)."""
