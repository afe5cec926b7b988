"""Conversion between Gymnasium (or old gym) spaces and rlrun spaces.

Spaces are recognised by class name and attributes, so spaces of the old ``gym`` package convert
too without importing it. Dict and Tuple spaces become :class:`Composite` spaces whose values are
namedarraytuples; ``GymSpaceWrapper.convert`` and ``revert`` translate values both ways.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike

from rlrun.spaces.base import Space
from rlrun.spaces.box import Box
from rlrun.spaces.composite import Composite
from rlrun.spaces.float_box import FloatBox
from rlrun.spaces.int_box import IntBox
from rlrun.utils.collections import NamedArrayTuple, is_namedtuple, namedarraytuple

if TYPE_CHECKING:
    import gymnasium

    from rlrun.utils.data_model import SpaceValue

__all__ = ["GymSpaceWrapper", "from_gym_space", "to_gym_space", "field_name"]

# How a Dict or Tuple gym space nests: ("dict", keys, sub-keys) or ("tuple", [], sub-keys); None for a leaf.
_Keys: TypeAlias = "tuple[str, list[Hashable], list[_Keys]] | None"

# Names a namedarraytuple field cannot take (its methods).
_RESERVED = ("get", "items")


def field_name(key: object) -> str:
    """A namedtuple field name for a dict key: non-identifier characters become underscores."""
    name = re.sub(r"\W", "_", str(key)).strip("_") or "field"
    if name[0].isdigit():
        name = "f" + name
    if keyword.iskeyword(name) or name in _RESERVED:
        name += "_"
    return name


def _typename(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_\W]+", name) if part) or "Obs"


def from_gym_space(
    space: Any, name: str = "obs", null_value: ArrayLike | None = 0, force_float32: bool = True
) -> Space:
    """The rlrun space for a Gymnasium space (Box, Discrete, MultiDiscrete, MultiBinary, Dict, Tuple)."""
    kind = type(space).__name__
    if kind == "Discrete":
        start = int(getattr(space, "start", 0))  # old gym's Discrete has no start
        return IntBox(
            low=start,
            high=start + int(space.n),
            dtype="int64",
            null_value=_int_null(null_value, start, start + int(space.n)),
        )
    if kind == "MultiDiscrete":
        nvec = np.asarray(space.nvec)
        starts = np.asarray(getattr(space, "start", np.zeros_like(nvec)))  # nor has its MultiDiscrete
        return IntBox(low=starts, high=starts + nvec, shape=nvec.shape, dtype="int64")
    if kind == "MultiBinary":
        return IntBox(low=0, high=2, shape=np.atleast_1d(space.n).tolist(), dtype=space.dtype or "int8")
    if kind == "Box":
        dtype = np.dtype(space.dtype)
        if np.issubdtype(dtype, np.floating):
            if force_float32:
                dtype = np.dtype("float32")
            low, high = _compact(space.low), _compact(space.high)
            return FloatBox(low=low, high=high, shape=space.shape, dtype=dtype, null_value=null_value)
        if np.issubdtype(dtype, np.integer) or dtype == np.bool_:
            low, high = _compact(space.low), _compact(space.high)
            # Gymnasium's integer Box includes high; IntBox excludes it.
            high = np.asarray(high).astype(np.int64) + 1
            return IntBox(low=low, high=high if high.ndim else int(high), shape=space.shape, dtype=dtype)
        raise TypeError(f"Box space of dtype {dtype} is not supported.")
    if kind == "Dict":
        keys = list(space.spaces.keys())
        fields = [field_name(k) for k in keys]
        if len(set(fields)) != len(fields):
            raise ValueError(f"Dict space keys {keys} collide after conversion to field names {fields}.")
        subs = [from_gym_space(space.spaces[k], f"{name}_{f}", null_value, force_float32) for k, f in zip(keys, fields)]
        return Composite(subs, namedarraytuple(_typename(name), fields))
    if kind == "Tuple":
        fields = [f"x{i}" for i in range(len(space.spaces))]
        subs = [from_gym_space(s, f"{name}_{f}", null_value, force_float32) for s, f in zip(space.spaces, fields)]
        return Composite(subs, namedarraytuple(_typename(name), fields))
    raise TypeError(
        f"Cannot convert a {kind} space: rlrun handles Box, Discrete, MultiDiscrete, MultiBinary, Dict "
        "and Tuple. Wrap the env to expose one of those."
    )


def _int_null(null_value: ArrayLike | None, low: int, high: int) -> ArrayLike | None:
    """The requested null value where the space holds it, else None (IntBox then uses ``low``)."""
    try:
        ok = bool(np.all((np.asarray(null_value) >= low) & (np.asarray(null_value) < high)))
    except TypeError:
        return None
    return null_value if ok else None


def _discrete_scalar_type(space: Any) -> type:
    """The type of a Discrete gym space's values: its dtype's scalar type, or ``int``."""
    # A foreign object: old gym's Discrete may have no dtype.
    dtype = getattr(space, "dtype", None)
    scalar_type: type = int if dtype is None else dtype.type
    return scalar_type


def _compact(bound: np.ndarray) -> int | float | np.ndarray:
    """A scalar where every element of a bound is the same, else the array."""
    bound = np.asarray(bound)
    if bound.size and np.all(bound == bound.flat[0]):
        scalar: int | float = bound.flat[0].item()
        return scalar
    return bound


def to_gym_space(space: Space) -> gymnasium.Space[Any]:
    """The Gymnasium space for an rlrun space.

    IntBox maps to Discrete (scalar), MultiBinary (int8 in ``[0, 2)``), MultiDiscrete (int64) or an
    integer Box (other dtypes, e.g. uint8 images); Composite maps to Tuple when its fields are
    ``x0, x1, ...`` (as made from a Tuple space), else to Dict.
    """
    from gymnasium import spaces as gs

    if isinstance(space, GymSpaceWrapper):
        gym_space: gymnasium.Space[Any] = space.gym_space
        return gym_space
    if isinstance(space, IntBox):
        if space.shape == () and not np.ndim(space.low) and space.dtype == np.int64:
            return gs.Discrete(space.n, start=int(space.low))
        low = np.broadcast_to(space.low, space.shape)
        high = np.broadcast_to(space.high, space.shape)
        if space.dtype == np.int8 and np.all(low == 0) and np.all(high == 2):
            return gs.MultiBinary(space.shape[0] if len(space.shape) == 1 else list(space.shape))
        if space.dtype == np.int64 and space.shape != ():
            return gs.MultiDiscrete(high - low, dtype=np.int64, start=low)
        return gs.Box(low=low, high=high - 1, shape=space.shape, dtype=space.dtype)
    if isinstance(space, FloatBox):
        return gs.Box(low=space.low, high=space.high, shape=space.shape, dtype=space.dtype)
    if isinstance(space, Composite):
        subs = [to_gym_space(s) for s in space.spaces]
        if space.names == tuple(f"x{i}" for i in range(len(subs))):
            return gs.Tuple(subs)
        return gs.Dict(dict(zip(space.names, subs)))
    raise TypeError(f"No Gymnasium space for {type(space).__name__}; expected IntBox, FloatBox or Composite.")


class GymSpaceWrapper(Space):
    """An rlrun space made from a Gymnasium space, which also translates values.

    ``convert`` turns a Gymnasium value (dict, tuple, array) into the rlrun value (namedarraytuple,
    float32 where ``force_float32``); ``revert`` turns an rlrun value back (for actions).
    """

    def __init__(
        self, space: Any, null_value: ArrayLike | None = 0, name: str = "obs", force_float32: bool = True
    ) -> None:
        self._gym_space = space
        self.space = from_gym_space(space, name=name, null_value=null_value, force_float32=force_float32)
        self._dict_keys = self._keys(space)
        # revert's fast path for Discrete spaces: the scalar type Gymnasium gets (see revert).
        self._discrete_type: type | None = None
        if self._dict_keys is None and type(space).__name__ == "Discrete":
            self._discrete_type = _discrete_scalar_type(space)

    @property
    def low(self) -> np.ndarray | np.generic:
        """The rlrun space's lower bound (a box's)."""
        low: np.ndarray | np.generic = self._box("low").low
        return low

    @property
    def high(self) -> np.ndarray | np.generic:
        """The rlrun space's upper bound (a box's)."""
        high: np.ndarray | np.generic = self._box("high").high
        return high

    def _box(self, bound: str) -> Box:
        if not isinstance(self.space, Box):
            raise AttributeError(f"{self.space!r} has no {bound}: only box spaces (IntBox, FloatBox) have bounds.")
        return self.space

    @property
    def is_array_space(self) -> bool:
        """True when values are single arrays (not Dict or Tuple structures): ``convert`` then returns an
        array of the space's dtype as it is."""
        return self._dict_keys is None

    @staticmethod
    def _keys(space: Any) -> _Keys:
        kind = type(space).__name__
        if kind == "Dict":
            return ("dict", list(space.spaces.keys()), [GymSpaceWrapper._keys(s) for s in space.spaces.values()])
        if kind == "Tuple":
            return ("tuple", [], [GymSpaceWrapper._keys(s) for s in space.spaces])
        return None

    def __getattr__(self, name: str) -> Any:
        # Attributes of the rlrun space (low, high, names, NamedTupleCls, ...) read through, as in rlpyt.
        # Only reached for names not found normally; "space" itself is refused so unpickling cannot recurse.
        if name == "space" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.space, name)

    @property
    def gym_space(self) -> Any:
        return self._gym_space

    @property
    def shape(self) -> tuple[int, ...] | NamedArrayTuple:  # read through to the wrapped space
        return self.space.shape

    @property
    def dtype(self) -> np.dtype | NamedArrayTuple:
        return self.space.dtype

    @property
    def n(self) -> int:
        if not isinstance(self.space, IntBox):
            raise AttributeError(f"{self.space!r} has no n: only an IntBox (a Discrete gym space) has one.")
        return self.space.n

    def sample(self) -> SpaceValue:
        return self.space.sample()

    def null_value(self) -> SpaceValue:
        return self.space.null_value()

    def seed(self, seed: int | None = None) -> None:
        self.space.seed(seed)

    def mismatch(self, value: object) -> str | None:
        return self.space.mismatch(value)

    def __repr__(self) -> str:
        return f"GymSpaceWrapper({self.space!r})"

    def convert(self, value: object) -> SpaceValue:
        """Gymnasium value -> rlrun value."""
        converted: SpaceValue = self._convert(value, self.space, self._dict_keys)
        return converted

    def _convert(self, value: Any, space: Any, keys: _Keys) -> Any:
        if keys is None:
            if isinstance(space, FloatBox):
                return np.asarray(value, dtype=space.dtype)
            return np.asarray(value)
        kind, dict_keys, sub_keys = keys
        cls = space.NamedTupleCls
        if kind == "dict":
            if not isinstance(value, dict):
                raise TypeError(f"Expected a dict observation with keys {dict_keys}, got a {type(value).__name__}.")
            missing = [k for k in dict_keys if k not in value]
            if missing:
                raise KeyError(
                    f"Observation dict lacks key(s) {missing} declared by its Dict space (present: {list(value)})."
                )
            items = [value[k] for k in dict_keys]
        else:
            items = list(value)
        return cls(*(self._convert(v, s, k) for v, s, k in zip(items, space.spaces, sub_keys)))

    def revert(self, value: SpaceValue) -> object:
        """rlrun value -> Gymnasium value (a numpy integer scalar of the space's dtype for Discrete spaces,
        as Gymnasium's vector envs pass: ``Discrete.contains`` checks a Python int against ``np.iinfo``,
        which cost more than the rest of the wrapper's step)."""
        scalar_type = self._discrete_type
        if scalar_type is not None:  # once per env step
            return value if type(value) is scalar_type else scalar_type(int(value))
        return self._revert(value, self._gym_space, self._dict_keys)

    def _revert(self, value: Any, gym_space: Any, keys: _Keys) -> Any:
        if keys is None:
            if type(gym_space).__name__ == "Discrete":
                return _discrete_scalar_type(gym_space)(int(value))
            return np.asarray(value, dtype=gym_space.dtype)
        kind, dict_keys, sub_keys = keys
        if not is_namedtuple(value):
            raise TypeError(f"Expected a namedtuple action, got a {type(value).__name__}.")
        if kind == "dict":
            return {k: self._revert(v, gym_space.spaces[k], sk) for k, v, sk in zip(dict_keys, value, sub_keys)}
        return tuple(self._revert(v, s, sk) for v, s, sk in zip(value, gym_space.spaces, sub_keys))
