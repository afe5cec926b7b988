"""Rules that pick which stored steps go into a training batch.

A rule has ``sample_idxs(storage, batch_B) -> (T_idxs, B_idxs)`` and ``appended(storage, t, T,
priorities=None)``, which the buffer calls after each append of ``T`` rows at row ``t`` (for rules that
keep per-step state). Only steps the storage calls valid
(:meth:`~rlrun.replays.storage.NStepReturnStorage.is_valid`) are ever drawn.

Sequence replays draw the first step of ``seq_len`` consecutive steps, and only at rows that are a
multiple of ``interval`` (where the recurrent state was stored): both rules take these two numbers,
which are 1 for single transitions.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import torch

from rlrun.replays.state import copy_into
from rlrun.replays.storage import NStepReturnStorage
from rlrun.replays.sum_tree import SumTree
from rlrun.utils.buffer import build_array

__all__ = ["SamplingRule", "UniformSampling", "PrioritizedSampling"]

# Priorities below this are raised to it: a valid step with priority 0 could never be drawn again.
MIN_PRIORITY = 1e-6


class SamplingRule(Protocol):
    def sample_idxs(self, storage: NStepReturnStorage, batch_B: int) -> tuple[np.ndarray, np.ndarray]: ...

    def appended(self, storage: NStepReturnStorage, t: int, T: int, priorities: np.ndarray | None = None) -> None: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


def _too_few(storage: NStepReturnStorage, seq_len: int = 1) -> ValueError:
    what = f"{storage.n_step_return}-step transitions" + (f" in sequences of {seq_len}" if seq_len > 1 else "")
    return ValueError(
        f"The replay holds {storage.T if storage.full else storage.t} steps per env, too few to sample "
        f"{what}; append more samples first (for DQN and R2D1, keep min_steps_learn above a few sampler "
        "batches)."
    )


class UniformSampling:
    """Every valid ``[t, b]`` of the storage is equally likely; draws with replacement.

    With ``seq_len > 1`` a row is valid when the ``seq_len`` steps from it are; with ``interval > 1``
    only rows that are multiples of it are drawn (the storage's ``T`` must be a multiple of it).
    Uses numpy's global generator, which :func:`rlrun.utils.seed.set_seed` seeds. Wait-reset filler
    (``storage.samples_valid`` False) is rejected and drawn again.
    """

    def __init__(self, interval: int = 1, seq_len: int = 1) -> None:
        if interval < 1 or seq_len < 1:
            raise ValueError(f"interval and seq_len must be at least 1, got {interval} and {seq_len}.")
        self.interval = interval
        self.seq_len = seq_len

    def appended(self, storage: NStepReturnStorage, t: int, T: int, priorities: np.ndarray | None = None) -> None:
        """Nothing to track; priorities have no use here and are refused."""
        if priorities is not None:
            raise ValueError(
                "A uniform replay got input priorities; build a prioritized one (prioritized=Prioritized("
                "input_priorities=True) in make_replay_buffer), or append the samples alone."
            )

    def state_dict(self) -> dict[str, Any]:
        """Nothing to keep: draws come from numpy's global generator, which a checkpoint keeps."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass

    def sample_idxs(
        self, storage: NStepReturnStorage, batch_B: int, seq_len: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(T_idxs, B_idxs)``, each ``[batch_B]`` int64, among the storage's valid starts
        (``seq_len`` replaces the rule's for this draw)."""
        L = self.seq_len if seq_len is None else seq_len
        start, count = storage.valid_rows()
        # Valid starts: rows start + first + k * interval, k < n (aligned to the interval, whole sequence valid).
        first = (-start) % self.interval
        n = max(0, -(-(count - (L - 1) - first) // self.interval))
        if n < 1:
            raise _too_few(storage, L)

        def draw(size: int) -> tuple[np.ndarray, np.ndarray]:
            T_idxs = (start + first + self.interval * np.random.randint(0, n, size=size)) % storage.T
            return T_idxs, np.random.randint(0, storage.B, size=size)

        T_idxs, B_idxs = draw(batch_B)
        if storage.samples_valid is None:
            return T_idxs, B_idxs
        for _ in range(20):  # filler is a small share of the steps: a few redraws suffice
            redraw = np.flatnonzero(~storage.samples_valid[T_idxs, B_idxs])
            if redraw.size == 0:
                return T_idxs, B_idxs
            T_idxs[redraw], B_idxs[redraw] = draw(redraw.size)
        # Mostly filler: draw among the valid starts directly.
        rows = (start + first + self.interval * np.arange(n)) % storage.T
        steps = np.flatnonzero(storage.samples_valid[rows])
        if steps.size == 0:
            raise _too_few(storage, L)
        picked = steps[np.random.randint(0, steps.size, size=batch_B)]
        return rows[picked // storage.B], picked % storage.B


class PrioritizedSampling:
    """Proportional prioritized replay (Schaul et al., 2016): step ``i`` is drawn with probability
    ``p_i^alpha / sum_j p_j^alpha`` over the valid steps.

    - ``priorities[s, b]`` keeps ``p^alpha`` of every slot: a stored step, or with ``interval > 1``
      the sequence starting at row ``s * interval``. The :class:`SumTree` holds it for the valid slots
      (the whole ``seq_len`` steps valid) and 0 for the others, so invalid steps (window or next
      observation not written, previous step or frames overwritten, wait-reset filler) are never
      drawn and get their priority back once they become valid.
    - A new slot gets the largest priority given so far (``default_priority`` until a larger one is
      given), so it is likely to be trained on at least once. Priorities can also come with the
      samples (:meth:`appended`'s ``priorities``, R2D1's input priorities).
    - :meth:`update_priorities` sets the priorities of the last batch drawn (e.g. ``|TD error|``);
      priorities below ``1e-6`` are raised to it so no valid step becomes impossible to draw.
    - ``unique=True`` draws without replacement (rlpyt's ``unique``): each batch holds ``batch_B``
      different slots, so it needs at least that many valid ones.
    - :meth:`is_weights` of the last batch: ``(N P(i))^-beta`` divided by the batch's largest, i.e.
      ``(min_batch p^alpha / p_i^alpha)^beta``, in ``(0, 1]``; they correct the bias of the non-uniform
      draw. Set ``beta`` between draws to anneal it.
    """

    def __init__(
        self,
        storage: NStepReturnStorage,
        alpha: float = 0.6,
        beta: float = 0.4,
        default_priority: float = 1,
        interval: int = 1,
        seq_len: int = 1,
        input_priority_shift: int = 0,
        share_memory: bool = False,
        unique: bool = False,
    ) -> None:
        if alpha < 0 or beta < 0 or not default_priority > 0:
            raise ValueError(
                f"Prioritized replay needs alpha >= 0, beta >= 0 and default_priority > 0; got alpha={alpha}, "
                f"beta={beta}, default_priority={default_priority}."
            )
        if interval < 1 or seq_len < 1 or storage.T % interval:
            raise ValueError(
                f"interval and seq_len must be at least 1 and interval must divide the storage's T={storage.T}; "
                f"got interval={interval}, seq_len={seq_len}."
            )
        self.alpha = alpha
        self.beta = beta
        self.default_priority = float(default_priority)
        # Shared with the buffer's other processes when the storage is (asynchronous runs).
        self._max_priority = build_array(np.zeros((), np.float64), 1, share_memory)
        self.max_priority = float(default_priority)
        self.interval = interval
        self.seq_len = seq_len
        self.input_priority_shift = input_priority_shift
        self.unique = unique
        self.n_slots = storage.T // interval
        self.tree = SumTree(self.n_slots * storage.B, share_memory=share_memory)
        self.priorities = build_array(np.zeros((), np.float64), (self.n_slots, storage.B), share_memory)
        self.last_T_idxs: np.ndarray | None = None
        self.last_B_idxs: np.ndarray | None = None
        self.last_values: np.ndarray | None = None

    @property
    def max_priority(self) -> float:
        """The largest priority given so far (``default_priority`` at first); new steps enter with it."""
        return float(self._max_priority[0])

    @max_priority.setter
    def max_priority(self, value: float) -> None:
        self._max_priority[0] = value

    def appended(self, storage: NStepReturnStorage, t: int, T: int, priorities: np.ndarray | None = None) -> None:
        """Give the new slots the running max priority and refresh every slot whose validity can have
        changed (rows from ``off_backward + seq_len - 1`` before the old cursor to ``off_forward`` after
        the new one). ``priorities`` (before ``** alpha``; optional; ``[B]`` for all new slots alike, or
        ``[T, B]``, one per row written, of which the slots' first rows are taken) go to the slots
        ``input_priority_shift`` before each new one: the sequence whose training steps these samples
        end (R2D1's input priorities)."""
        rows = np.arange(t + (-t) % self.interval, t + T, self.interval)  # the new rows that start a slot
        slots = (rows // self.interval) % self.n_slots
        self.priorities[slots] = self.max_priority**self.alpha
        if priorities is not None and slots.size:
            p = np.asarray(priorities, dtype=np.float64)
            if p.shape == (T, storage.B):
                p = p[rows - t]
            if p.shape not in ((storage.B,), (len(slots), storage.B)) or not np.all(np.isfinite(p)):
                raise ValueError(
                    f"Input priorities must be finite, one per env ([{storage.B}]) or per step written "
                    f"([{T}, {storage.B}]); got shape {p.shape}."
                )
            p = np.maximum(p, MIN_PRIORITY)
            self.max_priority = max(self.max_priority, float(p.max()))
            self.priorities[(slots - self.input_priority_shift) % self.n_slots] = p**self.alpha
        first_row = t - storage.off_backward - (self.seq_len - 1)
        end_row = t + T + storage.off_forward
        first, end = first_row // self.interval, -(-end_row // self.interval)
        slots = np.arange(self.n_slots) if end - first >= self.n_slots else np.arange(first, end) % self.n_slots
        self._refresh(storage, slots[:, None], np.arange(storage.B)[None, :])

    def _refresh(self, storage: NStepReturnStorage, slots: np.ndarray, B_idxs: np.ndarray) -> None:
        """Tree leaves of these slots: their priority if valid now, else 0."""
        slots, B_idxs = np.broadcast_arrays(slots, B_idxs)
        leaves = (slots * storage.B + B_idxs).reshape(-1)
        valid = storage.is_valid(slots * self.interval, B_idxs, self.seq_len)
        values = np.where(valid, self.priorities[slots, B_idxs], 0.0)
        self.tree.set(leaves, values.reshape(-1))

    def sample_idxs(self, storage: NStepReturnStorage, batch_B: int) -> tuple[np.ndarray, np.ndarray]:
        """``(T_idxs, B_idxs)``, each ``[batch_B]`` int64, drawn in proportion to ``p^alpha``."""
        if not self.tree.total > 0:
            raise _too_few(storage, self.seq_len)
        leaves, values = self._draw_unique(batch_B) if self.unique else self.tree.sample(batch_B)
        slots, B_idxs = np.divmod(leaves, storage.B)
        self.last_T_idxs, self.last_B_idxs, self.last_values = slots, B_idxs, values
        return slots * self.interval, B_idxs

    def _draw_unique(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``n`` different leaves, each draw in proportion to its value among those not yet drawn."""
        if np.count_nonzero(self.tree.values) < n:
            raise ValueError(
                f"unique=True draws {n} different steps, but only {np.count_nonzero(self.tree.values)} can be "
                "drawn now; draw smaller batches, start learning later, or leave unique=False."
            )
        leaves, values = self.tree.sample(n)
        for _ in range(100):
            leaves, first = np.unique(leaves, return_index=True)
            values = values[first]
            if len(leaves) >= n:
                break
            # Redraw twice the shortfall: with skewed priorities most redraws repeat a leaf already drawn.
            more, more_values = self.tree.sample(2 * (n - len(leaves)))
            leaves, values = np.concatenate([leaves, more]), np.concatenate([values, more_values])
        else:
            raise RuntimeError(f"unique=True: {n} different steps not drawn in 100 rounds (priorities too skewed).")
        keep = np.random.permutation(len(leaves))[:n]  # np.unique sorted them
        return leaves[keep], values[keep]

    def state_dict(self) -> dict[str, Any]:
        """Priorities, the sum tree, the running max, beta, and the last batch drawn (whose priorities
        the next update sets)."""
        return dict(
            beta=self.beta,
            max_priority=self.max_priority,
            priorities=self.priorities,
            tree=self.tree.tree,
            last=(self.last_T_idxs, self.last_B_idxs, self.last_values),
        )

    def load_state_dict(self, state: dict[str, Any]) -> None:
        copy_into(self.priorities, state["priorities"], "priorities")
        copy_into(self.tree.tree, state["tree"], "sum tree")  # its leaves are a view of it
        self.beta = float(state["beta"])
        self.max_priority = float(state["max_priority"])
        self.last_T_idxs, self.last_B_idxs, self.last_values = (
            None if a is None else np.array(a) for a in state["last"]
        )

    def is_weights(self) -> np.ndarray:
        """Importance-sampling weights ``[batch_B]`` (float32) of the last batch drawn, largest 1."""
        if self.last_values is None:
            raise RuntimeError("is_weights() before any batch was drawn.")
        result: np.ndarray = ((self.last_values.min() / self.last_values) ** self.beta).astype(np.float32)
        return result

    def update_priorities(self, storage: NStepReturnStorage, priorities: torch.Tensor | np.ndarray) -> None:
        """New priorities (``[batch_B]``, e.g. ``|TD error|``) for the steps of the last batch drawn; a
        step drawn twice keeps the last value given for it."""
        if self.last_T_idxs is None or self.last_B_idxs is None:
            raise RuntimeError("update_batch_priorities() before any batch was drawn.")
        p = np.asarray(priorities, dtype=np.float64).reshape(-1)
        if p.shape != self.last_T_idxs.shape:
            raise ValueError(f"Got {p.size} priorities for a batch of {self.last_T_idxs.size} steps.")
        if not np.all(np.isfinite(p)) or np.any(p < 0):
            raise ValueError(f"Priorities must be finite and non-negative, got {p[~(np.isfinite(p) & (p >= 0))][:5]}.")
        p = np.maximum(p, MIN_PRIORITY)
        self.max_priority = max(self.max_priority, float(p.max()))
        slots, B_idxs = self.last_T_idxs, self.last_B_idxs
        # Last value wins for a slot drawn twice, in both the priorities and the tree.
        last = len(p) - 1 - np.unique((slots * storage.B + B_idxs)[::-1], return_index=True)[1]
        self.priorities[slots[last], B_idxs[last]] = p[last] ** self.alpha
        self._refresh(storage, slots[last], B_idxs[last])
