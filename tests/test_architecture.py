"""The package's shape holds: the layers declared in tests/architecture.py, no import cycle,
no private name taken across modules, imports inside functions only to keep a heavy library
off a path (with the reason on the line), a module over 400 lines says why at its top, and
records are msgspec Structs (no dataclasses).

Where the code does not hold yet, the test lists what is known (``KNOWN_*``): a new case
fails, and so does a listed case that is gone, so the lists only shrink."""
from __future__ import annotations

import ast

import architecture as arch

FOUND = arch.imports()

# Known cases still to be taken apart (the core's protocol/ledger knot).
KNOWN_CYCLES: list[list[str]] = [
]
KNOWN_UPWARD: list[str] = [
]
KNOWN_PRIVATE = [
]

KNOWN_INNER = {  # module: imports inside its functions, to be moved to its top
    "cascade.check.ledgers": 2, "cascade.cli": 1, "cascade.base.plugins": 1,
    "cascade.turns.replies": 1, "cascade.turns.asking": 1,
}
KNOWN_OVERSIZED: list[str] = [  # functions over 60 lines or 6 parameters: to be taken apart
]
KNOWN_LONG: list[str] = [  # to be split
]


def _ratchet(found: list, known: list, what: str) -> None:
    new = [x for x in found if x not in known]
    gone = [x for x in known if x not in found]
    assert not new, f"new {what}: {new}"
    assert not gone, f"{what} no longer found (take them off the list): {gone}"


def test_no_new_import_cycle():
    _ratchet(arch.cycles(FOUND), KNOWN_CYCLES, "import cycles")


def test_no_import_points_up():
    _ratchet(arch.upward(FOUND), KNOWN_UPWARD, "imports of a higher layer")


def test_no_private_name_crosses_modules():
    _ratchet(arch.private_names(FOUND), KNOWN_PRIVATE, "private names imported across modules")


def test_imports_inside_functions_only_keep_heavy_libraries_off_a_path():
    inner = arch.inner_imports(FOUND)
    counts = {m: sum(1 for x in inner if x.split(":")[0] == m) for m in {x.split(":")[0] for x in inner}}
    grown = {m: n for m, n in counts.items() if n > KNOWN_INNER.get(m, 0)}
    shrunk = {m: n for m, n in KNOWN_INNER.items() if counts.get(m, 0) < n}
    assert not grown, f"imports inside functions that keep no heavy library off a path: {grown}"
    assert not shrunk, f"fewer imports inside functions now (lower KNOWN_INNER): {shrunk}"


def test_heavy_imports_inside_functions_say_why():
    missing = []
    for i in FOUND:
        if i.inner and arch.heavy(FOUND, i.target) is not None \
                and i.module not in arch.ENTRY_POINTS:
            line = arch.modules()[i.module].read_text().splitlines()[i.line - 1]
            if "#" not in line:
                missing.append(f"{i.module}:{i.line}")
    assert not missing, f"an import kept off a path says why on its line: {missing}"


def test_long_modules_say_why():
    """A module over 400 lines says in its docstring why it stays whole ("Over 400 lines:
    ...")."""
    silent = []
    for module, path in arch.modules().items():
        source = path.read_text()
        doc = ast.get_docstring(ast.parse(source)) or ""
        if len(source.splitlines()) > 400 and "Over 400 lines" not in doc:
            silent.append(module)
    _ratchet(sorted(silent), KNOWN_LONG, "modules over 400 lines that do not say why")


def test_functions_stay_small():
    """No function over ~60 lines or 6 parameters without a reason in its signature."""
    _ratchet(arch.oversized(), KNOWN_OVERSIZED, "functions over 60 lines or 6 parameters")


def test_records_are_structs():
    """A record is a msgspec Struct: a dataclass compiles its methods from source when its
    module loads (about 1 ms a class, paid by every command and every hook that asks a
    model), a Struct is made in C."""
    assert arch.dataclass_users(FOUND) == [], "records are msgspec Structs, not dataclasses"


def test_the_checks_can_fail(tmp_path, monkeypatch):
    """The analyzer finds a cycle, an upward import, a private name and a long module in a
    package made for it (so the checks above are not vacuous)."""
    pkg = tmp_path / "cascade"
    (pkg / "ledger").mkdir(parents=True)
    (pkg / "protocol").mkdir()
    for folder in (pkg, pkg / "ledger", pkg / "protocol"):
        (folder / "__init__.py").write_text("")
    (pkg / "ledger" / "a.py").write_text("from cascade.protocol.b import _x\n")
    (pkg / "ledger" / "c.py").write_text("from dataclasses import dataclass\n")
    (pkg / "protocol" / "b.py").write_text(
        "def f():\n    from cascade.ledger import a\n    import litellm\n" + "    x = 1\n" * 60)
    monkeypatch.setattr(arch, "PACKAGE", pkg)
    found = arch.imports()
    assert arch.cycles(found) == [["cascade.ledger.a", "cascade.protocol.b"]]
    assert arch.upward(found) == ["cascade.ledger.a -> cascade.protocol.b"]
    assert arch.private_names(found) == ["cascade.ledger.a <- cascade.protocol.b._x"]
    assert arch.inner_imports(found) == ["cascade.protocol.b:2 cascade.ledger.a"]
    assert arch.oversized() == ["cascade.protocol.b:f"]
    assert arch.dataclass_users(found) == ["cascade.ledger.c"]


def test_each_folder_is_one_declared_layer():
    """Every folder of the package is a layer of its own (a sub-folder is its folder's):
    the declaration names them all, and nothing but folders."""
    folders = {p.parent.relative_to(arch.PACKAGE).parts[0] for p in arch.PACKAGE.rglob("*.py")
               if p.parent != arch.PACKAGE}
    assert folders == set(arch.FOLDERS)
    assert all(prefix == "cascade" or prefix.count(".") == 1 for prefix in arch.LAYERS)


def test_docs_layers_md_is_current():
    """docs/layers.md is generated from the imports (python docs/layers.py)."""
    import importlib.util

    path = arch.PACKAGE.parent / "docs" / "layers.py"
    spec = importlib.util.spec_from_file_location("docs_layers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (arch.PACKAGE.parent / "docs" / "layers.md").read_text() == module.layers_md(), \
        "docs/layers.md is stale: python docs/layers.py"
