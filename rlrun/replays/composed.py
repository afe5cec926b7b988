"""What every composed replay is made of, and the methods that only route to those parts.

A replay is a storage (:class:`~rlrun.replays.storage.NStepReturnStorage`, or the frame storage), a
sampling rule (:mod:`rlrun.replays.sampling`), an optional reader-writer lock for replays shared between
processes, and, for sequences, the recurrent states (:class:`~rlrun.replays.rnn_state.RnnStateStore`).
:class:`ReplayParts` holds them; :func:`rlrun.replays.factory.replay_parts` builds them. The two kinds
of replay (:class:`~rlrun.replays.transitions.TransitionReplay`,
:class:`~rlrun.replays.sequences.SequenceReplay`) differ only in what a batch is; what they share is
:class:`ComposedReplay`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from rlrun.replays.frame_storage import NStepFrameStorage
from rlrun.replays.rnn_state import RnnStateStore
from rlrun.replays.sampling import PrioritizedSampling, UniformSampling
from rlrun.replays.storage import NStepReturnStorage
from rlrun.utils.buffer import numpify_buffer
from rlrun.utils.collections import NamedArrayTuple, fields_of
from rlrun.utils.synchronize import RWLock

__all__ = ["ReplayParts", "ComposedReplay"]


@dataclass
class ReplayParts:
    """The parts of one replay.

    ``rw_lock``: set for a replay in shared memory (asynchronous runs): appends and priority updates hold
    its write side, draws its read side. ``input_priorities``: ``append_samples`` also takes
    ``PrioritiesSamplesToBuffer(priorities, samples)``. ``rnn_states`` and ``batch_T`` are for sequences.
    """

    storage: NStepReturnStorage
    sampling: UniformSampling | PrioritizedSampling
    rw_lock: RWLock | None = None
    input_priorities: bool = False
    rnn_states: RnnStateStore | None = None
    batch_T: int | None = None


class ComposedReplay:
    """The methods a replay routes to its parts: locking, input priorities, priorities and beta, state
    for checkpoints, and the storage's figures under the attribute names of rlpyt's buffers.

    Subclasses write ``_append(samples, priorities)`` and ``_draw(batch_B, batch_T)``; the public
    :meth:`append_samples` and :meth:`sample_batch` take the lock around them when there is one.
    """

    storage: NStepReturnStorage
    sampling: UniformSampling | PrioritizedSampling
    rw_lock: RWLock | None
    input_priorities: bool
    async_: bool

    def _adopt(self, parts: ReplayParts) -> None:
        self.storage = parts.storage
        self.sampling = parts.sampling
        self.rw_lock = parts.rw_lock
        self.input_priorities = parts.input_priorities
        # Shadows the class attribute rlpyt's names carry; the same value, read from the parts.
        self.async_ = parts.rw_lock is not None

    def __repr__(self) -> str:
        what = [
            "frames kept once" if isinstance(self.storage, NStepFrameStorage) else "whole observations",
            "prioritized" if isinstance(self.sampling, PrioritizedSampling) else "uniform",
        ]
        if self.async_:
            what.append("shared under a lock")
        return f"{type(self).__name__}({', '.join(what)})"

    # --- what algorithms call ---------------------------------------------------------------------

    def append_samples(self, samples: NamedArrayTuple) -> tuple[int, slice | np.ndarray]:
        """Store a ``[T, B]`` batch (or, with ``input_priorities``, ``PrioritiesSamplesToBuffer(priorities,
        samples)``), overwriting the oldest steps once full. Returns ``(T, idxs)``, the rows written."""
        priorities = None
        if "priorities" in fields_of(samples):
            if not self.input_priorities:
                raise ValueError(
                    f"{type(self).__name__} got input priorities but takes none; build it with "
                    "input_priorities=True (a prioritized replay), or append the samples alone."
                )
            priorities, samples = np.asarray(numpify_buffer(samples.priorities)), samples.samples
        if self.rw_lock is None:
            return self._append(samples, priorities)
        with self.rw_lock.write_lock:
            return self._append(samples, priorities)

    def sample_batch(self, batch_B: int, batch_T: int | None = None) -> NamedArrayTuple:
        """A training batch of ``batch_B`` entries, as torch tensors (``batch_T``: sequences only)."""
        if self.rw_lock is None:
            return self._draw(batch_B, batch_T)
        with self.rw_lock.read_lock:  # the draw copies what it returns before the lock is let go
            return self._draw(batch_B, batch_T)

    def update_batch_priorities(self, priorities: torch.Tensor | np.ndarray) -> None:
        """Priorities ``[batch_B]`` (numpy or torch, before ``** alpha``) for the entries last drawn."""
        rule = self._prioritized("update_batch_priorities")
        if isinstance(priorities, torch.Tensor):
            priorities = priorities.detach().cpu().numpy()
        if self.rw_lock is None:
            rule.update_priorities(self.storage, np.asarray(priorities))
            return
        with self.rw_lock.write_lock:
            rule.update_priorities(self.storage, np.asarray(priorities))

    def set_beta(self, beta: float) -> None:
        """The importance-sampling exponent for the next batches (DQN and R2D1 anneal it)."""
        self._prioritized("set_beta").beta = beta

    def is_weights(self) -> torch.Tensor:
        """The importance-sampling weights ``[batch_B]`` of the batch last drawn (largest 1)."""
        return torch.from_numpy(self._prioritized("is_weights").is_weights())

    def compute_returns(self, T: int) -> None:
        """Recompute the n-step returns the last ``T`` rows written complete (``append_samples`` does)."""
        self.storage.compute_returns(T)

    def init_priority_tree(self) -> None:
        """Start the priorities afresh: every slot at ``default_priority`` (rlpyt built its tree here)."""
        rule = self._prioritized("init_priority_tree")
        rule.priorities.fill(rule.default_priority**rule.alpha)
        rule.max_priority = rule.default_priority
        rule.tree.values.fill(0.0)
        rule.tree.rebuild()
        rule.appended(self.storage, 0, self.storage.T)  # refresh every slot's validity

    def _prioritized(self, what: str, attribute: bool = False) -> PrioritizedSampling:
        """The prioritized rule, or an error naming the fix (an AttributeError for attributes, so that
        ``hasattr(replay, "alpha")`` tells whether a replay is prioritized)."""
        if not isinstance(self.sampling, PrioritizedSampling):
            Error = AttributeError if attribute else TypeError
            raise Error(
                f"{what}{'' if attribute else '()'} belongs to prioritized replays, and {type(self).__name__} draws "
                "uniformly. Build a prioritized one (PrioritizedReplayBuffer, or make_replay_buffer(..., "
                "prioritized=Prioritized()))."
            )
        return self.sampling

    def _append(self, samples: NamedArrayTuple, priorities: np.ndarray | None) -> tuple[int, slice | np.ndarray]:
        raise NotImplementedError

    def _draw(self, batch_B: int, batch_T: int | None) -> NamedArrayTuple:
        raise NotImplementedError

    # --- checkpoints ------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """The storage's and the sampling rule's arrays and cursors (references; copies under the read lock
        for a shared replay, which other processes keep writing)."""
        if self.rw_lock is None:
            return self._state()
        with self.rw_lock.read_lock:
            return copy.deepcopy(self._state())

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Refill a replay built with the same settings from :meth:`state_dict`'s output."""
        if self.rw_lock is None:
            self._load_state(state)
            return
        with self.rw_lock.write_lock:
            self._load_state(state)

    def _state(self) -> dict[str, Any]:
        return dict(storage=self.storage.state_dict(), sampling=self.sampling.state_dict())

    def _load_state(self, state: dict[str, Any]) -> None:
        self.storage.load_state_dict(state["storage"])
        self.sampling.load_state_dict(state["sampling"])

    # --- rlpyt's attribute names for the parts' figures --------------------------------------------

    @property
    def samples(self) -> NamedArrayTuple:
        return self.storage.samples

    @property
    def T(self) -> int:
        return self.storage.T

    @property
    def B(self) -> int:
        return self.storage.B

    @property
    def size(self) -> int:
        return self.storage.size

    @property
    def t(self) -> int:
        return self.storage.t

    @property
    def n_step_return(self) -> int:
        return self.storage.n_step_return

    @property
    def discount(self) -> float:
        return self.storage.discount

    @property
    def off_backward(self) -> int:
        return self.storage.off_backward

    @property
    def off_forward(self) -> int:
        return self.storage.off_forward

    @property
    def samples_return_(self) -> np.ndarray:
        return self.storage.samples_return_

    @property
    def samples_done_n(self) -> np.ndarray:
        return self.storage.samples_done_n

    @property
    def samples_timeout_n(self) -> np.ndarray:
        if not self.storage.has_timeout:
            raise AttributeError("samples_timeout_n: this replay stores no timeout (its example has none).")
        return self.storage.samples_timeout_n

    @property
    def n_frames(self) -> int:
        return self._frames("n_frames").n_frames

    @property
    def samples_frames(self) -> np.ndarray:
        return self._frames("samples_frames").samples_frames

    @property
    def samples_new_frames(self) -> np.ndarray:
        return self._frames("samples_new_frames").samples_new_frames

    def _frames(self, what: str) -> NStepFrameStorage:
        if not isinstance(self.storage, NStepFrameStorage):
            raise AttributeError(f"{what}: {type(self).__name__} stores whole observations, not frames.")
        return self.storage

    @property
    def alpha(self) -> float:
        return self._prioritized("alpha", attribute=True).alpha

    @property
    def beta(self) -> float:
        return self._prioritized("beta", attribute=True).beta

    @property
    def default_priority(self) -> float:
        return self._prioritized("default_priority", attribute=True).default_priority

    @property
    def unique(self) -> bool:
        return self._prioritized("unique", attribute=True).unique

    @property
    def input_priority_shift(self) -> int:
        return self._prioritized("input_priority_shift", attribute=True).input_priority_shift
