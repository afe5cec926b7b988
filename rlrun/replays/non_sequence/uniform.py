"""rlpyt's uniform replays of single transitions: whole observations, uniform draws."""

from __future__ import annotations

from rlrun.replays.factory import replay_parts
from rlrun.replays.transitions import TransitionReplay
from rlrun.utils.collections import NamedArrayTuple

__all__ = ["UniformReplayBuffer", "AsyncUniformReplayBuffer"]


class UniformReplayBuffer(TransitionReplay):
    """The last ``size`` steps of ``B`` envs (rows like ``example``, e.g. DQN's ``SamplesToBuffer``), drawn
    uniformly as transitions (see :class:`~rlrun.replays.transitions.TransitionReplay`).
    ``mid_batch_reset=False`` for wait-reset samplers."""

    async_ = False

    def __init__(
        self,
        example: NamedArrayTuple,
        size: int,
        B: int,
        discount: float = 1,
        n_step_return: int = 1,
        *,
        mid_batch_reset: bool = True,
    ) -> None:
        parts = replay_parts(
            example,
            size,
            B,
            discount=discount,
            n_step_return=n_step_return,
            mid_batch_reset=mid_batch_reset,
            async_=self.async_,
        )
        super().__init__(parts)


class AsyncUniformReplayBuffer(UniformReplayBuffer):
    """:class:`UniformReplayBuffer` in shared memory under a reader-writer lock (asynchronous runners)."""

    async_ = True
