"""Replay buffers: ring storages of ``[T, B]`` samples, composed with a rule that picks indexes."""
