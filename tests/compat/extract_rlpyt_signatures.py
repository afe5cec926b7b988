"""Write rlpyt's public signatures as data: ``tests/compat/rlpyt_signatures.json``.

rlpyt's source is read with :mod:`ast` and never imported or copied: the data holds facts only
(module paths, class and function names, parameter names in order, their kinds, and defaults as
source text with their value where the text is a constant expression).
``tests/compat/test_rlpyt_signatures.py`` checks rlrun against it.

Usage (the data file is committed; rerun only to re-extract)::

    git clone https://github.com/astooke/rlpyt /tmp/rlpyt   # or unpack any checkout there
    python tests/compat/extract_rlpyt_signatures.py /tmp/rlpyt [--commit f04f23d...]

What a signature means here, for a class: the parameters a caller of rlpyt can pass.

- A method a class does not define is inherited: the class's linearised bases (C3, over the classes
  of rlpyt's source; bases from outside rlpyt end the walk) give the definition that applies.
- A method that passes ``*args`` or ``**kwargs`` on with ``super().<name>(...)`` (or
  ``Base.<name>(self, ...)``) takes the next definition's parameters too: after ``*args``, its
  positional parameters keep counting positions; through ``**kwargs`` alone, its parameters can only
  be given by keyword (recorded as ``keyword_only`` with ``"via": "**kwargs"``). A keyword that the
  forwarding call fixes itself (``super().__init__(ModelCls=X, **kwargs)``) is the forwarding
  method's own parameter, or is no longer the caller's to give.
- A ``*args`` or ``**kwargs`` passed on where no rlpyt definition follows (to ``object``, to
  ``torch.nn.Module``, or by a mixin checked without its partner class) is kept, marked
  ``"via": "super"``: it is not a promise to take any argument.
- A method whose body only raises ``NotImplementedError`` (or passes) is marked ``"abstract"``: its
  parameters name what overrides receive.
- Modules under ``rlpyt/tests`` and ``rlpyt/experiments/scripts`` and ``__init__.py`` files are left out.
"""

from __future__ import annotations

import argparse
import ast
import json
import operator
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

OUT = Path(__file__).with_name("rlpyt_signatures.json")
SKIP_PARTS = ("tests", "scripts")  # rlpyt/tests/**, rlpyt/experiments/scripts/**
# Methods whose names start with "_" are private, except these, which callers use.
PUBLIC_DUNDERS = ("__init__", "__call__")
# Calls whose constant arguments make a constant default (rlpyt writes int(1e6)).
CONSTANT_CALLS = {"int": int, "float": float, "dict": dict, "tuple": tuple, "list": list, "bool": bool}

BIN_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}

Json = dict[str, object]


@dataclass
class Param:
    name: str
    kind: str  # positional | keyword_only | var_positional | var_keyword
    default: str | None = None  # source text; None: no default
    value: object = None  # the default's value, where the text is a constant expression
    has_value: bool = False
    refers_to: str | None = None  # for a default that names something: its qualified name
    # "*args" or "**kwargs" when reached by forwarding; "super" for a *args or **kwargs that the method
    # only passes on to a class outside rlpyt's source (or to a mixin's partner)
    via: str | None = None
    defined_in: str | None = None  # the class whose method names it, when forwarded

    def to_json(self) -> Json:
        out: Json = {"name": self.name, "kind": self.kind}
        if self.default is not None:
            out["default"] = self.default
            if self.has_value:
                out["value"] = self.value
            elif self.refers_to:
                out["refers_to"] = self.refers_to
        if self.via == "super":
            out["via"] = self.via
        elif self.via:
            out["via"] = self.via
            out["defined_in"] = self.defined_in
        return out


@dataclass
class Method:
    name: str
    node: ast.FunctionDef
    owner: str  # qualified class name, "" for a module function
    decorators: list[str] = field(default_factory=list)

    @property
    def is_static(self) -> bool:
        return "staticmethod" in self.decorators

    @property
    def is_property(self) -> bool:
        return "property" in self.decorators or any(d.endswith(".setter") for d in self.decorators)


@dataclass
class ClassInfo:
    qualname: str  # module.Class
    module: str
    name: str
    base_exprs: list[str]
    bases: list[str]  # qualified rlpyt classes; others are dropped
    methods: dict[str, Method]


def _constant(node: ast.expr) -> tuple[bool, object]:
    """(True, value) where ``node`` is a constant expression: literals, arithmetic, int(1e6)."""
    try:
        return True, _to_json(ast.literal_eval(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in CONSTANT_CALLS:
        args = [_constant(a) for a in node.args]
        kwargs = {k.arg: _constant(k.value) for k in node.keywords if k.arg}
        if all(ok for ok, _ in args) and all(ok for ok, _ in kwargs.values()) and len(kwargs) == len(node.keywords):
            try:
                value = CONSTANT_CALLS[node.func.id](*[v for _, v in args], **{k: v for k, (_, v) in kwargs.items()})
            except (TypeError, ValueError):
                return False, None
            return True, _to_json(value)
    if isinstance(node, ast.BinOp) and type(node.op) in BIN_OPS:
        (lok, left), (rok, right) = _constant(node.left), _constant(node.right)
        if lok and rok:
            try:
                return True, _to_json(BIN_OPS[type(node.op)](left, right))
            except (TypeError, ValueError, ZeroDivisionError, OverflowError):
                return False, None
    return False, None
    return False, None


def _to_json(value: object) -> object:
    if isinstance(value, tuple | list):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _to_json(v) for k, v in value.items()}
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return value  # keep 1e5 a float; the test compares by value
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(type(value))


def _params(
    fn: ast.FunctionDef, drop_first: bool, text: str, names: dict[str, str], owner: str | None = None
) -> list[Param]:
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    out: list[Param] = []
    for arg, d in zip(positional, defaults, strict=True):
        out.append(_param(arg.arg, "positional", d, text, names))
    if a.vararg:
        out.append(Param(a.vararg.arg, "var_positional"))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        out.append(_param(arg.arg, "keyword_only", d, text, names))
    if a.kwarg:
        out.append(Param(a.kwarg.arg, "var_keyword"))
    for p in out:
        p.defined_in = owner
    return out[1:] if drop_first and out and out[0].kind == "positional" else out


def _param(name: str, kind: str, default: ast.expr | None, text: str, names: dict[str, str]) -> Param:
    if default is None:
        return Param(name, kind)
    ok, value = _constant(default)
    source = " ".join((ast.get_source_segment(text, default) or ast.unparse(default)).split())
    refers_to = None
    dotted = ast.unparse(default)
    if (
        not ok
        and isinstance(default, ast.Name | ast.Attribute)
        and all(part.isidentifier() for part in dotted.split("."))
    ):
        head, _, rest = dotted.partition(".")
        if head in names:
            refers_to = names[head] + (f".{rest}" if rest else "")
    return Param(name, kind, source, value if ok else None, ok, refers_to)


def _is_abstract(fn: ast.FunctionDef) -> bool:
    """A body that only raises NotImplementedError or passes (after a docstring): a method to override."""
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return all(
        isinstance(s, ast.Pass)
        or isinstance(s, ast.Raise)
        and s.exc is not None
        and "NotImplementedError" in ast.unparse(s.exc)
        for s in body
    )


def _decorators(fn: ast.FunctionDef) -> list[str]:
    return [ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in fn.decorator_list]


class Source:
    """rlpyt's modules, parsed, with each module's imported names resolved to rlpyt classes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.trees: dict[str, ast.Module] = {}
        self.texts: dict[str, str] = {}
        for path in sorted((root / "rlpyt").rglob("*.py")):
            rel = path.relative_to(root).with_suffix("")
            if path.name == "__init__.py" or any(p in SKIP_PARTS for p in rel.parts):
                continue
            module = ".".join(rel.parts)
            self.texts[module] = path.read_text(encoding="utf-8")
            self.trees[module] = ast.parse(self.texts[module])
        self.classes: dict[str, ClassInfo] = {}
        self.imports: dict[str, dict[str, str]] = {}  # module -> local name -> qualified name
        for module, tree in self.trees.items():
            self.imports[module] = self._imports(module, tree)
        for module, tree in self.trees.items():
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    self._add_class(module, node)

    def _imports(self, module: str, tree: ast.Module) -> dict[str, str]:
        names: dict[str, str] = {}
        for node in tree.body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef):
                names[node.name] = f"{module}.{node.name}"
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        names[t.id] = f"{module}.{t.id}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    names[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0]
                    )
            if isinstance(node, ast.ImportFrom) and node.module:
                base = node.module
                if node.level:
                    base = ".".join(module.split(".")[: -node.level] + [node.module])
                for alias in node.names:
                    names[alias.asname or alias.name] = f"{base}.{alias.name}"
        return names

    def _add_class(self, module: str, node: ast.ClassDef) -> None:
        methods = {}
        for item in node.body:
            if isinstance(item, ast.FunctionDef):
                methods[item.name] = Method(item.name, item, f"{module}.{node.name}", _decorators(item))
        base_exprs = [ast.unparse(b) for b in node.bases]
        self.classes[f"{module}.{node.name}"] = ClassInfo(
            f"{module}.{node.name}", module, node.name, base_exprs, [], methods
        )

    def resolve_bases(self) -> None:
        for info in self.classes.values():
            for expr in info.base_exprs:
                local = f"{info.module}.{expr}"
                qual = local if local in self.classes else self.imports[info.module].get(expr, "")
                if qual in self.classes:
                    info.bases.append(qual)

    def mro(self, qualname: str) -> list[str]:
        """C3 linearisation over rlpyt's classes."""
        info = self.classes[qualname]
        seqs = [self.mro(b) for b in info.bases] + [list(info.bases)]
        out = [qualname]
        while any(seqs):
            seqs = [s for s in seqs if s]
            for s in seqs:
                head = s[0]
                if not any(head in t[1:] for t in seqs):
                    break
            else:
                raise ValueError(f"no C3 linearisation for {qualname}")
            out.append(head)
            seqs = [t[1:] if t[0] == head else t for t in seqs]
        return out


def _forwarding(method: Method) -> tuple[str | None, bool, bool, set[str]]:
    """How ``method`` passes its *args/**kwargs on: (explicit base class name or None for super(),
    passes *args, passes **kwargs, keywords the call fixes)."""
    a = method.node.args
    star, dstar = (a.vararg.arg if a.vararg else None), (a.kwarg.arg if a.kwarg else None)
    for call in ast.walk(method.node):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            continue
        if call.func.attr != method.name:
            continue
        target = call.func.value
        explicit: str | None
        if isinstance(target, ast.Call) and isinstance(target.func, ast.Name) and target.func.id == "super":
            explicit = None
        elif isinstance(target, ast.Name) and call.args and isinstance(call.args[0], ast.Name):
            explicit = target.id
        else:
            continue
        passes_star = any(isinstance(x, ast.Starred) and ast.unparse(x.value) == star for x in call.args)
        passes_dstar = any(k.arg is None and ast.unparse(k.value) == dstar for k in call.keywords)
        fixed = {k.arg for k in call.keywords if k.arg}
        if (star and passes_star) or (dstar and passes_dstar):
            return explicit, passes_star, passes_dstar, fixed
    return None, False, False, set()


def _resolved_params(src: Source, mro: list[str], start: int, name: str) -> list[Param] | None:
    """The parameters of method ``name`` from the MRO position ``start`` on; None where no rlpyt class
    from there defines it."""
    for i in range(start, len(mro)):
        method = src.classes[mro[i]].methods.get(name)
        if method is None:
            continue
        module = src.classes[mro[i]].module
        params = _params(method.node, not method.is_static, src.texts[module], src.imports[module], method.owner)
        explicit, passes_star, passes_dstar, fixed = _forwarding(method)
        if not (passes_star or passes_dstar):
            return params
        nxt = i + 1
        if explicit is not None:
            target = src.imports[src.classes[mro[i]].module].get(explicit, f"{src.classes[mro[i]].module}.{explicit}")
            nxt = mro.index(target) if target in mro else len(mro)
        inner = _resolved_params(src, mro, nxt, name)
        if inner is None:
            # Passed on outside rlpyt (object, nn.Module), or by a mixin whose partner is not known here.
            for p in params:
                if p.kind == "var_positional" and passes_star or p.kind == "var_keyword" and passes_dstar:
                    p.via = "super"
            return params
        own = {p.name for p in params}
        kept = [p for p in params if p.kind not in ("var_positional", "var_keyword")]
        ours = {p.name for p in kept}
        extra: list[Param] = []
        for p in inner:
            if p.name in own or p.name in fixed and p.name not in ours:
                continue
            if p.kind == "positional" and passes_star and not any(k.kind == "keyword_only" for k in kept):
                via = p.via or "*args"
                extra.append(
                    Param(p.name, "positional", p.default, p.value, p.has_value, p.refers_to, via, p.defined_in)
                )
            elif p.kind in ("positional", "keyword_only") and passes_dstar:
                via = "**kwargs" if p.kind == "positional" or p.via == "**kwargs" else (p.via or "**kwargs")
                extra.append(
                    Param(p.name, "keyword_only", p.default, p.value, p.has_value, p.refers_to, via, p.defined_in)
                )
            elif p.kind == "var_positional" and passes_star:
                extra.append(p)
            elif p.kind == "var_keyword" and passes_dstar:
                extra.append(p)
        positional = [p for p in kept if p.kind == "positional"] + [p for p in extra if p.kind == "positional"]
        var_pos = [p for p in extra if p.kind == "var_positional"]
        keyword = [p for p in kept if p.kind == "keyword_only"] + [p for p in extra if p.kind == "keyword_only"]
        var_kw = [p for p in extra if p.kind == "var_keyword"]
        return positional + var_pos + keyword + var_kw
    return None


def _is_public(name: str) -> bool:
    return not name.startswith("_") or name in PUBLIC_DUNDERS


def _method_json(src: Source, mro: list[str], name: str) -> Json:
    owner = next(c for c in mro if name in src.classes[c].methods)
    method = src.classes[owner].methods[name]
    out: Json = {"defined_in": owner}
    if method.is_property:
        out["kind"] = "property"
        return out
    out["kind"] = (
        "staticmethod" if method.is_static else "classmethod" if "classmethod" in method.decorators else "method"
    )
    if _is_abstract(method.node):
        out["abstract"] = True
    params = _resolved_params(src, mro, mro.index(owner), name)
    out["params"] = [p.to_json() for p in params or []]
    return out


def extract(root: Path, commit: str) -> Json:
    src = Source(root)
    src.resolve_bases()
    modules: Json = {}
    for module, tree in src.trees.items():
        functions: Json = {}
        classes: Json = {}
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                params = _params(node, False, src.texts[module], src.imports[module])
                functions[node.name] = {"params": [p.to_json() for p in params]}
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                qual = f"{module}.{node.name}"
                mro = src.mro(qual)
                names = sorted({n for c in mro for n in src.classes[c].methods if _is_public(n)})
                classes[node.name] = {
                    "bases": src.classes[qual].base_exprs,
                    "mro": mro[1:],
                    "methods": {n: _method_json(src, mro, n) for n in names},
                }
        if functions or classes:
            modules[module] = {"functions": functions, "classes": classes}
    return {
        "source": "rlpyt (github.com/astooke/rlpyt)",
        "commit": commit,
        "generator": "tests/compat/extract_rlpyt_signatures.py",
        "modules": modules,
    }


def dumps(data: Json) -> str:
    """Indented JSON with one parameter per line, so that a diff of the data reads as a diff of signatures."""
    text = json.dumps(data, indent=1)
    # A parameter is a flat object: fold its lines into one.
    return (
        re.sub(
            r"\{\n\s*(\"name\"[^{}\[\]]*?)\n\s*\}",
            lambda m: "{" + " ".join(m[1].split("\n")).replace("  ", "") + "}",
            text,
        )
        + "\n"
    )


def count(data: Json) -> str:
    modules = data["modules"]
    assert isinstance(modules, dict)
    n_cls = sum(len(m["classes"]) for m in modules.values())
    n_fn = sum(len(m["functions"]) for m in modules.values())
    return f"{len(modules)} modules, {n_cls} classes, {n_fn} functions"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rlpyt_root", type=Path, help="a checkout of rlpyt (the folder holding rlpyt/)")
    parser.add_argument("--commit", default="", help="the checkout's commit, recorded in the data")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    commit = args.commit
    if not commit:
        try:
            commit = subprocess.run(
                ["git", "-C", str(args.rlpyt_root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
            ).stdout.strip()
        except (subprocess.CalledProcessError, FileNotFoundError):
            parser.error("the checkout is not a git work tree: give its commit with --commit")
    data = extract(args.rlpyt_root, commit)
    args.out.write_text(dumps(data), encoding="utf-8")
    print(f"{args.out}: {count(data)}")


if __name__ == "__main__":
    main()
