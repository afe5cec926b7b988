"""Integer box: discrete actions, categorical observations, pixel images."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from rlrun.spaces.box import Box, format_bound

__all__ = ["IntBox"]

# Types whose values ``mismatch`` compares directly with scalar bounds (bool is not among them).
_SCALAR_INTS = frozenset({int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64})


class IntBox(Box):
    """Integers in ``[low, high)``: ``high`` is exclusive, so ``IntBox(0, n)`` has ``n`` values."""

    def __init__(
        self,
        low: ArrayLike,
        high: ArrayLike,
        shape: int | Sequence[int] | None = None,
        dtype: DTypeLike = "int32",
        null_value: ArrayLike | None = None,
    ) -> None:
        if not np.issubdtype(np.dtype(dtype), np.integer) and np.dtype(dtype) != np.bool_:
            raise ValueError(f"IntBox needs an integer dtype, got {dtype!r}; use FloatBox for real values.")
        super().__init__(low, high, shape=shape, dtype=dtype, null_value=null_value)
        if np.any(np.asarray(self.high) <= np.asarray(self.low)):
            raise ValueError(
                f"IntBox: high ({np.asarray(high)}) must exceed low ({np.asarray(low)}); high is exclusive."
            )
        # Scalar discrete actions are checked on every env step: plain ints make that check a comparison.
        self._int_bounds = (int(self.low), int(self.high)) if not self.shape and not np.ndim(self.low) else None

    def _default_null(self) -> np.ndarray:
        null: np.ndarray = np.broadcast_to(np.asarray(self.low, dtype=self.dtype), self.shape).copy()
        return null

    @property
    def n(self) -> int:
        """Number of values each element can take: ``high - low`` (needs scalar bounds)."""
        if np.ndim(self.low) or np.ndim(self.high):
            raise AttributeError("IntBox.n needs scalar bounds; this box has per-element bounds.")
        return int(self.high) - int(self.low)

    def sample(self) -> np.ndarray:
        """An array of ``shape``, 0-d when shape is ``()``, so ``torch.from_numpy`` takes any sample."""
        return np.asarray(self.rng.integers(self.low, self.high, size=self.shape, dtype=self.dtype, endpoint=False))

    def mismatch(self, value: Any) -> str | None:
        if self._int_bounds is not None and type(value) in _SCALAR_INTS:
            low, high = self._int_bounds
            if low <= value < high:
                return None
        why = self._shape_mismatch(value)
        if why is not None:
            return why
        arr = np.asarray(value)
        if np.any(arr < self.low) or np.any(arr >= self.high):
            return (
                f"value {value!r} is outside [{format_bound(self.low)}, {format_bound(self.high)}) (high is exclusive)"
            )
        return None
