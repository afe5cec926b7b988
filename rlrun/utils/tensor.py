"""Leading-dimension bookkeeping and masked reductions for torch tensors.

Models take input shaped ``[T, B, *shape]``, ``[B, *shape]`` or ``[*shape]``. They call
``infer_leading_dims`` once, fold the leading dims into one batch dim for their layers, and call
``restore_leading_dims`` on the outputs, so the same model serves one step, a batch and a sequence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import torch

__all__ = ["infer_leading_dims", "restore_leading_dims", "valid_mean", "select_at_indexes", "to_onehot", "from_onehot"]

# One tensor, None, or a tuple or list of them: restore_leading_dims gives back the same kind.
_Tensors = TypeVar("_Tensors")


def infer_leading_dims(tensor: torch.Tensor, dim: int) -> tuple[int, int, int, tuple[int, ...]]:
    """Split ``tensor.shape`` into leading dims and the last ``dim`` data dims.

    Returns ``(lead_dim, T, B, shape)``: ``lead_dim`` is 0, 1 or 2; T and B are 1 where absent.
    """
    lead_dim = tensor.dim() - dim
    if not 0 <= lead_dim <= 2:
        raise ValueError(
            f"Expected a tensor with {dim} data dim(s) after at most 2 leading dims [T, B], got shape "
            f"{tuple(tensor.shape)} ({lead_dim} leading dims). Reshape the input to [T, B, ...], [B, ...] "
            "or unbatched, or fix the number of data dims the model declares."
        )
    T = B = 1
    shape = tuple(tensor.shape[lead_dim:])
    if lead_dim == 2:
        T, B = tensor.shape[:2]
    elif lead_dim == 1:
        B = tensor.shape[0]
    return lead_dim, T, B, shape


def restore_leading_dims(tensors: _Tensors, lead_dim: int, T: int = 1, B: int = 1) -> _Tensors:
    """Undo the folding of ``[T*B, ...]`` back to ``[T, B, ...]``, ``[B, ...]`` or ``[...]``.

    Accepts one tensor or a tuple/list of them (returns the same kind); ``None`` passes through.
    """
    if lead_dim not in (0, 1, 2):
        raise ValueError(f"lead_dim must be 0, 1 or 2 (as returned by infer_leading_dims), got {lead_dim}.")
    is_seq = isinstance(tensors, (tuple, list))
    items: Any = tensors if is_seq else (tensors,)  # tensors (or None), whatever the container
    if lead_dim == 2:
        out = [None if t is None else t.view((T, B) + tuple(t.shape[1:])) for t in items]
    elif lead_dim == 0:
        if B != 1:
            raise ValueError(f"lead_dim 0 means one unbatched input, but B={B}.")
        out = [None if t is None else t.squeeze(0) for t in items]
    else:
        out = list(items)
    restored: Any = type(items)(out) if is_seq else out[0]  # the kind of container given
    result: _Tensors = restored
    return result


def valid_mean(
    tensor: torch.Tensor, valid: torch.Tensor | None = None, dim: int | Sequence[int] | None = None
) -> torch.Tensor:
    """Mean of ``tensor`` weighted by ``valid`` (a 0/1 mask or weights), over ``dim`` (all dims if None).

    Without ``valid`` it is the plain mean. Where every weight is zero the result is 0, not NaN, so a
    batch with no valid step does not poison the loss.
    """
    dims = dim if dim is None or isinstance(dim, int) else tuple(dim)
    if valid is None:
        return tensor.mean() if dims is None else tensor.mean(dim=dims)
    valid = valid.type_as(tensor)
    # tiny, not 1, so fractional weights summing below one still divide exactly.
    tiny = torch.finfo(tensor.dtype).tiny
    if dims is None:
        return (tensor * valid).sum() / valid.sum().clamp(min=tiny)
    return (tensor * valid).sum(dim=dims) / valid.sum(dim=dims).clamp(min=tiny)


def select_at_indexes(indexes: torch.Tensor, tensor: torch.Tensor) -> torch.Tensor:
    """For each position of ``indexes``, the entry it names in the next dim of ``tensor``.

    ``indexes`` has shape ``L`` and ``tensor`` shape ``L + (n,) + R``; the result has shape ``L + R``.
    E.g. Q-values ``[B, A]`` at actions ``[B]`` give ``[B]``; distributions ``[B, A, atoms]`` give
    ``[B, atoms]``.
    """
    lead = tuple(indexes.shape)
    d = len(lead)
    if tuple(tensor.shape[:d]) != lead or tensor.dim() <= d:
        raise ValueError(
            f"select_at_indexes: indexes of shape {lead} must match the leading dims of the tensor, whose shape "
            f"is {tuple(tensor.shape)} (expected {lead} + (n, ...))."
        )
    rest = tuple(tensor.shape[d + 1 :])
    index = indexes.long().reshape(lead + (1,) + (1,) * len(rest)).expand(lead + (1,) + rest)
    return tensor.gather(d, index).squeeze(d)


_EYES: dict[tuple[int, torch.dtype, torch.device], torch.Tensor] = {}
_EYE_MAX = 1024  # classes; larger one-hots are scattered into zeros


def to_onehot(indexes: torch.Tensor, num: int, dtype: torch.dtype | None = None) -> torch.Tensor:
    """One-hot encoding along a new last dim of size ``num`` (a new tensor).

    Up to ``_EYE_MAX`` classes, rows are gathered from a cached identity matrix: one op where zeros and a
    scatter took four, and an agent encodes its previous actions on every step. An index outside
    ``[0, num)`` raises IndexError (RuntimeError above ``_EYE_MAX``, from the scatter).
    """
    dtype = indexes.dtype if dtype is None else dtype
    if num > _EYE_MAX:  # the identity would cost num**2 elements
        onehot = torch.zeros(tuple(indexes.shape) + (num,), dtype=dtype, device=indexes.device)
        return onehot.scatter_(-1, indexes.long().unsqueeze(-1), 1)
    key = (num, dtype, indexes.device)
    eye = _EYES.get(key)
    if eye is None:
        eye = _EYES[key] = torch.eye(num, dtype=dtype, device=indexes.device)
    if indexes.dim() == 1 and indexes.dtype == torch.long:  # a sampler's [B] actions: one op, no reshapes
        return eye.index_select(0, indexes)
    flat = indexes.reshape(-1)
    if flat.dtype != torch.long:
        flat = flat.long()
    return eye.index_select(0, flat).reshape(*indexes.shape, num)


def from_onehot(onehot: torch.Tensor, dim: int = -1, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Indexes of the maxima along ``dim`` (which is removed), as ``dtype`` (long when None)."""
    indexes = torch.argmax(onehot, dim=dim)
    return indexes if dtype is None else indexes.type(dtype)
