"""Model sizes for Atari DQN agents (the rlpyt path of :class:`AtariMixin`)."""

from rlrun.agents.env_spaces import AtariMixin

__all__ = ["AtariMixin"]
