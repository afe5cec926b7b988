"""Replays that return single transitions (leading dim ``[batch_B]``, no time dim)."""
