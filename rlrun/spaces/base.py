"""The space interface: what values an env emits or accepts, and their null value."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from rlrun.utils.collections import NamedArrayTuple
    from rlrun.utils.data_model import SpaceValue

__all__ = ["Space"]


class Space:
    """Describes a set of values of one shape and dtype (or a named structure of such sets)."""

    # Read-only in the interface: a Box stores one shape and dtype, a Composite computes a namedtuple of
    # its fields' (declared for the type checker only, so that a Box can keep them as plain attributes).
    if TYPE_CHECKING:

        @property
        def shape(self) -> tuple[int, ...] | NamedArrayTuple: ...

        @property
        def dtype(self) -> np.dtype | NamedArrayTuple: ...

    # Made on first use (or by seed), so subclasses need not call a base __init__.
    _rng: np.random.Generator | None = None

    def sample(self) -> SpaceValue:
        """A uniformly random value of the space (from this space's own generator)."""
        raise NotImplementedError

    def null_value(self) -> SpaceValue:
        """A fixed value of the space used to fill buffers and as ``prev_action`` at resets."""
        raise NotImplementedError

    def mismatch(self, value: object) -> str | None:
        """Why ``value`` is not in the space, in words, or None when it is."""
        raise NotImplementedError

    def contains(self, value: object) -> bool:
        return self.mismatch(value) is None

    def seed(self, seed: int | None = None) -> None:
        """Seed the generator that :meth:`sample` draws from."""
        self._rng = np.random.default_rng(seed)

    @property
    def rng(self) -> np.random.Generator:
        rng = self._rng
        if rng is None:
            rng = self._rng = np.random.default_rng()
        return rng
