"""Runners: the training loop that connects a sampler, an agent and an algorithm, and logs the run."""

from rlrun.runners.async_rl import AsyncRl, AsyncRlEval
from rlrun.runners.checkpoint import CheckpointPolicy
from rlrun.runners.checkpointer import Checkpointer
from rlrun.runners.interrupt import TrainingInterrupted
from rlrun.runners.minibatch_rl import MinibatchRl, MinibatchRlBase, MinibatchRlEval
from rlrun.runners.sync_rl import RankProcessError, SyncRl, SyncRlEval

__all__ = [
    "AsyncRl",
    "AsyncRlEval",
    "CheckpointPolicy",
    "Checkpointer",
    "MinibatchRl",
    "MinibatchRlBase",
    "MinibatchRlEval",
    "RankProcessError",
    "SyncRl",
    "SyncRlEval",
    "TrainingInterrupted",
]
