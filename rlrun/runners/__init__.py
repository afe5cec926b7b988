"""Runners: the training loop that connects a sampler, an agent and an algorithm, and logs the run."""

from rlrun.runners.minibatch_rl import MinibatchRl, MinibatchRlBase, MinibatchRlEval

__all__ = ["MinibatchRl", "MinibatchRlBase", "MinibatchRlEval"]
