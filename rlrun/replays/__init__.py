"""Replay buffers: a storage of ``[T, B]`` samples x a rule that picks indexes (x a lock when shared),
assembled by :func:`rlrun.replays.factory.make_replay_buffer`."""
