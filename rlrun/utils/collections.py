"""Named tuples of arrays and small containers.

``namedarraytuple`` is the data model of rlrun: a namedtuple whose fields are arrays (or nested
namedarraytuples, or ``None``), where indexing and item assignment apply to every field at once, so
``samples[t, b] = env_step`` writes a whole nested structure.

Classes made here are cached by ``(typename, fields)`` and their instances pickle through a
module-level rebuild function, so they cross process boundaries under spawn and forkserver without
creating classes in any module's globals.
"""

from __future__ import annotations

import collections
import keyword
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "AttrDict",
    "namedtuple",
    "namedarraytuple",
    "namedarraytuple_like",
    "is_namedtuple",
    "is_namedtuple_class",
    "is_namedarraytuple",
    "is_namedarraytuple_class",
]

_TUPLE_CACHE: dict[tuple[str, tuple[str, ...]], type] = {}
_ARRAY_TUPLE_CACHE: dict[tuple[str, tuple[str, ...]], type] = {}


def _check_fields(typename: str, field_names: str | Iterable[str]) -> tuple[str, ...]:
    if isinstance(field_names, str):
        field_names = field_names.replace(",", " ").split()
    fields = tuple(str(f) for f in field_names)
    for f in fields:
        if not f.isidentifier() or keyword.iskeyword(f) or f.startswith("_"):
            raise ValueError(
                f"{typename}: field name {f!r} is not usable; field names must be identifiers "
                "that are not keywords and do not start with an underscore."
            )
    if len(set(fields)) != len(fields):
        raise ValueError(f"{typename}: duplicate field names in {fields}.")
    if not typename.isidentifier():
        raise ValueError(f"typename {typename!r} is not an identifier.")
    return fields


def _rebuild_namedtuple(typename: str, fields: tuple[str, ...], values: tuple) -> tuple:
    return namedtuple(typename, fields)(*values)


def _rebuild_namedarraytuple(typename: str, fields: tuple[str, ...], values: tuple) -> tuple:
    return namedarraytuple(typename, fields)(*values)


def namedtuple(typename: str, field_names: str | Iterable[str], defaults: Sequence | None = None) -> type:
    """A ``collections.namedtuple`` whose instances pickle without the class living in a module.

    Classes are cached by name and fields; ``defaults`` only applies the first time a given
    ``(typename, fields)`` is created.
    """
    fields = _check_fields(typename, field_names)
    key = (typename, fields)
    cls = _TUPLE_CACHE.get(key)
    if cls is None:
        base = collections.namedtuple(typename, fields, defaults=defaults)

        def __reduce__(self):
            return _rebuild_namedtuple, (typename, fields, tuple(self))

        cls = type(typename, (base,), {"__slots__": (), "__reduce__": __reduce__})
        cls.__module__ = __name__
        _TUPLE_CACHE[key] = cls
    return cls


class _NamedArrayTupleMixin:
    """Methods shared by every namedarraytuple class (mixed in before the namedtuple base)."""

    __slots__ = ()
    _fields: tuple[str, ...]

    def __getitem__(self, loc):
        """Index every non-None field with ``loc``; a string or int field index needs ``get``."""
        try:
            return type(self)(*(None if s is None else s[loc] for s in self))
        except IndexError as e:
            for name, s in zip(self._fields, self):
                if s is None:
                    continue
                try:
                    _ = s[loc]
                except IndexError:
                    raise IndexError(
                        f"Index {loc!r} is out of range for field {name!r} of {type(self).__name__}."
                    ) from e
            raise

    def __setitem__(self, loc, value) -> None:
        """Write ``value`` at ``loc`` into every field.

        ``value`` is either a structure with the same fields (written field by field, recursively)
        or anything else (a scalar, an array), which is written into every non-None field.
        """
        if not (isinstance(value, tuple) and getattr(value, "_fields", None) is not None):
            for s in self:
                if s is not None:
                    s[loc] = value
            return
        if value._fields != self._fields:
            raise ValueError(
                f"Cannot write {type(value).__name__}{value._fields} into "
                f"{type(self).__name__}{self._fields}: the fields differ."
            )
        for name, s, v in zip(self._fields, self, value):
            if s is None:
                if v is not None:
                    raise ValueError(f"Field {name!r} of {type(self).__name__} is None and cannot receive a value.")
                continue
            if v is None:
                continue
            try:
                s[loc] = v
            except (ValueError, TypeError) as e:
                raise type(e)(f"While writing field {name!r} of {type(self).__name__}: {e}") from e

    def __contains__(self, key) -> bool:
        """Membership tests field names, not values."""
        return key in self._fields

    def get(self, index: int):
        """Plain tuple indexing: the field at position ``index``."""
        return tuple.__getitem__(self, index)

    def items(self):
        """Pairs of (field name, value), like a dict."""
        return zip(self._fields, self)


def namedarraytuple(
    typename: str,
    field_names: str | Iterable[str],
    return_namedtuple_cls: bool = False,
) -> type:
    """A namedtuple class whose ``[]`` reads and writes every field (recursively, skipping None).

    With ``return_namedtuple_cls=True`` also returns the plain namedtuple class of the same fields.
    """
    fields = _check_fields(typename, field_names)
    key = (typename, fields)
    cls = _ARRAY_TUPLE_CACHE.get(key)
    if cls is None:
        base = collections.namedtuple(typename, fields)

        def __reduce__(self):
            return _rebuild_namedarraytuple, (typename, fields, tuple(self))

        cls = type(
            typename,
            (_NamedArrayTupleMixin, base),
            {"__slots__": (), "__reduce__": __reduce__, "_is_namedarraytuple": True},
        )
        cls.__module__ = __name__
        _ARRAY_TUPLE_CACHE[key] = cls
    if return_namedtuple_cls:
        return cls, namedtuple(typename, fields)
    return cls


def is_namedtuple_class(obj: Any) -> bool:
    return isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields")


def is_namedtuple(obj: Any) -> bool:
    """True for instances of any namedtuple, namedarraytuples included."""
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def is_namedarraytuple_class(obj: Any) -> bool:
    return isinstance(obj, type) and getattr(obj, "_is_namedarraytuple", False)


def is_namedarraytuple(obj: Any) -> bool:
    return getattr(type(obj), "_is_namedarraytuple", False)


def namedarraytuple_like(example: Any) -> Any:
    """Convert a (nested) namedtuple instance, or class, to its namedarraytuple counterpart."""
    if is_namedtuple_class(example):
        return namedarraytuple(example.__name__, example._fields)
    if not is_namedtuple(example):
        raise TypeError(f"Expected a namedtuple instance or class, got {type(example).__name__}.")
    if is_namedarraytuple(example):
        cls = type(example)
    else:
        cls = namedarraytuple(type(example).__name__, example._fields)
    return cls(*(namedarraytuple_like(v) if is_namedtuple(v) else v for v in example))


class AttrDict(dict):
    """A dict whose keys are also attributes: ``d.key is d["key"]``."""

    def __getattr__(self, name: str):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no key {name!r}.") from None

    def __setattr__(self, name: str, value) -> None:
        self[name] = value

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError:
            raise AttributeError(name) from None

    def copy(self) -> AttrDict:
        return type(self)(self)
