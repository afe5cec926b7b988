"""Measures of the core/edge split (issue 31), printed for notes and checked by tests where a target exists.

- ``getattr`` calls with a default (``getattr(x, "name", default)``) in ``rlrun/``;
- the deepest chain of rlrun's own classes (a class counts its rlrun bases; torch, ABC, Protocol and
  other outside bases do not);
- lines in ``rlrun/`` and in the edge ``rlrun/compat/``; lines of the core that mention rlpyt;
- ``# type: ignore`` comments in the core that cite rlpyt.

Run: ``python .ci/core_metrics.py`` (imports every rlrun module for the class chains).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pathlib
import pkgutil
import sys
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1] / "rlrun"


def getattr_defaults(root: pathlib.Path = ROOT) -> list[str]:
    """``file:line`` of every ``getattr`` call with three arguments."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "getattr"
                and len(node.args) == 3
            ):
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return found


def _own_depth(cls: type, memo: dict[type, int]) -> int:
    if cls in memo:
        return memo[cls]
    bases = [b for b in cls.__bases__ if b.__module__.split(".")[0] == "rlrun"]
    memo[cls] = 1 + max((_own_depth(b, memo) for b in bases), default=0)
    return memo[cls]


def deepest_class_chains(limit: int = 5) -> list[tuple[int, str]]:
    """The ``limit`` deepest rlrun classes, as (depth, 'module.Class')."""
    import rlrun

    warnings.simplefilter("ignore")
    classes: dict[str, type] = {}
    for info in pkgutil.walk_packages(rlrun.__path__, "rlrun."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra is not installed
            continue
        for _, value in inspect.getmembers(module, inspect.isclass):
            if value.__module__.split(".")[0] == "rlrun":
                classes[f"{value.__module__}.{value.__qualname__}"] = value
    memo: dict[type, int] = {}
    depths = sorted(((_own_depth(c, memo), name) for name, c in classes.items()), reverse=True)
    return depths[:limit]


def line_counts(root: pathlib.Path = ROOT) -> dict[str, int]:
    total = edge = mentions = ignores = 0
    for path in root.rglob("*.py"):
        lines = path.read_text(encoding="utf-8").splitlines()
        total += len(lines)
        if "compat" in path.relative_to(root).parts:
            edge += len(lines)
            continue
        mentions += sum("rlpyt" in line for line in lines)
        ignores += sum("type: ignore" in line and "rlpyt" in line for line in lines)
    return dict(lines=total, edge_lines=edge, core_rlpyt_mentions=mentions, core_rlpyt_type_ignores=ignores)


def main() -> None:
    sys.path.insert(0, str(ROOT.parent))
    calls = getattr_defaults()
    print(f"getattr with a default: {len(calls)}")
    for depth, name in deepest_class_chains():
        print(f"class chain depth {depth}: {name}")
    for key, value in line_counts().items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
