"""rlrun: deep reinforcement learning in PyTorch, with rlpyt's names and shared-memory samplers."""

__version__ = "0.1.0"
