"""``from rlrun.<rlpyt path> import *`` gives what ``from rlpyt.<path> import *`` gave.

rlpyt's modules had no ``__all__``, so a star import handed over the whole module namespace, imports
included (``np``, ``torch``, ``AgentStep``, ``buffer_to``, ...), and scripts used those names. rlrun's
modules declare ``__all__``. ``rlpyt_star_names.json`` (written from rlpyt's source by
``tests/compat/extract_rlpyt_star_names.py``) lists, per module, the names rlpyt's star import gave that
rlrun's does not, and where rlrun holds each. When such a module is first imported, a finder adds
those names to its ``__all__`` and resolves each one on first access, so nothing extra is imported
until a star import (or an attribute access) asks for it.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.machinery
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

__all__ = ["install", "uninstall", "star_names", "add_star_names"]

_TABLE = Path(__file__).with_name("rlpyt_star_names.json")


@functools.cache
def star_names() -> dict[str, dict[str, str]]:
    """Module -> {name: ``"module"`` or ``"module:attribute"``} for every name to add."""
    with open(_TABLE, encoding="utf-8") as f:
        table: dict[str, dict[str, str]] = json.load(f)["star_names"]
    return table


def _load(source: str) -> object:
    module_name, _, attribute = source.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attribute) if attribute else module


def add_star_names(module: ModuleType) -> None:
    """Extend ``module.__all__`` with rlpyt's extra star names, resolved lazily by ``__getattr__``."""
    extra = star_names().get(module.__name__)
    if not extra:
        return
    own = list(vars(module).get("__all__", [n for n in vars(module) if not n.startswith("_")]))
    setattr(module, "__all__", own + [name for name in extra if name not in own])  # noqa: B010
    previous: Callable[[str], object] | None = vars(module).get("__getattr__")

    def __getattr__(name: str) -> object:  # noqa: N807  (PEP 562's name)
        source = extra.get(name)
        if source == f"{module.__name__}:{name}":  # the table is stale: the name left this module
            source = None
        if source is None:
            if previous is not None:
                return previous(name)
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
        value = _load(source)
        setattr(module, name, value)
        return value

    setattr(module, "__getattr__", __getattr__)  # noqa: B010


class _ExtendingLoader(importlib.abc.Loader):
    """Runs the real loader, then adds the star names to the module it made."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        add_star_names(module)


class _StarNamesFinder(importlib.abc.MetaPathFinder):
    """Finds rlrun's modules that rlpyt star-imported the way the path finder does, with the loader wrapped."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("rlrun.") or fullname not in star_names():
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _ExtendingLoader(spec.loader)
        return spec


def uninstall() -> None:
    """Take the finder off ``sys.meta_path`` (modules imported from then on keep their own ``__all__``);
    ``tests/compat/extract_rlpyt_star_names.py`` does, to see what rlrun's modules give by themselves."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _StarNamesFinder)]


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once), and extend modules imported before."""
    if not any(isinstance(f, _StarNamesFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _StarNamesFinder())
    for name in star_names():
        module = sys.modules.get(name)
        if module is not None and "__getattr__" not in vars(module):
            add_star_names(module)
