"""How much of rlrun's public API is typed: prints the share of public functions fully annotated and
the share of annotations that are (or contain) ``Any``.

A function is public when neither it nor its class starts with ``_`` (``__init__`` and ``__call__``
count). Fully annotated: every parameter but ``self``/``cls`` has an annotation, and so does the
return (``__init__`` may leave it out). Run: ``python .ci/typed_share.py [package_dir]``.
"""

from __future__ import annotations

import ast
import pathlib
import sys

PUBLIC_DUNDERS = {"__init__", "__call__"}


def public_functions(tree: ast.Module):
    def visit(node, in_public_class: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                yield from visit(child, in_public_class and not child.name.startswith("_"))
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = child.name
                if in_public_class and (not name.startswith("_") or name in PUBLIC_DUNDERS):
                    yield child

    yield from visit(tree, True)


def annotations_of(fn: ast.FunctionDef) -> tuple[list, bool]:
    args = fn.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if params and params[0].arg in ("self", "cls"):
        params = params[1:]
    params += [a for a in (args.vararg, args.kwarg) if a is not None]
    notes = [p.annotation for p in params]
    needs_return = fn.name != "__init__"
    notes.append(fn.returns if needs_return or fn.returns is not None else ast.Constant(None))
    return notes, all(n is not None for n in notes)


def main(package: str = "rlrun") -> None:
    n_fn = n_typed = n_notes = n_any = 0
    for path in sorted(pathlib.Path(package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in public_functions(tree):
            notes, typed = annotations_of(fn)
            n_fn += 1
            n_typed += typed
            for note in notes:
                if note is None:
                    continue
                n_notes += 1
                n_any += "Any" in ast.unparse(note)
    print(f"public functions: {n_fn}; fully annotated: {n_typed} ({100 * n_typed / max(n_fn, 1):.1f}%)")
    print(f"annotations: {n_notes}; with Any: {n_any} ({100 * n_any / max(n_notes, 1):.1f}%)")


if __name__ == "__main__":
    main(*sys.argv[1:])
