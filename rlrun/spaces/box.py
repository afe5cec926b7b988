"""Shared logic of IntBox and FloatBox: a box of values with bounds, shape and dtype."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from rlrun.spaces.base import Space

__all__ = ["Box", "describe_value", "format_bound"]


def describe_value(value: object) -> str:
    """'shape (3,), dtype float64' for arrays, the type's name for other things."""
    if isinstance(value, (np.ndarray, np.generic)):
        return f"shape {tuple(value.shape)}, dtype {value.dtype}"
    if isinstance(value, (bool, int, float)):
        return f"Python {type(value).__name__} {value!r} (shape ())"
    return f"a {type(value).__name__}"


def format_bound(bound: ArrayLike) -> str:
    """A bound for messages: one number where all elements agree, else a summarised array."""
    arr = np.asarray(bound)
    if arr.size and np.all(arr == arr.flat[0]):
        return repr(arr.flat[0].item())
    return np.array2string(arr, threshold=8, separator=", ")


class Box(Space):
    """Values of one shape and dtype within ``[low, high]`` (subclasses say whether high is open)."""

    shape: tuple[int, ...]  # a box has one shape and one dtype (a Composite has a structure of them)
    dtype: np.dtype

    def __init__(
        self,
        low: ArrayLike,
        high: ArrayLike,
        shape: int | Sequence[int] | None = None,
        dtype: DTypeLike = "float32",
        null_value: ArrayLike | None = None,
    ) -> None:
        self.dtype = np.dtype(dtype)
        if shape is None:
            try:
                shape = np.broadcast(np.asarray(low), np.asarray(high)).shape
            except ValueError:
                raise ValueError(
                    f"{type(self).__name__}: low has shape {np.shape(low)} and high has shape {np.shape(high)}; "
                    "give bounds of one shape (or scalars) and pass shape=."
                ) from None
        self.shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
        # Integer bounds are kept as int64: the exclusive high of a uint8 or bool box (256, 2) does not
        # fit in the box's own dtype.
        bound_dtype = self.dtype if self.dtype.kind == "f" else np.dtype(np.int64)
        self.low = np.asarray(low, dtype=bound_dtype) if np.ndim(low) else np.asarray(low, dtype=bound_dtype)[()]
        self.high = np.asarray(high, dtype=bound_dtype) if np.ndim(high) else np.asarray(high, dtype=bound_dtype)[()]
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

    @property
    def bounds(self) -> tuple[np.ndarray | np.generic, np.ndarray | np.generic]:
        """``(low, high)``."""
        return self.low, self.high

    def _default_null(self) -> np.ndarray:
        return np.zeros(self.shape, dtype=self.dtype)

    def null_value(self) -> np.ndarray:
        # A 0-d box gives a numpy scalar, which buffers and torch.as_tensor take like an array.
        null: np.ndarray = self._null.copy() if self.shape else self.dtype.type(self._null)
        return null

    def _shape_mismatch(self, value: object) -> str | None:
        try:
            arr = np.asarray(value)
        except ValueError:  # ragged nesting, e.g. a tuple of an array and a dict
            arr = np.empty(0, dtype=object)
        if arr.dtype == object:
            return f"got {describe_value(value)}, expected shape {self.shape}, dtype {self.dtype}"
        if arr.shape != self.shape:
            return f"shape {tuple(arr.shape)} differs from the declared shape {self.shape} (dtype {arr.dtype})"
        if self.dtype.kind in "iub" and arr.dtype.kind in "fc":
            return f"dtype {arr.dtype} cannot be stored in the declared integer dtype {self.dtype} without loss"
        return None

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(low={format_bound(self.low)}, high={format_bound(self.high)}, "
            f"shape={self.shape}, dtype={self.dtype})"
        )

    def __eq__(self, other: object) -> bool:
        return (
            type(self) is type(other)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and np.array_equal(self.low, other.low)
            and np.array_equal(self.high, other.high)
        )

    __hash__ = None  # type: ignore[assignment]  # mutable bounds: not hashable
