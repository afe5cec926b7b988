"""A binary sum tree over non-negative float64 values: set values in batches, draw indexes in proportion.

Prioritized replay keeps one value per stored step here. Drawing ``n`` indexes and setting ``m``
values both cost ``O(log size)`` numpy operations per level, vectorized over the batch.
"""

from __future__ import annotations

import numpy as np

from rlrun.utils.buffer import build_array

__all__ = ["SumTree"]


class SumTree:
    """``size`` non-negative values; ``sample(n)`` draws index ``i`` with probability ``value[i] / total``.

    The tree is one float64 array in heap order: node 1 is the root, node ``j`` has children
    ``2j`` and ``2j + 1``, and the values are the leaves ``capacity + i``. After each :meth:`set`,
    every ancestor of a changed leaf is recomputed as the sum of its two children rather than moved
    by a difference, so rounding errors do not accumulate: after any sequence of updates the tree
    equals the tree built from scratch from the same values, bit for bit.

    Float64 matters: in float32 the sum over a million leaves loses the small ones, and a draw can
    end on a leaf of value zero.
    """

    def __init__(self, size: int, share_memory: bool = False) -> None:
        if size < 1:
            raise ValueError(f"A SumTree needs at least one value, got size={size}.")
        self.size = int(size)
        self.capacity = 1 << (self.size - 1).bit_length()  # leaves: a power of two >= size
        self.levels = self.capacity.bit_length() - 1  # edges from the root to a leaf
        self.tree = build_array(np.zeros((), np.float64), 2 * self.capacity, share_memory)
        # The values, as a writable view; write through set() to keep the sums right.
        self.values: np.ndarray = self.tree[self.capacity : self.capacity + self.size]

    @property
    def total(self) -> float:
        """The sum of all values (the root)."""
        return float(self.tree[1])

    def __getitem__(self, idxs: np.ndarray) -> np.ndarray:
        result: np.ndarray = self.values[idxs]
        return result

    def set(self, idxs: np.ndarray, values: np.ndarray | float) -> None:
        """Set ``value[idxs] = values`` and update the sums above them. With repeated indexes the
        last value given for an index is kept."""
        idxs = np.asarray(idxs, dtype=np.int64).reshape(-1)
        if idxs.size == 0:
            return
        values = np.broadcast_to(np.asarray(values, dtype=np.float64), idxs.shape)
        if not (np.all(values >= 0) and np.all(np.isfinite(values))):
            raise ValueError(
                "SumTree values must be finite and non-negative; got "
                f"{values[~((values >= 0) & np.isfinite(values))][:5]} (a NaN or infinite TD error?)."
            )
        if idxs.min() < 0 or idxs.max() >= self.size:
            raise IndexError(
                f"SumTree index out of range [0, {self.size}): {idxs[(idxs < 0) | (idxs >= self.size)][:5]}"
            )
        # With repeated indexes keep the last value given: index of each one's last occurrence.
        last = len(idxs) - 1 - np.unique(idxs[::-1], return_index=True)[1]
        idxs, values = idxs[last], values[last]
        if idxs.size * 8 > self.capacity:  # many leaves: rebuilding every level is cheaper
            self.values[idxs] = values
            self.rebuild()
            return
        tree = self.tree
        nodes = idxs + self.capacity
        tree[nodes] = values
        for _ in range(self.levels):
            # Parents shared by several nodes are recomputed once per child, to the same sum: no dedup needed.
            nodes >>= 1
            left = nodes << 1
            tree[nodes] = tree[left] + tree[left + 1]

    def rebuild(self) -> None:
        """Recompute every sum from the leaves (after writing ``values`` directly)."""
        tree, width = self.tree, self.capacity
        while width > 1:
            tree[width // 2 : width] = tree[width : 2 * width : 2] + tree[width + 1 : 2 * width : 2]
            width //= 2

    def find(self, targets: np.ndarray) -> np.ndarray:
        """The leaf index holding each cumulative mass in ``targets`` (values in ``[0, total)``).

        The descent goes right only into a subtree with positive mass, so while the total is positive
        every index returned has a positive value, also where rounding puts a target at a boundary.
        """
        targets = np.array(targets, dtype=np.float64, copy=True).reshape(-1)
        tree = self.tree
        nodes = np.ones(targets.shape, dtype=np.int64)
        for _ in range(self.levels):
            left = 2 * nodes
            left_mass = tree[left]
            right = (targets >= left_mass) & (tree[left + 1] > 0)
            targets -= np.where(right, left_mass, 0.0)
            nodes = left + right
        return nodes - self.capacity

    def sample(self, n: int, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``n`` indexes drawn with replacement, each with probability ``value / total``, and their values.

        Uses numpy's global generator (seeded by :func:`rlrun.utils.seed.set_seed`) unless ``rng`` is given.
        """
        total = self.total
        if not total > 0:
            raise ValueError("Cannot sample from a SumTree whose values are all zero.")
        u = np.random.random(n) if rng is None else rng.random(n)
        idxs = self.find(u * total)
        return idxs, self.values[idxs]
