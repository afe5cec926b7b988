"""A named structure of spaces, whose values are namedarraytuples (e.g. Dict observations)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rlrun.spaces.base import Space
from rlrun.utils.collections import NamedArrayTuple, namedarraytuple_like

__all__ = ["Composite"]


class Composite(Space):
    """Fields ``NamedTupleCls._fields``, each described by the space at the same position."""

    def __init__(self, spaces: Sequence[Space], NamedTupleCls: type[tuple[object, ...]]) -> None:
        cls: type[NamedArrayTuple] = namedarraytuple_like(NamedTupleCls)  # refuses a class without fields
        if len(spaces) != len(cls._fields):
            raise ValueError(
                f"Composite: {len(spaces)} spaces for the {len(cls._fields)} fields {cls._fields} of {cls.__name__}."
            )
        self.spaces = tuple(spaces)
        # Made at run time: its call takes the fields, which tuple's signature does not say.
        self._NamedTupleCls: Any = cls

    @property
    def names(self) -> tuple[str, ...]:
        names: tuple[str, ...] = self._NamedTupleCls._fields
        return names

    @property
    def NamedTupleCls(self) -> type[NamedArrayTuple]:
        cls: type[NamedArrayTuple] = self._NamedTupleCls
        return cls

    @property  # a namedtuple of the fields' shapes
    def shape(self) -> NamedArrayTuple:
        return self._make(s.shape for s in self.spaces)

    @property
    def dtype(self) -> NamedArrayTuple:
        return self._make(s.dtype for s in self.spaces)

    def sample(self) -> NamedArrayTuple:
        return self._make(s.sample() for s in self.spaces)

    def null_value(self) -> NamedArrayTuple:
        return self._make(s.null_value() for s in self.spaces)

    def _make(self, values: Iterable[object]) -> NamedArrayTuple:
        # The class is made at run time (its fields are the gym space's keys), so its call is untyped.
        value: NamedArrayTuple = self._NamedTupleCls(*values)
        return value

    def seed(self, seed: int | None = None) -> None:
        for i, s in enumerate(self.spaces):
            s.seed(None if seed is None else seed + i)

    def mismatch(self, value: object) -> str | None:
        if not (isinstance(value, tuple) and hasattr(value, "_fields")):
            return f"expected a {self._NamedTupleCls.__name__}{self.names}, got a {type(value).__name__}"
        if tuple(value._fields) != tuple(self.names):
            missing = [n for n in self.names if n not in value._fields]
            extra = [n for n in value._fields if n not in self.names]
            return f"fields {tuple(value._fields)} differ from {self.names} (missing {missing}, unexpected {extra})"
        for name, space, v in zip(self.names, self.spaces, value):
            why = space.mismatch(v)
            if why is not None:
                return f"field {name!r}: {why}"
        return None

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={s!r}" for n, s in zip(self.names, self.spaces))
        return f"Composite({inner})"
