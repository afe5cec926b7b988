"""Write ``rlrun/compat/rlpyt_star_names.json``: what ``from rlpyt.<module> import *`` gave, and where rlrun
holds each name.

rlpyt's modules had no ``__all__``, so a star import gave every public name in the module's namespace,
including what the module imported (``np``, ``torch``, ``AgentStep``, ...), and scripts came to rely on
them. This reads rlpyt's source with ``ast`` (names only) and resolves each name that rlrun's module of
the same path does not already give to an importable source. Run it again after moving a name::

    mkdir -p /tmp/rlpyt && git -C RLPYT_GIT archive HEAD | tar -x -C /tmp/rlpyt
    python tests/compat/extract_rlpyt_star_names.py /tmp/rlpyt
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import pkgutil
import sys
import warnings
from pathlib import Path
from types import ModuleType

OUT = Path(__file__).resolve().parents[2] / "rlrun" / "compat" / "rlpyt_star_names.json"
SKIPPED_PACKAGES = ("experiments", "ul", "projects")  # research code and launch scripts, not the library


def star_names(tree: ast.Module) -> dict[str, tuple[str, str | None]]:
    """Public top-level names -> (rlpyt module or package they came from, attribute or None for a module)."""
    names: dict[str, tuple[str, str | None]] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = (alias.name, None)
                else:  # ``import a.b`` binds ``a``
                    top = alias.name.split(".")[0]
                    names[top] = (top, None)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if alias.name != "*":
                    names[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = ("", node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = ("", target.id)
    return {k: v for k, v in names.items() if not k.startswith("_")}


def _without_star_names() -> None:
    """Import rlrun with its star-import hook off: the table is about what the modules give by themselves."""
    from rlrun.compat import star_imports

    star_imports.uninstall()


def rlrun_index() -> dict[str, str]:
    """Every public class and function defined in rlrun -> its module (the first one met, sorted)."""
    import rlrun

    index: dict[str, str] = {}
    for info in sorted(pkgutil.walk_packages(rlrun.__path__, "rlrun."), key=lambda i: i.name):
        if info.name.endswith("__main__") or any(p in info.name for p in (".compat", ".cli", ".experiments")):
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception:  # an optional dependency is missing
            continue
        for name, value in vars(module).items():
            if not name.startswith("_") and getattr(value, "__module__", None) == info.name:
                index.setdefault(name, info.name)
    return index


def resolve(name: str, source: tuple[str, str | None], module: ModuleType, index: dict[str, str]) -> str | None:
    """``"module"`` or ``"module:attribute"`` where rlrun has ``name``, or None."""
    origin, attribute = source
    if attribute is None:  # a module object
        target = origin.replace("rlpyt", "rlrun", 1) if origin.split(".")[0] == "rlpyt" else origin
        try:
            importlib.import_module(target)
        except ImportError:
            return None
        return target
    if origin and origin.split(".")[0] != "rlpyt":  # from a third-party package
        try:
            getattr(importlib.import_module(origin), attribute)
        except (ImportError, AttributeError):
            return None
        return f"{origin}:{attribute}"
    if hasattr(module, name):
        return f"{module.__name__}:{name}"
    if origin:
        try:
            getattr(importlib.import_module(origin.replace("rlpyt", "rlrun", 1)), attribute)
            return f"{origin.replace('rlpyt', 'rlrun', 1)}:{attribute}"
        except (ImportError, AttributeError):
            pass
    if attribute in index:
        return f"{index[attribute]}:{attribute}"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rlpyt_root", type=Path, help="a checkout of rlpyt (the folder holding rlpyt/)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    _without_star_names()
    index = rlrun_index()
    table: dict[str, dict[str, str]] = {}
    unresolved: dict[str, list[str]] = {}
    for path in sorted((args.rlpyt_root / "rlpyt").rglob("*.py")):
        parts = path.relative_to(args.rlpyt_root).with_suffix("").parts
        if parts[-1] == "__init__" or any(p in SKIPPED_PACKAGES for p in parts):
            continue
        name = ".".join(("rlrun", *parts[1:]))
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue  # a path rlrun does not serve: docs/migration.md lists those
        given: dict[str, object] = {}
        exec(f"from {name} import *", given)  # noqa: S102  (what the star import gives today)
        extra: dict[str, str] = {}
        for star_name, source in sorted(star_names(ast.parse(path.read_text())).items()):
            if star_name in given:
                continue
            found = resolve(star_name, source, module, index)
            if found is None:
                unresolved.setdefault(name, []).append(star_name)
            else:
                extra[star_name] = found
        if extra:
            table[name] = extra
    OUT.write_text(json.dumps({"star_names": table, "not_in_rlrun": unresolved}, indent=1, sort_keys=True) + "\n")
    n_extra = sum(map(len, table.values()))
    n_missing = sum(map(len, unresolved.values()))
    print(f"{OUT}: {n_extra} names in {len(table)} modules; {n_missing} names rlrun does not have", file=sys.stderr)


if __name__ == "__main__":
    main()
