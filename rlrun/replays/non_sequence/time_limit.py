"""rlpyt's time-limit replays: the plain replays, for rows that carry ``timeout``.

rlpyt needed separate classes to store ``timeout`` and return ``timeout``/``timeout_n``. rlrun's storage
does this for any example with a ``timeout`` field (and also bootstraps through time-limit cuts, see
:class:`~rlrun.replays.transitions.TransitionReplay`), so these check that the field is there.
"""

from __future__ import annotations

from rlrun.replays.factory import Prioritized, replay_parts
from rlrun.replays.transitions import SamplesFromReplayTl, TransitionReplay
from rlrun.utils.collections import NamedArrayTuple, fields_of

__all__ = [
    "SamplesFromReplayTL",
    "TlUniformReplayBuffer",
    "TlPrioritizedReplayBuffer",
    "AsyncTlUniformReplayBuffer",
    "AsyncTlPrioritizedReplayBuffer",
]

# rlpyt's name; rlrun's batch also has steps_n (the rewards in each window).
SamplesFromReplayTL = SamplesFromReplayTl


def _require_timeout(cls: type, example: NamedArrayTuple) -> None:
    if "timeout" not in fields_of(example):
        raise ValueError(
            f"{cls.__name__} stores time-limit flags: its example needs a field 'timeout' (e.g. "
            f"SamplesToBufferTl from rlrun.algos.dqn.dqn); got fields {fields_of(example)}."
        )


class TlUniformReplayBuffer(TransitionReplay):
    """Uniform transitions of rows with ``timeout``; batches are ``SamplesFromReplayTl``."""

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
        _require_timeout(type(self), example)
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


class TlPrioritizedReplayBuffer(TransitionReplay):
    """Prioritized transitions of rows with ``timeout``; batches are ``SamplesFromReplayTlPri``. rlpyt's
    order: the rule's settings, then keywords."""

    async_ = False

    def __init__(
        self,
        alpha: float = 0.6,
        beta: float = 0.4,
        default_priority: float = 1,
        unique: bool = False,
        input_priorities: bool = False,
        input_priority_shift: int = 0,
        *,
        example: NamedArrayTuple,
        size: int,
        B: int,
        discount: float = 1,
        n_step_return: int = 1,
        mid_batch_reset: bool = True,
    ) -> None:
        _require_timeout(type(self), example)
        rule = Prioritized(alpha, beta, default_priority, unique, input_priorities, input_priority_shift)
        parts = replay_parts(
            example,
            size,
            B,
            discount=discount,
            n_step_return=n_step_return,
            prioritized=rule,
            mid_batch_reset=mid_batch_reset,
            async_=self.async_,
        )
        super().__init__(parts)


class AsyncTlUniformReplayBuffer(TlUniformReplayBuffer):
    """:class:`TlUniformReplayBuffer` in shared memory under a reader-writer lock (asynchronous runners)."""

    async_ = True


class AsyncTlPrioritizedReplayBuffer(TlPrioritizedReplayBuffer):
    """:class:`TlPrioritizedReplayBuffer` in shared memory under a reader-writer lock (asynchronous runners)."""

    async_ = True
