"""Grids of settings for launching many runs: rlpyt's variant levels and the variant file of a run.

A *variant* is a nested dict of the settings that differ from a script's default config. A launch
script builds variants with :class:`VariantLevel` and :func:`make_variants`; the launcher writes each
one into its run's log folder (:func:`save_variant`); the train script reads it back
(:func:`load_variant`) and merges it into its defaults (:func:`update_config`).
See docs/experiments.md.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import tempfile
from collections import namedtuple
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["VARIANT", "VariantLevel", "make_variants", "load_variant", "save_variant", "update_config"]

# The variant's file name inside a log folder, as rlpyt wrote it (so rlpyt's folders still load).
VARIANT = "variant_config.json"

KeyPath = tuple[str, ...]


class VariantLevel(namedtuple("VariantLevel", ["keys", "values", "dir_names"])):
    """One level of a grid: settings that change together, each with its own folder name.

    - ``keys``: one key path per setting, a tuple of keys down the config,
      e.g. ``[("algo", "learning_rate"), ("sampler", "batch_B")]``.
    - ``values``: one entry per combination, each a tuple with a value per key,
      e.g. ``list(zip(learning_rates, batch_Bs))``. Values are zipped within a level, not crossed.
    - ``dir_names``: one folder name per entry of ``values``, unique within the level.

    Checked when made, so a malformed level fails in the launch script, before any run starts.
    Stored as tuples; still unpacks as ``keys, values, dir_names`` like rlpyt's namedtuple.
    """

    __slots__ = ()

    keys: tuple[KeyPath, ...]
    values: tuple[tuple[Any, ...], ...]
    dir_names: tuple[str, ...]

    def __new__(
        cls, keys: Sequence[Sequence[str]], values: Sequence[Sequence[Any]], dir_names: Sequence[str]
    ) -> VariantLevel:
        checked_keys = _check_keys(keys)
        checked_values = _check_values(values, len(checked_keys))
        checked_names = _check_dir_names(dir_names, len(checked_values))
        return super().__new__(cls, checked_keys, checked_values, checked_names)


def _check_keys(keys: Sequence[Sequence[str]]) -> tuple[KeyPath, ...]:
    if isinstance(keys, (str, bytes)) or not isinstance(keys, Iterable):
        raise TypeError(
            f"VariantLevel keys must be a list of key paths, e.g. [('algo', 'learning_rate')]; got {keys!r}."
        )
    paths = []
    for i, path in enumerate(keys):
        if isinstance(path, str):
            raise TypeError(
                f"VariantLevel keys[{i}] is the string {path!r}; each key is a tuple of keys down the config, "
                f"e.g. ('algo', {path!r}) or ({path!r},) for a top-level key."
            )
        if not isinstance(path, Iterable) or not path:
            raise TypeError(f"VariantLevel keys[{i}] must be a non-empty tuple of str keys; got {path!r}.")
        path = tuple(path)
        if not all(isinstance(k, str) for k in path):
            raise TypeError(
                f"VariantLevel keys[{i}] = {path!r}: every key must be a str (variants are stored as JSON, "
                "whose keys are strings)."
            )
        paths.append(path)
    if not paths:
        raise ValueError("VariantLevel keys is empty: give at least one key path, e.g. [('env', 'game')].")
    for i, path in enumerate(paths):
        if path in paths[:i]:
            raise ValueError(f"VariantLevel keys lists {path!r} twice (keys[{paths.index(path)}] and keys[{i}]).")
    return tuple(paths)


def _check_values(values: Sequence[Sequence[Any]], n_keys: int) -> tuple[tuple[Any, ...], ...]:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise TypeError(f"VariantLevel values must be a list of tuples, one per combination; got {values!r}.")
    entries = []
    for i, entry in enumerate(values):
        if isinstance(entry, (str, bytes, Mapping)) or not isinstance(entry, Iterable):
            raise TypeError(
                f"VariantLevel values[{i}] is {entry!r}, not a tuple: each entry holds one value per key "
                f"({n_keys} here). For a single key write values = list(zip(my_values))."
            )
        entry = tuple(entry)
        if len(entry) != n_keys:
            raise ValueError(
                f"VariantLevel values[{i}] = {entry!r} has {len(entry)} item(s) but there are {n_keys} key(s): "
                "give each entry one value per key, in the order of keys (e.g. list(zip(lrs, batch_Bs)) for "
                "two keys)."
            )
        entries.append(entry)
    if not entries:
        raise ValueError("VariantLevel values is empty: give at least one combination.")
    return tuple(entries)


def _check_dir_names(dir_names: Sequence[str], n_values: int) -> tuple[str, ...]:
    if isinstance(dir_names, (str, bytes)) or not isinstance(dir_names, Iterable):
        raise TypeError(f"VariantLevel dir_names must be a list of str, one per values entry; got {dir_names!r}.")
    names = tuple(dir_names)
    if len(names) != n_values:
        raise ValueError(
            f"VariantLevel has {n_values} values entries but {len(names)} dir_names: give one folder name per "
            "entry, e.g. dir_names = [f'lr_{lr}' for (lr,) in values]."
        )
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name.strip():
            raise TypeError(f"VariantLevel dir_names[{i}] must be a non-empty str; got {name!r}.")
        if os.path.isabs(name) or ".." in name.replace("\\", "/").split("/"):
            raise ValueError(
                f"VariantLevel dir_names[{i}] = {name!r} would leave the experiment's folder: use a relative "
                "name without '..'."
            )
        if name in names[:i]:
            raise ValueError(
                f"VariantLevel dir_names[{i}] = {name!r} repeats dir_names[{names.index(name)}]: two settings "
                "would log into one folder. Make the names unique, e.g. by formatting every value into them."
            )
    return names


def make_variants(*variant_levels: VariantLevel | Sequence[Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """Cross the levels in order: every entry of a level with every variant of the levels before it.

    Returns ``(variants, log_dirs)``: the nested dicts and their folders (the levels' ``dir_names``
    joined, first level outermost), as ``run_experiments`` takes them. Two levels of 2 and 3 entries
    make 6 variants. With no level, one empty variant in folder ``""``.
    """
    variants: list[dict[str, Any]] = [{}]
    log_dirs: list[str] = [""]
    for n, level in enumerate(variant_levels):
        if not isinstance(level, VariantLevel):
            if not isinstance(level, Sequence) or len(level) != 3:
                raise TypeError(
                    f"make_variants argument {n} is {level!r}; pass VariantLevel(keys, values, dir_names) objects."
                )
            level = VariantLevel(*level)
        variants, log_dirs = _cross(variants, log_dirs, level)
    return variants, log_dirs


def _cross(
    prev_variants: list[dict[str, Any]], prev_log_dirs: list[str], level: VariantLevel
) -> tuple[list[dict[str, Any]], list[str]]:
    variants, log_dirs = [], []
    for prev_variant, prev_log_dir in zip(prev_variants, prev_log_dirs):
        for entry, name in zip(level.values, level.dir_names):
            variant = copy.deepcopy(prev_variant)
            for path, value in zip(level.keys, entry):
                node = variant
                for i, key in enumerate(path[:-1]):
                    node = node.setdefault(key, {})
                    if not isinstance(node, dict):
                        raise ValueError(
                            f"Key path {path!r} goes through {path[: i + 1]!r}, which an earlier level set to a "
                            f"value, not a dict."
                        )
                node[path[-1]] = copy.deepcopy(value)
            variants.append(variant)
            log_dirs.append(os.path.join(prev_log_dir, name))
    if len(set(log_dirs)) != len(log_dirs):  # cannot happen with unique names per level; kept as a guard
        raise ValueError("make_variants made two variants with the same folder; make dir_names unique.")
    return variants, log_dirs


def load_variant(log_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The variant saved in ``log_dir`` (its ``variant_config.json``), for a train script to merge."""
    path = os.path.join(os.fspath(log_dir), VARIANT)
    try:
        with open(path, encoding="utf-8") as f:
            variant = json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"No {VARIANT} in {os.fspath(log_dir)!r}. run_experiments writes it before starting a run; to run a "
            "train script by hand, pass a folder holding one (save_variant({}, log_dir) makes an empty one)."
        ) from None
    if not isinstance(variant, dict):
        raise ValueError(f"{path} holds a {type(variant).__name__}, not a JSON object; it is no variant file.")
    return variant


def save_variant(variant: Mapping[str, Any], log_dir: str | os.PathLike[str]) -> str:
    """Write ``variant`` as ``log_dir/variant_config.json`` (making the folder); return the file's path.

    The file is replaced in one step, so a run reading it never sees half a file. Values must be
    JSON: numbers, strings, bools, None, lists, dicts with str keys (numpy scalars and arrays are
    converted); tuples come back as lists.
    """
    data = _jsonable(variant, "variant")
    log_dir = os.fspath(log_dir)
    os.makedirs(log_dir, exist_ok=True)
    path = os.path.join(log_dir, VARIANT)
    fd, tmp = tempfile.mkstemp(prefix=f".{VARIANT}.", dir=log_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path


def _jsonable(obj: Any, where: str) -> Any:
    """``obj`` as plain JSON types, or a TypeError naming where the first value that is not fits."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            if not isinstance(k, str):
                raise TypeError(f"{where} has key {k!r} ({type(k).__name__}); variant keys must be str.")
            out[k] = _jsonable(v, f"{where}[{k!r}]")
        return out
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v, f"{where}[{i}]") for i, v in enumerate(obj)]
    if type(obj).__module__ == "numpy" and hasattr(obj, "tolist"):  # numpy scalar or array
        return _jsonable(obj.tolist(), where)
    raise TypeError(
        f"{where} = {obj!r} ({type(obj).__name__}) cannot be stored in {VARIANT}: use JSON values (numbers, "
        "str, bool, None, lists, dicts), e.g. a class's name instead of the class."
    )


class VariantKeyError(KeyError):
    """A variant names a key that the default config does not have (a ``KeyError``, as in rlpyt)."""

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0]) if self.args else ""


def update_config(default: Mapping[str, Any], variant: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``default`` with the variant's values put in, key by key down nested dicts.

    Only the fields the variant names change. Every variant key must exist in ``default``
    (``VariantKeyError``, a ``KeyError``, naming the key path and the keys there) and a dict must
    meet a dict (``TypeError``): a typo fails the run instead of being ignored. The result's nested
    dicts are new (AttrDicts stay AttrDicts); other values are shared with ``default``.
    """
    return _update(default, variant, ())


def _update(default: Mapping[str, Any], variant: Mapping[str, Any], path: KeyPath) -> dict[str, Any]:
    new = _copy_dicts(default)
    for key, value in variant.items():
        here = (*path, key)
        if key not in new:
            close = difflib.get_close_matches(str(key), [str(k) for k in new], n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise VariantKeyError(
                f"Variant key {_show(here)} is not in the default config.{hint} Keys at "
                f"{_show(path) if path else 'the top level'}: {sorted(map(str, new))}."
            )
        if isinstance(value, Mapping) != isinstance(new[key], Mapping):
            kinds = ("a dict", "a value") if isinstance(value, Mapping) else ("a value", "a dict")
            raise TypeError(
                f"Variant gives {kinds[0]} at {_show(here)} where the default config has {kinds[1]} "
                f"({new[key]!r}); the variant must follow the default's nesting."
            )
        new[key] = _update(new[key], value, here) if isinstance(value, Mapping) else copy.deepcopy(value)
    return new


def _copy_dicts(d: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``d`` and of every dict inside it (same types where they are dicts); leaves shared."""
    new = d.copy() if isinstance(d, dict) else dict(d)
    for k, v in new.items():
        if isinstance(v, Mapping):
            new[k] = _copy_dicts(v)
    return new


def _show(path: KeyPath) -> str:
    return "".join(f"[{k!r}]" for k in path)
