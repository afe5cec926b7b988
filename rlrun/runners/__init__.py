"""Runners: the training loop that connects a sampler, an agent and an algorithm, and logs the run."""

from rlrun.runners.async_rl import AsyncRl, AsyncRlEval
from rlrun.runners.checkpoint import CheckpointPolicy
from rlrun.runners.interrupt import TrainingInterrupted
from rlrun.runners.minibatch_rl import MinibatchRl, MinibatchRlBase, MinibatchRlEval

__all__ = [
    "AsyncRl",
    "AsyncRlEval",
    "CheckpointPolicy",
    "MinibatchRl",
    "MinibatchRlBase",
    "MinibatchRlEval",
    "TrainingInterrupted",
]
