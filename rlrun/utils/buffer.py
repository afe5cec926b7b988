"""Build and convert nested buffers: namedarraytuples of numpy arrays or torch tensors.

Every function here walks a structure whose leaves are arrays (or scalars), whose inner nodes are
namedtuples, and which may hold ``None`` leaves that stay ``None``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from rlrun.utils.collections import is_namedtuple, namedarraytuple_like
from rlrun.utils.shared_memory import np_mp_array

__all__ = [
    "buffer_from_example",
    "build_array",
    "np_mp_array",
    "torchify_buffer",
    "numpify_buffer",
    "buffer_to",
    "buffer_method",
    "buffer_func",
    "get_leading_dims",
]


def buffer_from_example(example: Any, leading_dims: int | tuple[int, ...], share_memory: bool = False) -> Any:
    """Zero-filled arrays shaped ``leading_dims + example.shape`` with the example's dtype.

    Namedtuples become namedarraytuples of the same fields, so the result supports
    ``buffer[t, b] = example``. Python scalars become 0-d arrays of numpy's type for them
    (float64, int64, bool). With ``share_memory=True`` the arrays live in shared memory.
    """
    if example is None:
        return None
    if is_namedtuple(example):
        cls = namedarraytuple_like(type(example))
        return cls(*(buffer_from_example(v, leading_dims, share_memory) for v in example))
    if isinstance(example, torch.Tensor):
        example = example.detach().cpu().numpy()
    arr = np.asarray(example)
    if arr.dtype == object:
        raise TypeError(
            f"Cannot build a buffer for an example of type {type(example).__name__}: its leaves must "
            "be numbers or arrays of numbers (or namedtuples of them)."
        )
    return build_array(arr, leading_dims, share_memory)


def build_array(example: np.ndarray, leading_dims: int | tuple[int, ...], share_memory: bool = False) -> np.ndarray:
    """One zero-filled array of shape ``leading_dims + example.shape`` and the example's dtype."""
    if isinstance(leading_dims, (int, np.integer)):
        leading_dims = (int(leading_dims),)
    shape = tuple(leading_dims) + tuple(example.shape)
    if share_memory:
        return np_mp_array(shape, example.dtype)
    return np.zeros(shape, dtype=example.dtype)


def torchify_buffer(buffer: Any) -> Any:
    """Torch tensors viewing the same memory as a (nested) numpy buffer; tensors pass through."""
    if buffer is None:
        return None
    if is_namedtuple(buffer):
        return type(buffer)(*(torchify_buffer(b) for b in buffer))
    if isinstance(buffer, np.ndarray):
        return torch.from_numpy(np.asarray(buffer))
    if isinstance(buffer, torch.Tensor):
        return buffer
    return torch.tensor(buffer)


def numpify_buffer(buffer: Any) -> Any:
    """Numpy arrays of a (nested) tensor buffer, sharing memory for CPU tensors."""
    if buffer is None:
        return None
    if is_namedtuple(buffer):
        return type(buffer)(*(numpify_buffer(b) for b in buffer))
    if isinstance(buffer, torch.Tensor):
        return buffer.detach().cpu().numpy()
    return buffer


def buffer_to(buffer: Any, device: torch.device | str | None = None) -> Any:
    """Move every tensor of a (nested) buffer to ``device``."""
    if buffer is None:
        return None
    if is_namedtuple(buffer):
        return type(buffer)(*(buffer_to(b, device) for b in buffer))
    if isinstance(buffer, torch.Tensor):
        return buffer.to(device)
    if isinstance(buffer, np.ndarray):
        raise TypeError("buffer_to moves torch tensors; call torchify_buffer on numpy buffers first.")
    return buffer


def buffer_method(buffer: Any, method_name: str, *args, **kwargs) -> Any:
    """Call ``leaf.method_name(*args, **kwargs)`` on every leaf, keeping the structure."""
    if buffer is None:
        return None
    if is_namedtuple(buffer):
        return type(buffer)(*(buffer_method(b, method_name, *args, **kwargs) for b in buffer))
    return getattr(buffer, method_name)(*args, **kwargs)


def buffer_func(buffer: Any, func: Callable, *args, **kwargs) -> Any:
    """Call ``func(leaf, *args, **kwargs)`` on every leaf, keeping the structure."""
    if buffer is None:
        return None
    if is_namedtuple(buffer):
        return type(buffer)(*(buffer_func(b, func, *args, **kwargs) for b in buffer))
    return func(buffer, *args, **kwargs)


def get_leading_dims(buffer: Any, n_dim: int = 1) -> tuple[int, ...]:
    """The first ``n_dim`` dims of the leaves, checked to agree across all of them."""
    dims: set[tuple[int, ...]] = set()

    def collect(b):
        if b is None:
            return
        if is_namedtuple(b):
            for x in b:
                collect(x)
            return
        dims.add(tuple(b.shape[:n_dim]))

    collect(buffer)
    if not dims:
        raise ValueError("The buffer has no array leaves.")
    if len(dims) > 1:
        raise ValueError(f"Leaves disagree on their leading {n_dim} dims: {sorted(dims)}.")
    return dims.pop()
