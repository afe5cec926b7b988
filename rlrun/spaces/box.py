"""Shared logic of IntBox and FloatBox: a box of values with bounds, shape and dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from rlrun.spaces.base import Space

__all__ = ["Box", "describe_value"]


def describe_value(value: Any) -> str:
    """'shape (3,), dtype float64' for arrays, the type's name for other things."""
    if isinstance(value, (np.ndarray, np.generic)):
        return f"shape {tuple(value.shape)}, dtype {value.dtype}"
    if isinstance(value, (bool, int, float)):
        return f"Python {type(value).__name__} {value!r} (shape ())"
    return f"a {type(value).__name__}"


class Box(Space):
    """Values of one shape and dtype within ``[low, high]`` (subclasses say whether high is open)."""

    def __init__(self, low, high, shape=None, dtype="float32", null_value=None) -> None:
        self.dtype = np.dtype(dtype)
        if shape is None:
            shape = np.broadcast(np.asarray(low), np.asarray(high)).shape
        elif np.isscalar(shape):
            shape = (int(shape),)
        self.shape = tuple(int(s) for s in shape)
        self.low = np.asarray(low, dtype=self.dtype) if np.ndim(low) else self.dtype.type(low)
        self.high = np.asarray(high, dtype=self.dtype) if np.ndim(high) else self.dtype.type(high)
        for name, bound in (("low", self.low), ("high", self.high)):
            if np.ndim(bound) and np.shape(bound) != self.shape:
                raise ValueError(
                    f"{type(self).__name__}: {name} has shape {np.shape(bound)}, but shape is {self.shape}."
                )
        if null_value is None:
            null_value = self._default_null()
        self._null = np.asarray(null_value, dtype=self.dtype)
        if self._null.shape != self.shape:
            self._null = np.broadcast_to(self._null, self.shape).copy()

    def _default_null(self):
        return np.zeros(self.shape, dtype=self.dtype)

    def null_value(self) -> np.ndarray:
        return self._null.copy() if self.shape else self.dtype.type(self._null)

    def _shape_mismatch(self, value) -> str | None:
        arr = np.asarray(value)
        if arr.dtype == object:
            return f"got {describe_value(value)}, expected shape {self.shape}, dtype {self.dtype}"
        if arr.shape != self.shape:
            return f"shape {tuple(arr.shape)} differs from the declared shape {self.shape} ({describe_value(value)})"
        if self.dtype.kind in "iub" and arr.dtype.kind in "fc":
            return f"dtype {arr.dtype} cannot be stored in the declared integer dtype {self.dtype} without loss"
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(low={self.low!r}, high={self.high!r}, shape={self.shape}, dtype={self.dtype})"

    def __eq__(self, other) -> bool:
        return (
            type(self) is type(other)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and np.array_equal(self.low, other.low)
            and np.array_equal(self.high, other.high)
        )

    __hash__ = None  # mutable bounds: not hashable
