"""The one place replays are assembled: a storage x a sampling rule (x a lock for asynchronous runs).

:func:`make_replay_buffer` is what algorithms call. rlpyt's named buffers
(``UniformReplayBuffer``, ``PrioritizedReplayFrameBuffer``, ``AsyncUniformSequenceReplayBuffer``, ...)
build their parts with :func:`replay_parts` too, so a named buffer and the factory's buffer for the same
choices are the same composition.

==================  ==========================================  =============================================
choice              keyword                                     part
==================  ==========================================  =============================================
storage             ``frames``                                  whole observations, or each frame once
                                                                (:mod:`~rlrun.replays.frame_storage`)
time limits         the example has a ``timeout`` field         the storage keeps it, returns bootstrap
                                                                through cuts
rule                ``prioritized=Prioritized(...)``            uniform, or in proportion to ``p ** alpha``
batch               ``sequence=Sequences(...)``                 transitions, or sequences with RNN states
sharing             ``async_=True``                             shared memory and a reader-writer lock
==================  ==========================================  =============================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import overload

from rlrun.replays.composed import ReplayParts
from rlrun.replays.frame_storage import NStepFrameStorage
from rlrun.replays.rnn_state import RnnStateStore
from rlrun.replays.sampling import PrioritizedSampling, UniformSampling
from rlrun.replays.sequences import SequenceReplay, without_rnn_state
from rlrun.replays.storage import NStepReturnStorage
from rlrun.replays.transitions import TransitionReplay
from rlrun.utils.collections import NamedArrayTuple, fields_of
from rlrun.utils.synchronize import DEFAULT_LOCK_TIMEOUT_S, RWLock

__all__ = ["Prioritized", "Sequences", "make_replay_buffer", "replay_parts"]


@dataclass(frozen=True)
class Prioritized:
    """Prioritized sampling's settings (rlpyt's names and defaults; see
    :class:`~rlrun.replays.sampling.PrioritizedSampling`). ``input_priorities``: ``append_samples`` also
    takes priorities computed with the samples, which go to the slot ``input_priority_shift`` before."""

    alpha: float = 0.6
    beta: float = 0.4
    default_priority: float = 1
    unique: bool = False
    input_priorities: bool = False
    input_priority_shift: int = 0

    def __post_init__(self) -> None:
        for name in ("alpha", "beta", "default_priority"):
            value = getattr(self, name)
            if not isinstance(value, Real) or isinstance(value, bool):
                raise TypeError(
                    f"A prioritized replay's {name} must be a number, got {type(value).__name__}. rlpyt's prioritized "
                    "buffers take alpha, beta, default_priority, unique, input_priorities, input_priority_shift "
                    "first; give example, size and B by keyword: PrioritizedReplayBuffer(example=..., size=..., B=...)."
                )


@dataclass(frozen=True)
class Sequences:
    """Sequence replay's settings: the recurrent state is kept every ``rnn_state_interval`` rows (0: none,
    sequences start anywhere from zeros), and sequences are ``batch_T`` steps long (may be given at
    ``sample_batch`` instead for uniform draws; prioritized draws need it here)."""

    rnn_state_interval: int
    batch_T: int | None = None


def replay_parts(
    example: NamedArrayTuple,
    size: int,
    B: int,
    *,
    discount: float = 1,
    n_step_return: int = 1,
    frames: bool = False,
    prioritized: Prioritized | None = None,
    sequence: Sequences | None = None,
    mid_batch_reset: bool = True,
    async_: bool = False,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S,
) -> ReplayParts:
    """The storage, rule, lock and recurrent-state store of the replay :func:`make_replay_buffer`
    describes (the named rlpyt buffers pass these to their base class)."""
    StorageCls = NStepFrameStorage if frames else NStepReturnStorage
    rnn_states = None
    state_example = None
    batch_T = None
    interval = 1
    if sequence is not None:
        interval = max(1, sequence.rnn_state_interval)
        batch_T = sequence.batch_T
        _check_rnn_state(example, sequence.rnn_state_interval)
        if sequence.rnn_state_interval > 0:
            state_example = example.prev_rnn_state
        # T a multiple of the interval, so every stored state has its slot.
        size = B * interval * math.ceil(math.ceil(size / B) / interval)
        example = without_rnn_state(example)
    storage = StorageCls(
        example, size, B, discount, n_step_return, share_memory=async_, mid_batch_reset=mid_batch_reset
    )
    if sequence is not None:
        if state_example is not None:
            rnn_states = RnnStateStore(state_example, storage.T, B, sequence.rnn_state_interval, share_memory=async_)
        if batch_T is not None and batch_T + n_step_return + storage.off_backward > storage.T:
            raise ValueError(
                f"Sequences of batch_T={batch_T} do not fit a replay of {storage.T} steps per env; raise size."
            )
    sampling: UniformSampling | PrioritizedSampling
    if prioritized is None:
        sampling = UniformSampling(interval, batch_T or 1)
    else:
        sampling = PrioritizedSampling(
            storage,
            prioritized.alpha,
            prioritized.beta,
            prioritized.default_priority,
            interval,
            batch_T or 1,
            prioritized.input_priority_shift,
            share_memory=async_,
            unique=prioritized.unique,
        )
    return ReplayParts(
        storage=storage,
        sampling=sampling,
        rw_lock=RWLock(timeout=lock_timeout) if async_ else None,
        input_priorities=prioritized is not None and prioritized.input_priorities,
        rnn_states=rnn_states,
        batch_T=batch_T,
    )


@overload
def make_replay_buffer(
    example: NamedArrayTuple,
    size: int,
    B: int,
    *,
    discount: float = ...,
    n_step_return: int = ...,
    frames: bool = ...,
    prioritized: Prioritized | None = ...,
    sequence: None = ...,
    mid_batch_reset: bool = ...,
    async_: bool = ...,
    lock_timeout: float = ...,
) -> TransitionReplay: ...


@overload
def make_replay_buffer(
    example: NamedArrayTuple,
    size: int,
    B: int,
    *,
    discount: float = ...,
    n_step_return: int = ...,
    frames: bool = ...,
    prioritized: Prioritized | None = ...,
    sequence: Sequences,
    mid_batch_reset: bool = ...,
    async_: bool = ...,
    lock_timeout: float = ...,
) -> SequenceReplay: ...


def make_replay_buffer(
    example: NamedArrayTuple,
    size: int,
    B: int,
    *,
    discount: float = 1,
    n_step_return: int = 1,
    frames: bool = False,
    prioritized: Prioritized | None = None,
    sequence: Sequences | None = None,
    mid_batch_reset: bool = True,
    async_: bool = False,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S,
) -> TransitionReplay | SequenceReplay:
    """A replay of the last ``size`` steps of ``B`` envs, rows like ``example`` (one step, no leading
    dims: ``observation``, ``action``, ``reward``, ``done``, and ``timeout`` if the env reports time
    limits; ``prev_rnn_state`` too for sequences that keep states).

    - ``discount``, ``n_step_return``: the returns the storage keeps per row.
    - ``frames``: keep each frame of ``[k, H, W]`` frame stacks once (Atari) instead of whole stacks.
    - ``prioritized``: draw in proportion to priority (else uniformly); see :class:`Prioritized`.
    - ``sequence``: draw sequences for recurrent agents (else single transitions); see :class:`Sequences`.
    - ``mid_batch_reset=False``: for wait-reset samplers; their filler steps are never drawn.
    - ``async_``: in shared memory under a reader-writer lock whose waits end after ``lock_timeout`` s,
      for asynchronous runs (build it before the processes that share it start).
    """
    parts = replay_parts(
        example,
        size,
        B,
        discount=discount,
        n_step_return=n_step_return,
        frames=frames,
        prioritized=prioritized,
        sequence=sequence,
        mid_batch_reset=mid_batch_reset,
        async_=async_,
        lock_timeout=lock_timeout,
    )
    return TransitionReplay(parts) if sequence is None else SequenceReplay(parts)


def _check_rnn_state(example: NamedArrayTuple, rnn_state_interval: int) -> None:
    if rnn_state_interval < 0:
        raise ValueError(f"rnn_state_interval must be >= 0 (0: store no state), got {rnn_state_interval}.")
    if rnn_state_interval > 0 and "prev_rnn_state" not in fields_of(example):
        raise ValueError(
            f"rnn_state_interval={rnn_state_interval} stores the agent's recurrent state, but the example has no "
            f"field 'prev_rnn_state' (fields: {fields_of(example)}); add it (R2D1's "
            "SamplesToBufferRnn) or use rnn_state_interval=0."
        )
