"""Small helpers for minibatch loops and for code that works on numpy arrays and torch tensors alike.

rlpyt's module path and names: ``iterate_mb_idxs``, ``zeros``, ``empty``, ``extract_sequences``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch

__all__ = ["iterate_mb_idxs", "zeros", "empty", "extract_sequences"]


def iterate_mb_idxs(
    data_length: int,
    minibatch_size: int,
    shuffle: bool = False,
    rng: np.random.Generator | None = None,
) -> Iterator[slice | np.ndarray]:
    """Yield the indexes of each full minibatch of ``data_length`` items, for ``for idxs in ...:`` loops.

    Without ``shuffle`` each minibatch is a ``slice`` of consecutive items; with it, an int array taken
    from one permutation of ``range(data_length)`` (drawn from ``rng``, or numpy's global generator as in
    rlpyt). Only full minibatches are yielded: the last ``data_length % minibatch_size`` items (of the
    permutation, when shuffled) are left out.
    """
    if minibatch_size < 1:
        raise ValueError(f"minibatch_size must be at least 1, got {minibatch_size}.")
    n_batches = max(int(data_length), 0) // int(minibatch_size)
    order = None
    if shuffle:
        order = rng.permutation(data_length) if rng is not None else np.random.permutation(data_length)
    for i in range(n_batches):
        batch = slice(i * minibatch_size, (i + 1) * minibatch_size)
        yield batch if order is None else order[batch]


def _is_torch_dtype(dtype: Any) -> bool:
    # torch also takes Python's number types (float -> float64, ...), so these give tensors, as in rlpyt.
    return isinstance(dtype, torch.dtype) or any(dtype is t for t in (bool, int, float, complex))


def zeros(shape: int | Sequence[int], dtype: Any) -> torch.Tensor | np.ndarray:
    """Zeros of ``shape``: a torch tensor for a torch dtype (or Python's ``float``, ``int``, ``bool``,
    ``complex``), else a numpy array (a numpy dtype, type or dtype name)."""
    if _is_torch_dtype(dtype):
        return torch.zeros(shape, dtype=dtype)
    return np.zeros(shape, dtype=dtype)


def empty(shape: int | Sequence[int], dtype: Any) -> torch.Tensor | np.ndarray:
    """Uninitialised storage of ``shape``; tensor or numpy array chosen by ``dtype`` as in :func:`zeros`."""
    if _is_torch_dtype(dtype):
        return torch.empty(shape, dtype=dtype)
    return np.empty(shape, dtype=dtype)


def extract_sequences(
    array_or_tensor: np.ndarray | torch.Tensor,
    T_idxs: Sequence[int] | np.ndarray | torch.Tensor,
    B_idxs: Sequence[int] | np.ndarray | torch.Tensor,
    T: int,
) -> np.ndarray | torch.Tensor:
    """Cut ``len(B_idxs)`` sequences of length ``T`` out of a ``[L, B, ...]`` array or tensor.

    Sequence ``i`` holds rows ``T_idxs[i], T_idxs[i] + 1, ...`` of column ``B_idxs[i]``; the result has
    shape ``[T, len(B_idxs), ...]`` and the input's type, dtype and device. Row indexes wrap around the
    leading dim, as in a ring buffer: a sequence that runs past the end continues at row 0, and a
    negative start ``-k`` begins at row ``L - k``.
    """
    L = array_or_tensor.shape[0]
    if T < 0:
        raise ValueError(f"T must be >= 0, got {T}.")
    starts = np.asarray(T_idxs.cpu() if isinstance(T_idxs, torch.Tensor) else T_idxs, dtype=np.int64).reshape(-1)
    cols = np.asarray(B_idxs.cpu() if isinstance(B_idxs, torch.Tensor) else B_idxs, dtype=np.int64).reshape(-1)
    if starts.shape != cols.shape:
        raise ValueError(f"T_idxs and B_idxs must have the same length, got {starts.size} and {cols.size}.")
    if L == 0 and T > 0 and starts.size > 0:
        raise ValueError("extract_sequences: the array has no rows to take sequences from.")
    rows = (starts[None, :] + np.arange(T)[:, None]) % L  # [T, n]
    cols = np.ascontiguousarray(np.broadcast_to(cols[None, :], rows.shape))
    if isinstance(array_or_tensor, torch.Tensor):
        device = array_or_tensor.device
        return array_or_tensor[torch.from_numpy(rows).to(device), torch.from_numpy(cols).to(device)]
    picked: np.ndarray = array_or_tensor[rows, cols]
    return picked
