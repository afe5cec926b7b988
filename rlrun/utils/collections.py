"""Named tuples of arrays and small containers.

``namedarraytuple`` is the data model of rlrun: a namedtuple whose fields are arrays (or nested
namedarraytuples, or ``None``), where indexing and item assignment apply to every field at once, so
``samples[t, b] = env_step`` writes a whole nested structure.

Classes made here are cached by ``(typename, fields)``. Both the classes and their instances pickle
(a class pickles as its kind, name and fields and is looked up or re-created on load), so they cross
process boundaries under spawn and forkserver without any class living in a module's globals.
"""

from __future__ import annotations

import collections
import copyreg
import keyword
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

__all__ = [
    "AttrDict",
    "NamedArrayTuple",
    "namedtuple",
    "namedarraytuple",
    "namedarraytuple_like",
    "is_namedtuple",
    "is_namedtuple_class",
    "is_namedarraytuple",
    "is_namedarraytuple_class",
    "fields_of",
    "optional_field",
    "RESERVED_NAMES",
]

_TUPLE_CACHE: dict[tuple[str, tuple[str, ...]], type] = {}
_ARRAY_TUPLE_CACHE: dict[tuple[str, tuple[str, ...]], type] = {}
# Methods of namedarraytuples that a field of the same name would hide.
RESERVED_NAMES: tuple[str, ...] = ("get", "items")
_RESERVED_FIELDS = RESERVED_NAMES


class _CachedTupleMeta(type):
    """Metaclass of the cached classes, so that pickle can rebuild a class from its name and fields.

    Pickle normally stores a class as a reference ``module.qualname``, which fails for classes that
    are not module attributes; the reducer registered below stores ``(kind, typename, fields)``.
    """


def _reduce_class(cls: Any) -> tuple[Callable[..., _CachedTupleMeta], tuple[object, ...]]:
    if issubclass(cls, NamedArrayTuple):
        return _rebuild_class, ("namedarraytuple", cls.__name__, tuple(cls._fields), None)
    defaults = tuple(cls._field_defaults[f] for f in cls._fields if f in cls._field_defaults)
    return _rebuild_class, ("namedtuple", cls.__name__, tuple(cls._fields), defaults or None)


def _rebuild_class(
    kind: str, typename: str, fields: tuple[str, ...], defaults: tuple[object, ...] | None
) -> _CachedTupleMeta:
    cls: _CachedTupleMeta = (
        namedarraytuple(typename, fields)
        if kind == "namedarraytuple"
        else namedtuple(typename, fields, defaults=defaults)
    )
    return cls


copyreg.pickle(_CachedTupleMeta, _reduce_class)


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


def namedtuple(typename: str, field_names: str | Iterable[str], defaults: Sequence[object] | None = None) -> Any:
    """A ``collections.namedtuple`` that pickles (class and instances) without living in a module.

    Classes are cached by name and fields; ``defaults`` only applies the first time a given
    ``(typename, fields)`` is created.
    """
    fields = _check_fields(typename, field_names)
    key = (typename, fields)
    cls = _TUPLE_CACHE.get(key)
    if cls is None:
        base = collections.namedtuple(typename, fields, defaults=defaults)  # type: ignore[misc]  # made at run time
        cls = _CachedTupleMeta(typename, (base,), {"__slots__": ()})
        cls.__module__ = __name__
        _TUPLE_CACHE[key] = cls
    return cls


class NamedArrayTuple(tuple[Any, ...]):
    """The base of every namedarraytuple class, put before its namedtuple base; for annotations,
    ``isinstance`` checks and the methods all of them share. Fields are read as attributes."""

    __slots__ = ()
    _fields: tuple[str, ...]

    if TYPE_CHECKING:  # fields are made per class; to the type checker any attribute is a field

        def __getattr__(self, name: str) -> Any: ...

    def __getitem__(self, loc: Any) -> Any:
        """Index every non-None field with ``loc``; a string or int field index needs ``get``."""
        try:
            # tuple.__new__ skips the namedtuple's Python-level __new__: collectors index per env step.
            return tuple.__new__(type(self), [None if s is None else s[loc] for s in self])
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

    def __setitem__(self, loc: Any, value: Any) -> None:
        """Write ``value`` at ``loc`` into every field.

        ``value`` is either a structure with the same fields (written field by field, recursively)
        or anything else (a scalar, an array), which is written into every non-None field.
        """
        fields = fields_of(value)
        if not fields:
            for s in self:
                if s is not None:
                    s[loc] = value
            return
        if fields != self._fields:
            raise ValueError(
                f"Cannot write {type(value).__name__}{fields} into {type(self).__name__}{self._fields}: the fields differ."
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
            except (ValueError, TypeError, IndexError) as e:
                raise type(e)(f"While writing field {name!r} of {type(self).__name__}: {e}") from e

    def __contains__(self, key: object) -> bool:
        """Membership tests field names, not values."""
        return key in self._fields

    def get(self, index: int) -> Any:
        """Plain tuple indexing: the field at position ``index``."""
        return tuple.__getitem__(self, index)

    def items(self) -> Iterator[tuple[str, Any]]:
        """Pairs of (field name, value), like a dict."""
        return zip(self._fields, self)


def namedarraytuple(
    typename: str,
    field_names: str | Iterable[str],
    return_namedtuple_cls: bool = False,
    classname_suffix: bool = False,
) -> Any:
    """A namedtuple class whose ``[]`` reads and writes every field (recursively, skipping None).

    With ``return_namedtuple_cls=True`` also returns the plain namedtuple class of the same fields.
    ``classname_suffix=True`` names them ``<typename>_nat`` and ``<typename>_nt``. The field names
    ``get`` and ``items`` are refused: they would hide the methods of the same names.
    """
    fields = _check_fields(typename, field_names)
    reserved = [f for f in fields if f in _RESERVED_FIELDS]
    if reserved:
        raise ValueError(
            f"{typename}: field name(s) {reserved} would hide the namedarraytuple methods {_RESERVED_FIELDS}; "
            "rename the field(s)."
        )
    nt_typename = typename + "_nt" if classname_suffix else typename
    if classname_suffix:
        typename += "_nat"
    key = (typename, fields)
    cls = _ARRAY_TUPLE_CACHE.get(key)
    if cls is None:
        base = collections.namedtuple(typename, fields)  # type: ignore[misc]  # made at run time
        cls = _CachedTupleMeta(
            typename,
            (NamedArrayTuple, base),
            {"__slots__": (), "_is_namedarraytuple": True},
        )
        cls.__module__ = __name__
        _ARRAY_TUPLE_CACHE[key] = cls
    if return_namedtuple_cls:
        return cls, namedtuple(nt_typename, fields)
    return cls


def is_namedtuple_class(obj: object) -> bool:
    return isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields")


def is_namedtuple(obj: object) -> bool:
    """True for instances of any namedtuple, namedarraytuples included."""
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def is_namedarraytuple_class(obj: object) -> bool:
    return isinstance(obj, type) and issubclass(obj, NamedArrayTuple)


def is_namedarraytuple(obj: object) -> bool:
    return isinstance(obj, NamedArrayTuple)


def fields_of(obj: object) -> tuple[str, ...]:
    """The field names of a namedtuple (namedarraytuples included); ``()`` for anything else."""
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        fields: tuple[str, ...] = obj._fields
        return fields
    return ()


def optional_field(obj: Any, name: str) -> Any:
    """Field ``name`` of a namedtuple that has it, else None: for the fields the data model makes
    optional (``env_info.timeout``, ``samples.agent.bootstrap_value``, ``agent_info.prev_rnn_state``)."""
    return tuple.__getitem__(obj, obj._fields.index(name)) if name in fields_of(obj) else None


def namedarraytuple_like(namedtuple_or_class: object, classname_suffix: bool = False) -> Any:
    """The namedarraytuple class with the name and fields of a namedtuple instance or class.

    A namedarraytuple instance or class gives its own class back.
    """
    obj = namedtuple_or_class
    cls: Any = obj if isinstance(obj, type) else type(obj)
    if is_namedarraytuple_class(cls):
        return cls
    if not is_namedtuple_class(cls):
        raise TypeError(
            f"namedarraytuple_like needs a namedtuple or namedarraytuple (instance or class), got {cls.__name__}."
        )
    return namedarraytuple(cls.__name__, cls._fields, classname_suffix=classname_suffix)


class AttrDict(dict[str, Any]):
    """A dict whose keys are also attributes: ``d.key is d["key"]``."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no key {name!r}.") from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError:
            raise AttributeError(name) from None

    def copy(self) -> AttrDict:
        """A copy of the same class, copying nested AttrDicts too (other values are shared).

        ``__init__`` is not called again, so subclasses such as TrajInfo keep their counters.
        """
        new = type(self).__new__(type(self))
        dict.update(new, {k: v.copy() if isinstance(v, AttrDict) else v for k, v in self.items()})
        return new
