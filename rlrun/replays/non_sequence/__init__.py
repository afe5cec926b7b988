"""rlpyt's named replays of single transitions (leading dim ``[batch_B]``, no time dim), each a
composition from :mod:`rlrun.replays.factory`."""
