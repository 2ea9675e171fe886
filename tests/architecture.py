"""The package's import graph, read from its source (ast; nothing is imported).

``LAYERS`` is the declaration the tests hold the code to: one layer per folder, bottom up --
base (the primitives), config (the files a repository configures), ledger (the format),
protocol (state and verdict: no model, no git), turns (the model seam), run (a protocol run
on a ledger), check (what the CI gate and the hook share about a repository's ledgers),
loop (the hook), commands, api (the Python API), ui, site (the static site), and the package's top (its entry
points: the command line). A module may import its own folder and the folders below it.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "cascade"

FOLDERS = ("base", "config", "ledger", "protocol", "turns", "run", "check", "loop", "commands",
           "api", "ui", "site")
# (module prefix, layer): each folder, and the package's top above them all.
LAYERS: dict[str, int] = {"cascade": len(FOLDERS),
                          **{f"cascade.{name}": n for n, name in enumerate(FOLDERS)}}

# Libraries an import inside a function may keep off a path, the line saying so: each costs
# more to import than the no-op hook's whole run, or loads a native library (ssl: OpenSSL),
# or is an extra's that the hook's install does not hold (markdown_it, nh3: the site's).
HEAVY = frozenset({"litellm", "jinja2", "textual", "llama_cpp", "openai", "httpx", "ssl",
                   "markdown_it", "nh3", "pygal"})

# Entry points that answer before they know what they will need, and load it then: the
# command line (a command loads its own modules, and nothing of the others), and the hook (a
# commit that touches no governed path never loads the ledger, protocol and model layers).
ENTRY_POINTS = frozenset({"cascade.main", "cascade.cli", "cascade.loop.hook"})


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    line: int
    target: str  # the imported module (a cascade module, or a top-level library)
    name: str | None  # the name imported from it (``from x import name``)
    inner: bool  # inside a function


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def layer(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def _owner(name: str, known: dict[str, Path]) -> str:
    while name not in known and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def imports() -> list[Import]:
    known = modules()
    out: list[Import] = []
    for module, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        parent: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parent[child] = node
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            up, inner = node, False
            while up in parent:
                up = parent[up]
                if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    inner = True
                    break
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = alias.name if not alias.name.startswith("cascade") \
                        else _owner(alias.name, known)
                    out.append(Import(module, node.lineno, target, None, inner))
                continue
            if node.level:
                base = module.split(".")
                if not path.name == "__init__.py":
                    base = base[:-1]
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if full in known:  # a submodule: ``from cascade.ledger import grammar``
                    out.append(Import(module, node.lineno, full, None, inner))
                elif source.startswith("cascade"):
                    out.append(Import(module, node.lineno, _owner(source, known), alias.name,
                                      inner))
                else:
                    out.append(Import(module, node.lineno, source.split(".")[0], alias.name,
                                      inner))
    return out


def internal(found: list[Import]) -> list[Import]:
    return [i for i in found if i.target.startswith("cascade") and i.target != i.module]


def cycles(found: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    edges: dict[str, set[str]] = defaultdict(set)
    for i in internal(found):
        edges[i.module].add(i.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(modules()):
        if v not in index:
            visit(v)
    return sorted(out)


def upward(found: list[Import]) -> list[str]:
    return sorted({f"{i.module} -> {i.target}" for i in internal(found)
                   if layer(i.target) > layer(i.module)})


def private_names(found: list[Import]) -> list[str]:
    return sorted({f"{i.module} <- {i.target}.{i.name}" for i in internal(found)
                   if i.name and i.name.startswith("_") and not i.name.startswith("__")})


def heavy(found: list[Import], target: str) -> str | None:
    """The heavy library ``target`` is, or imports when it is imported (at any depth)."""
    top: dict[str, set[str]] = defaultdict(set)
    for i in found:
        if not i.inner:
            top[i.module].add(i.target)
    seen: set[str] = set()
    todo = [target]
    while todo:
        module = todo.pop()
        if module.split(".")[0] in HEAVY:
            return module.split(".")[0]
        if module not in seen:
            seen.add(module)
            todo.extend(top.get(module, ()))
    return None


def dataclass_users(found: list[Import]) -> list[str]:
    """The modules that import dataclasses (a record is a msgspec Struct)."""
    return sorted({i.module for i in found if i.target == "dataclasses"})


def inner_imports(found: list[Import]) -> list[str]:
    """Imports inside functions, but for one that keeps a heavy library off a path."""
    return sorted({f"{i.module}:{i.line} {i.target}" for i in found
                   if i.inner and heavy(found, i.target) is None
                   and not (i.module in ENTRY_POINTS and i.target.split(".")[0] == "cascade")})


def oversized(limit_lines: int = 60, limit_params: int = 6) -> list[str]:
    """``module:function`` of each function over ``limit_lines`` lines or ``limit_params``
    parameters (``self`` and ``cls`` not counted) whose first line gives no reason
    (a ``# long: ...`` comment in its signature)."""
    out = []
    for module, path in modules().items():
        source = path.read_text()
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source, str(path))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
            count = sum(1 for x in params if x is not None and x.arg not in ("self", "cls"))
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            signature = lines[node.lineno - 1:node.body[0].lineno - 1]
            if (length > limit_lines or count > limit_params) \
                    and not any("# long:" in line for line in signature):
                out.append(f"{module}:{node.name}")
    return sorted(set(out))
