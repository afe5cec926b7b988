"""rlpyt's time-limit replays: replays whose rows carry ``timeout``.

rlpyt needed separate classes to store ``timeout`` and return ``timeout``/``timeout_n``. rlrun's storage
does this for any example with a ``timeout`` field (and also bootstraps through time-limit cuts, see
:class:`~rlrun.replays.non_sequence.n_step.NStepReturnBuffer`), so these are the plain replays with a
check that the field is there.
"""

from __future__ import annotations

from typing import Any

from rlrun.replays.async_ import AsyncReplayBufferMixin
from rlrun.replays.non_sequence.n_step import SamplesFromReplayTl
from rlrun.replays.non_sequence.prioritized import PrioritizedReplayBuffer
from rlrun.replays.non_sequence.uniform import UniformReplayBuffer

__all__ = [
    "SamplesFromReplayTL",
    "TlUniformReplayBuffer",
    "TlPrioritizedReplayBuffer",
    "AsyncTlUniformReplayBuffer",
    "AsyncTlPrioritizedReplayBuffer",
]

# rlpyt's name; rlrun's batch also has steps_n (the rewards in each window).
SamplesFromReplayTL = SamplesFromReplayTl


def _require_timeout(cls: type, example: Any) -> None:
    if "timeout" not in getattr(example, "_fields", ()):
        raise ValueError(
            f"{cls.__name__} stores time-limit flags: its example needs a field 'timeout' (e.g. "
            "SamplesToBufferTl from rlrun.algos.dqn.dqn); got fields "
            f"{getattr(example, '_fields', None)}."
        )


class TlUniformReplayBuffer(UniformReplayBuffer):
    """:class:`UniformReplayBuffer` for rows with ``timeout``; batches are ``SamplesFromReplayTl``."""

    def __init__(self, example: Any, *args: Any, **kwargs: Any) -> None:
        _require_timeout(type(self), example)
        super().__init__(example, *args, **kwargs)


class TlPrioritizedReplayBuffer(PrioritizedReplayBuffer):
    """:class:`PrioritizedReplayBuffer` for rows with ``timeout``; batches are ``SamplesFromReplayTlPri``."""

    def __init__(self, example: Any, *args: Any, **kwargs: Any) -> None:
        _require_timeout(type(self), example)
        super().__init__(example, *args, **kwargs)


class AsyncTlUniformReplayBuffer(AsyncReplayBufferMixin, TlUniformReplayBuffer):
    """:class:`TlUniformReplayBuffer` in shared memory under a reader-writer lock (asynchronous runners)."""


class AsyncTlPrioritizedReplayBuffer(AsyncReplayBufferMixin, TlPrioritizedReplayBuffer):
    """:class:`TlPrioritizedReplayBuffer` in shared memory under a reader-writer lock (asynchronous runners)."""
