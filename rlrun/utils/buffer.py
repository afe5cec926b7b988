"""Build and convert nested buffers: namedarraytuples of numpy arrays or torch tensors.

Every function here walks a structure (the parameter keeps rlpyt's name, ``buffer_``) whose leaves
are arrays (or scalars), whose inner nodes are namedtuples (or plain tuples, which stay plain
tuples), and which may hold ``None`` leaves that stay ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import numpy as np
import torch

from rlrun.utils.collections import fields_of, is_namedtuple, namedarraytuple_like
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

# A (nested) buffer that buffer_to gives back with the same structure and leaf types.
_Buffer = TypeVar("_Buffer")


def buffer_from_example(
    example: Any, leading_dims: int | tuple[int, ...], share_memory: bool = False, use_NatSchema: bool | None = None
) -> Any:
    """Zero-filled arrays shaped ``leading_dims + example.shape`` with the example's dtype.

    Namedtuples become namedarraytuples of the same fields, so the result supports
    ``buffer[t, b] = example``. Python scalars become 0-d arrays of numpy's type for them
    (float64, int64, bool). With ``share_memory=True`` the arrays live in shared memory.

    ``use_NatSchema`` is rlpyt's switch to schema-based classes that survive pickling into spawned
    processes; rlrun's namedarraytuple classes always do, so any value gives the same result.
    """
    if example is None:
        return None
    if is_namedtuple(example):
        cls = namedarraytuple_like(type(example))
        return cls(*(buffer_from_example(v, leading_dims, share_memory) for v in example))
    if isinstance(example, torch.Tensor):
        example = example.detach().cpu().numpy()
    arr = np.asarray(example)
    if arr.dtype.kind not in "biufc":
        raise TypeError(
            f"Cannot build a buffer for an example leaf of type {type(example).__name__} (dtype {arr.dtype}): "
            "leaves must be numbers or arrays of numbers (or namedtuples of them). Drop the leaf or convert it."
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


def _is_node(buffer: Any) -> bool:
    return type(buffer) is tuple or is_namedtuple(buffer)


def _rebuild(node: tuple[Any, ...], contents: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(contents) if type(node) is tuple else type(node)(*contents)


def torchify_buffer(buffer_: Any) -> Any:
    """Torch tensors viewing the same memory as a (nested) numpy buffer; tensors pass through."""
    if buffer_ is None:
        return None
    if _is_node(buffer_):
        return _rebuild(buffer_, (torchify_buffer(b) for b in buffer_))
    if isinstance(buffer_, np.ndarray):
        return torch.from_numpy(np.asarray(buffer_))
    if isinstance(buffer_, torch.Tensor):
        return buffer_
    return torch.tensor(buffer_)


def numpify_buffer(buffer_: Any) -> Any:
    """Numpy arrays of a (nested) tensor buffer, sharing memory for CPU tensors."""
    # Collectors call this on the agent's outputs at every step: tensors are tested first, and the
    # children of a tuple are listed without a generator.
    if isinstance(buffer_, torch.Tensor):
        if buffer_.device.type == "cpu" and not buffer_.requires_grad:
            return buffer_.numpy()  # the common case, per sampler step: one call instead of three
        return buffer_.detach().cpu().numpy()
    if buffer_ is None:
        return None
    if _is_node(buffer_):
        return _rebuild(buffer_, [numpify_buffer(b) for b in buffer_])
    return buffer_


def buffer_to(buffer_: _Buffer, device: torch.device | str | None = None, non_blocking: bool = False) -> _Buffer:
    """Move every tensor of a (nested) buffer to ``device``.

    Tensors already there and tuples none of whose leaves moved come back as the same objects: an agent
    on the CPU calls this on every step, and rebuilding its namedtuples was most of the cost.

    ``non_blocking=True`` queues host-to-device copies behind the device's pending work instead of waiting
    for that work to finish (a blocking copy synchronises the stream). Use it only for moves to a GPU: a
    non-blocking copy to the host may be read before its values arrive.
    """
    moved: _Buffer = _buffer_to(buffer_, None if device is None else torch.device(device), non_blocking)
    return moved


def _buffer_to(buffer_: Any, device: torch.device | None, non_blocking: bool = False) -> Any:
    if isinstance(buffer_, torch.Tensor):
        return buffer_ if buffer_.device == device else buffer_.to(device, non_blocking=non_blocking)
    if buffer_ is None:
        return None
    if _is_node(buffer_):
        moved = [_buffer_to(b, device, non_blocking) for b in buffer_]
        if all(m is b for m, b in zip(moved, buffer_)):
            return buffer_
        return _rebuild(buffer_, moved)
    if isinstance(buffer_, np.ndarray):
        raise TypeError("buffer_to moves torch tensors; call torchify_buffer on numpy buffers first.")
    return buffer_


def buffer_method(buffer_: Any, method_name: str, *args: object, **kwargs: object) -> Any:
    """Call ``leaf.method_name(*args, **kwargs)`` on every leaf, keeping the structure."""
    if buffer_ is None:
        return None
    if _is_node(buffer_):
        return _rebuild(buffer_, (buffer_method(b, method_name, *args, **kwargs) for b in buffer_))
    return getattr(buffer_, method_name)(*args, **kwargs)


def buffer_func(buffer_: Any, func: Callable[..., object], *args: object, **kwargs: object) -> Any:
    """Call ``func(leaf, *args, **kwargs)`` on every leaf, keeping the structure."""
    if buffer_ is None:
        return None
    if _is_node(buffer_):
        return _rebuild(buffer_, (buffer_func(b, func, *args, **kwargs) for b in buffer_))
    return func(buffer_, *args, **kwargs)


def get_leading_dims(buffer_: object, n_dim: int = 1) -> tuple[int, ...] | None:
    """The first ``n_dim`` dims of the leaves, checked to agree across all of them (None for None)."""
    if buffer_ is None:
        return None
    dims: dict[tuple[int, ...], str] = {}  # leading dims -> path of the first leaf that has them

    def collect(b: Any, path: str) -> None:
        if b is None:
            return
        if _is_node(b):
            names = fields_of(b) or [str(i) for i in range(len(b))]
            for name, x in zip(names, b):
                collect(x, f"{path}.{name}")
            return
        dims.setdefault(tuple(b.shape[:n_dim]), path)

    collect(buffer_, type(buffer_).__name__)
    if not dims:
        raise ValueError("get_leading_dims: the buffer has no array leaves (all of them are None).")
    if len(dims) > 1:
        found = ", ".join(f"{d} at {path}" for d, path in dims.items())
        raise ValueError(
            f"get_leading_dims: the leaves disagree on their leading {n_dim} dim(s): {found}. "
            "Every array of a [T, B] buffer must share its leading dims."
        )
    return next(iter(dims))
