"""Numpy arrays in shared memory that every start method can hand to its children.

The bytes live in a ``multiprocessing.RawArray``: an anonymous, already-unlinked mapping, so nothing
is left in ``/dev/shm`` even when a process is killed. Forked children inherit the mapping. Spawned
and forkserver children receive it when the array is passed in the ``Process`` arguments:
``SharedArray`` pickles as (raw buffer, offset, shape, strides, dtype) rather than as a copy of its
data, so a column slice ``samples_np[:, slice_B]`` arrives as a view of the same bytes.

Outside of process start-up (``pickle.dumps``, ``torch.save``, a ``Queue``), a ``SharedArray`` pickles
as an ordinary array holding a copy of its data, as any numpy array would; ``multiprocessing`` only
lets the raw buffer travel in the arguments of a starting ``Process``.

``torch.from_numpy`` over such an array gives a tensor view of the same memory; rebuild torch views in
the child rather than pickling tensors (torch would copy non-shared storage into new shared memory).
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
from collections.abc import Sequence
from multiprocessing.context import get_spawning_popen
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

__all__ = ["SharedArray", "np_mp_array", "is_shared"]

# numpy 2 moved byte_bounds out of the top-level namespace.
try:
    from numpy.lib.array_utils import byte_bounds as _byte_bounds
except ImportError:  # numpy 1
    from numpy import byte_bounds as _byte_bounds  # type: ignore[attr-defined, no-redef, unused-ignore]


def _rebuild_shared_array(
    raw: ctypes.Array[Any], offset: int, shape: tuple[int, ...], strides: tuple[int, ...] | None, dtype: str
) -> SharedArray:
    arr = np.ndarray(shape, dtype=dtype, buffer=memoryview(raw).cast("B"), offset=offset, strides=strides)
    out: SharedArray = arr.view(SharedArray)
    out._raw = raw
    return out


class SharedArray(np.ndarray):
    """An ndarray over a ``RawArray``; views and slices keep a reference to the raw buffer."""

    _raw: Any = None

    def __array_finalize__(self, obj: np.ndarray | None) -> None:
        if obj is not None:
            self._raw = obj._raw if isinstance(obj, SharedArray) else None

    def __array_wrap__(self, out_arr: np.ndarray, context: object = None, return_scalar: bool = False) -> Any:
        # Results of arithmetic are new private arrays, not shared ones.
        out = np.asarray(out_arr)
        if return_scalar and out.ndim == 0:
            return out[()]
        return out

    def __reduce__(self) -> str | tuple[Any, ...]:
        raw = self._raw
        if raw is None or get_spawning_popen() is None or not _shares_bytes_with(self, raw):
            return np.asarray(self).__reduce__()
        base_address = ctypes.addressof(raw)
        offset = self.__array_interface__["data"][0] - base_address
        return _rebuild_shared_array, (raw, offset, self.shape, self.strides, self.dtype.str)


def _shares_bytes_with(arr: np.ndarray, raw: ctypes.Array[Any]) -> bool:
    """True when every byte ``arr`` can reach lies inside ``raw`` (copies keep ``_raw`` but not its bytes)."""
    start = ctypes.addressof(raw)
    lo, hi = _byte_bounds(arr)
    inside: bool = start <= lo and hi <= start + ctypes.sizeof(raw)
    return inside


def np_mp_array(shape: int | Sequence[int], dtype: DTypeLike) -> SharedArray:
    """A zero-filled array of ``shape`` and ``dtype`` in shared memory."""
    dtype_ = np.dtype(dtype)
    dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    nbytes = max(1, int(np.prod(dims, dtype=np.int64)) * dtype_.itemsize)
    raw = mp.RawArray(ctypes.c_byte, nbytes)
    return _rebuild_shared_array(raw, 0, dims, None, dtype_.str)


def is_shared(arr: object) -> bool:
    """True when ``arr`` is a view of shared memory made by :func:`np_mp_array`."""
    return isinstance(arr, SharedArray) and arr._raw is not None and _shares_bytes_with(arr, arr._raw)
