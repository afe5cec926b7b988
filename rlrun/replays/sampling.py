"""Rules that pick which stored steps go into a training batch.

A rule has ``sample_idxs(storage, batch_B) -> (T_idxs, B_idxs)`` and ``appended(storage, t, T)``, which
the buffer calls after each append of ``T`` rows at row ``t`` (for rules that keep per-step state).
Only steps the storage calls valid (:meth:`~rlrun.replays.n_step.NStepReturnStorage.is_valid`) are
ever drawn.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from rlrun.replays.n_step import NStepReturnStorage
from rlrun.replays.sum_tree import SumTree

__all__ = ["SamplingRule", "UniformSampling", "PrioritizedSampling"]

# Priorities below this are raised to it: a valid step with priority 0 could never be drawn again.
MIN_PRIORITY = 1e-6


class SamplingRule(Protocol):
    def sample_idxs(self, storage: NStepReturnStorage, batch_B: int) -> tuple[np.ndarray, np.ndarray]: ...

    def appended(self, storage: NStepReturnStorage, t: int, T: int) -> None: ...


def _too_few(storage: NStepReturnStorage) -> ValueError:
    return ValueError(
        f"The replay holds {storage.T if storage.full else storage.t} steps per env, too few to sample "
        f"{storage.n_step_return}-step transitions; append more samples first (for DQN, keep "
        "min_steps_learn above a few sampler batches)."
    )


class UniformSampling:
    """Every valid ``[t, b]`` of the storage is equally likely; draws with replacement.

    Uses numpy's global generator, which :func:`rlrun.utils.seed.set_seed` seeds. Wait-reset filler
    (``storage.samples_valid`` False) is rejected and drawn again.
    """

    def appended(self, storage: NStepReturnStorage, t: int, T: int) -> None:
        """Nothing to track."""

    def sample_idxs(self, storage: NStepReturnStorage, batch_B: int) -> tuple[np.ndarray, np.ndarray]:
        """``(T_idxs, B_idxs)``, each ``[batch_B]`` int64, among the storage's valid steps."""
        start, count = storage.valid_rows()
        if count < 1:
            raise _too_few(storage)
        T_idxs = (start + np.random.randint(0, count, size=batch_B)) % storage.T
        B_idxs = np.random.randint(0, storage.B, size=batch_B)
        if storage.samples_valid is None:
            return T_idxs, B_idxs
        for _ in range(20):  # filler is a small share of the steps: a few redraws suffice
            redraw = np.flatnonzero(~storage.samples_valid[T_idxs, B_idxs])
            if redraw.size == 0:
                return T_idxs, B_idxs
            T_idxs[redraw] = (start + np.random.randint(0, count, size=redraw.size)) % storage.T
            B_idxs[redraw] = np.random.randint(0, storage.B, size=redraw.size)
        # Mostly filler: draw among the valid steps directly.
        rows = (start + np.arange(count)) % storage.T
        steps = np.flatnonzero(storage.samples_valid[rows])
        if steps.size == 0:
            raise _too_few(storage)
        picked = steps[np.random.randint(0, steps.size, size=batch_B)]
        return rows[picked // storage.B], picked % storage.B


class PrioritizedSampling:
    """Proportional prioritized replay (Schaul et al., 2016): step ``i`` is drawn with probability
    ``p_i^alpha / sum_j p_j^alpha`` over the valid steps.

    - ``priorities[t, b]`` keeps ``p^alpha`` of every stored step; the :class:`SumTree` holds it for the
      valid steps and 0 for the others, so invalid steps (window or next observation not written,
      previous step or frames overwritten, wait-reset filler) are never drawn and get their priority
      back once they become valid.
    - A new step gets the largest priority given so far (``default_priority`` until a larger one is
      given), so it is likely to be trained on at least once.
    - :meth:`update_priorities` sets the priorities of the last batch drawn (e.g. ``|TD error|``);
      priorities below ``1e-6`` are raised to it so no valid step becomes impossible to draw.
    - :meth:`is_weights` of the last batch: ``(N P(i))^-beta`` divided by the batch's largest, i.e.
      ``(min_batch p^alpha / p_i^alpha)^beta``, in ``(0, 1]``; they correct the bias of the non-uniform
      draw. Set ``beta`` between draws to anneal it.
    """

    def __init__(
        self, storage: NStepReturnStorage, alpha: float = 0.6, beta: float = 0.4, default_priority: float = 1
    ) -> None:
        if alpha < 0 or beta < 0 or not default_priority > 0:
            raise ValueError(
                f"Prioritized replay needs alpha >= 0, beta >= 0 and default_priority > 0; got alpha={alpha}, "
                f"beta={beta}, default_priority={default_priority}."
            )
        self.alpha = alpha
        self.beta = beta
        self.default_priority = float(default_priority)
        self.max_priority = float(default_priority)
        self.tree = SumTree(storage.size)
        self.priorities = np.zeros((storage.T, storage.B), dtype=np.float64)
        self.last_T_idxs: np.ndarray | None = None
        self.last_B_idxs: np.ndarray | None = None
        self.last_values: np.ndarray | None = None

    def appended(self, storage: NStepReturnStorage, t: int, T: int) -> None:
        """Give the new rows the running max priority and refresh every step whose validity can have
        changed: from ``off_backward`` rows before the old cursor to ``off_forward`` after the new one."""
        self.priorities[(t + np.arange(T)) % storage.T] = self.max_priority**self.alpha
        first, end = t - storage.off_backward, t + T + storage.off_forward
        rows = np.arange(storage.T) if end - first >= storage.T else np.arange(first, end) % storage.T
        self._refresh(storage, rows[:, None], np.arange(storage.B)[None, :])

    def _refresh(self, storage: NStepReturnStorage, T_idxs: np.ndarray, B_idxs: np.ndarray) -> None:
        """Tree leaves of these steps: their priority if valid now, else 0."""
        T_idxs, B_idxs = np.broadcast_arrays(T_idxs, B_idxs)
        leaves = (T_idxs * storage.B + B_idxs).reshape(-1)
        values = np.where(storage.is_valid(T_idxs, B_idxs), self.priorities[T_idxs, B_idxs], 0.0)
        self.tree.set(leaves, values.reshape(-1))

    def sample_idxs(self, storage: NStepReturnStorage, batch_B: int) -> tuple[np.ndarray, np.ndarray]:
        """``(T_idxs, B_idxs)``, each ``[batch_B]`` int64, drawn in proportion to ``p^alpha``."""
        if not self.tree.total > 0:
            raise _too_few(storage)
        leaves, values = self.tree.sample(batch_B)
        T_idxs, B_idxs = np.divmod(leaves, storage.B)
        self.last_T_idxs, self.last_B_idxs, self.last_values = T_idxs, B_idxs, values
        return T_idxs, B_idxs

    def is_weights(self) -> np.ndarray:
        """Importance-sampling weights ``[batch_B]`` (float32) of the last batch drawn, largest 1."""
        if self.last_values is None:
            raise RuntimeError("is_weights() before any batch was drawn.")
        return ((self.last_values.min() / self.last_values) ** self.beta).astype(np.float32)

    def update_priorities(self, storage: NStepReturnStorage, priorities: Any) -> None:
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
        T_idxs, B_idxs = self.last_T_idxs, self.last_B_idxs
        # Last value wins for a step drawn twice, in both the priorities and the tree.
        last = len(p) - 1 - np.unique((T_idxs * storage.B + B_idxs)[::-1], return_index=True)[1]
        self.priorities[T_idxs[last], B_idxs[last]] = p[last] ** self.alpha
        self._refresh(storage, T_idxs[last], B_idxs[last])
