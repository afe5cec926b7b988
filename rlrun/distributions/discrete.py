"""Conversions between action indexes and one-hot vectors, for discrete distributions."""

from __future__ import annotations

import torch

from rlrun.utils.tensor import from_onehot, to_onehot

__all__ = ["DiscreteMixin"]


class DiscreteMixin:
    """Holds the number of actions ``dim`` and converts indexes to and from one-hot vectors.

    Agents one-hot ``prev_action`` with :meth:`to_onehot` before their models see it.
    """

    def __init__(
        self, dim: int | None, dtype: torch.dtype = torch.long, onehot_dtype: torch.dtype = torch.float
    ) -> None:
        if dim is not None and int(dim) < 1:
            raise ValueError(f"A discrete distribution needs at least one action, got dim={dim}.")
        self._dim = None if dim is None else int(dim)
        self.dtype = dtype
        self.onehot_dtype = onehot_dtype

    @property
    def dim(self) -> int | None:
        return self._dim

    def to_onehot(self, indexes: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:
        """``[...]`` integer indexes to ``[..., dim]`` one-hot vectors."""
        if self._dim is None:
            raise ValueError(f"{type(self).__name__} was built without dim: pass dim=<number of actions>.")
        return to_onehot(indexes, self._dim, dtype=dtype or self.onehot_dtype)

    def from_onehot(self, onehot: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:
        """``[..., dim]`` one-hot vectors to ``[...]`` integer indexes."""
        return from_onehot(onehot, dtype=dtype or self.dtype)
