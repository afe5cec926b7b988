"""rlpyt's module path ``rlpyt.replays.n_step``. Its base buffer is not a base class in rlrun: the n-step
storage is a part, :class:`~rlrun.replays.storage.NStepReturnStorage`, that every replay composes (see
:mod:`rlrun.replays.factory`)."""
