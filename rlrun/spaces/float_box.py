"""Real-valued box: continuous observations and actions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from rlrun.spaces.box import Box, format_bound

__all__ = ["FloatBox"]


class FloatBox(Box):
    """Reals in ``[low, high]``; infinite bounds are allowed (sampling then draws a unit normal)."""

    def __init__(
        self,
        low: ArrayLike,
        high: ArrayLike,
        shape: int | Sequence[int] | None = None,
        null_value: ArrayLike | None = 0.0,
        dtype: DTypeLike = "float32",
    ) -> None:
        if not np.issubdtype(np.dtype(dtype), np.floating):
            raise ValueError(f"FloatBox needs a floating dtype, got {dtype!r}; use IntBox for integers.")
        super().__init__(low, high, shape=shape, dtype=dtype, null_value=null_value)
        # Bounds are arrays of the box's shape, so ``space.high[0]`` works whatever form they came in
        # (scalars with ``shape=`` are a common way to declare a box).
        self.low = np.broadcast_to(np.asarray(self.low, dtype=self.dtype), self.shape).copy()
        self.high = np.broadcast_to(np.asarray(self.high, dtype=self.dtype), self.shape).copy()

    def sample(self) -> np.ndarray:
        """Uniform where both bounds are finite, standard normal elsewhere; an array of ``shape`` (0-d for ``()``)."""
        low, high = self.low, self.high
        bounded = np.isfinite(low) & np.isfinite(high)
        out = self.rng.standard_normal(self.shape)
        out = np.where(
            bounded, self.rng.uniform(np.where(bounded, low, 0), np.where(bounded, high, 1), self.shape), out
        )
        return np.asarray(out, dtype=self.dtype)

    def mismatch(self, value: object, check_bounds: bool = False) -> str | None:
        """Shape and dtype must match; bounds are only checked with ``check_bounds`` (envs often
        declare nominal bounds that states exceed)."""
        why = self._shape_mismatch(value)
        if why is not None:
            return why
        if check_bounds:
            arr = np.asarray(value)
            if np.any(arr < self.low) or np.any(arr > self.high):
                return f"value {value!r} is outside [{format_bound(self.low)}, {format_bound(self.high)}]"
        return None
