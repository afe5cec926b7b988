"""Uniform replay of single transitions with n-step returns (rlpyt's ``UniformReplayBuffer``)."""

from __future__ import annotations

from typing import Any

from rlrun.replays.n_step import NStepReturnStorage
from rlrun.replays.non_sequence.n_step import NStepReturnBuffer
from rlrun.replays.sampling import UniformSampling

__all__ = ["UniformReplayBuffer"]


class UniformReplayBuffer(NStepReturnBuffer):
    """Stores the last ``size`` steps of ``B`` envs; ``sample_batch`` draws transitions uniformly.

    ``example`` is one step of what is stored, e.g. ``SamplesToBuffer(observation, action, reward,
    done[, timeout])`` from :meth:`rlrun.algos.dqn.dqn.DQN.samples_to_buffer`. See
    :class:`NStepReturnBuffer` for the batch returned.
    """

    def __init__(self, example: Any, size: int, B: int, discount: float = 1, n_step_return: int = 1) -> None:
        super().__init__(NStepReturnStorage(example, size, B, discount, n_step_return), UniformSampling())
