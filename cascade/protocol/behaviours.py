"""Registries of the named behaviours a protocol's data refers to, each with the parameters
it takes. A protocol names one as ``name`` or ``{name: {param: value}}``
(``exit: {converged: {field: estimate, within: 0.1}}``); the parameters are checked when the
protocol loads (one line naming file and line) and passed to the behaviour as keywords.

Installed packages add behaviours through the entry point group ``cascade.behaviours`` (each
names a module, or an object in one, whose import registers them), loaded the first time a
name is not known and only from installed distributions (cascade.base.plugins), so no code
of the repository under review ever runs.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from cascade.base.errors import CascadeError
from cascade.base.plugins import load_entry_points

GROUP = "cascade.behaviours"
REQUIRED = object()  # a parameter without a default


class Param(Struct, frozen=True):
    """One parameter of a behaviour: the types its value may have, its default (REQUIRED:
    none), what it is (said in errors) and an extra check (a problem, or None)."""

    types: tuple[type, ...]
    default: Any = REQUIRED
    doc: str = ""
    check: Callable[[Any], str | None] | None = None


def named(what: str) -> Callable[[Any], str | None]:
    """A ``Param.check``: the value is a non-empty string, else ``must be <what>``."""
    return lambda value: None if isinstance(value, str) and value.strip() else f"must be {what}"


class Behaviour(Struct, frozen=True):
    name: str
    fn: Callable[..., Any]
    params: tuple[tuple[str, Param], ...] = ()
    traits: frozenset[str] = frozenset()  # what the engine may ask of it (own_minimum, ...)


class Ref(Struct, frozen=True):
    """A protocol's reference to a behaviour: its name and the parameters it is given (with
    the defaults filled in), hashable so the protocol's records stay frozen."""

    name: str
    params: tuple[tuple[str, Any], ...] = ()

    def __str__(self) -> str:
        return self.name

    @property
    def kwargs(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.params}


def _frozen(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _frozen(v)) for k, v in value.items()))
    return value


def _type_name(types: tuple[type, ...]) -> str:
    names = {bool: "true or false", int: "a whole number", float: "a number", str: "a word",
             list: "a list", dict: "a mapping"}
    if float in types:  # a whole number is a number
        types = tuple(t for t in types if t is not int)
    return " or ".join(dict.fromkeys(names.get(t, t.__name__) for t in types))


class Registry:
    """Behaviours of one kind by name (a mapping of name to function for the callers that
    only call). ``what`` is how errors speak of the kind (``exit rule``)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._items: dict[str, Behaviour] = {}

    def register(self, name: str, fn: Callable[..., Any] | None = None, *,
                 params: dict[str, Param] | None = None, traits: tuple[str, ...] = ()):
        """Register ``fn`` under ``name`` (usable as a decorator). A name registered again
        replaces the earlier one."""

        def add(f: Callable[..., Any]) -> Callable[..., Any]:
            self._items[name] = Behaviour(name, f, tuple((params or {}).items()),
                                          frozenset(traits))
            return f

        return add(fn) if fn is not None else add

    def unregister(self, name: str) -> None:
        self._items.pop(name, None)

    def behaviour(self, name: str | Ref, load: bool = True) -> Behaviour | None:
        """The behaviour of that name; one not registered yet loads the installed packages'
        behaviours first (unless ``load`` is false)."""
        key = str(name)
        if key not in self._items and load:
            load_plugins()
        return self._items.get(key)

    def has(self, name: str | Ref, trait: str, load: bool = True) -> bool:
        b = self.behaviour(name, load)
        return b is not None and trait in b.traits

    def call(self, ref: str | Ref, *args: Any) -> Any:
        b = self.behaviour(ref)
        if b is None:
            raise KeyError(str(ref))
        given = ref.kwargs if isinstance(ref, Ref) else {}
        kwargs = {k: given.get(k, p.default) for k, p in b.params}
        return b.fn(*args, **{k: v for k, v in kwargs.items() if v is not REQUIRED})

    def __getitem__(self, name: str) -> Callable[..., Any]:
        b = self.behaviour(name)
        if b is None:
            raise KeyError(name)
        return b.fn

    def __contains__(self, name: object) -> bool:
        return isinstance(name, (str, Ref)) and self.behaviour(name) is not None

    def __iter__(self) -> Iterator[str]:
        load_plugins()
        return iter(sorted(self._items))

    def names(self) -> list[str]:
        return list(self)

    def ref(self, value: object, path: Path, line: int | None, what: str = "") -> Ref:
        """The behaviour ``value`` names (``name`` or ``{name: {param: value}}``), its
        parameters checked against what it takes; else one line naming file and line."""
        what = what or self.what
        line = getattr(value, "line", None) or line
        params: object = {}
        if isinstance(value, dict):
            if len(value) != 1:
                raise CascadeError(f"{what}: name one {self.what}, as name or {{name: "
                                   "{parameter: value}}", path, line)
            value, params = next(iter(value.items()))
            params = {} if params is None else params
        if not isinstance(value, str) or not value:
            raise CascadeError(f"{what}: name a {self.what} (known: "
                               f"{', '.join(self.names())})", path, line)
        b = self.behaviour(value)
        if b is None:
            raise CascadeError(f"unknown {self.what} {value!r} (known: "
                               f"{', '.join(self.names())})", path, line)
        if not isinstance(params, dict):
            raise CascadeError(f"{self.what} {value!r}: its parameters are a mapping "
                               "(parameter: value)", path, line)
        line = getattr(params, "line", None) or line
        declared = dict(b.params)
        unknown = [k for k in params if k not in declared]
        if unknown:
            takes = ", ".join(declared) or "none"
            raise CascadeError(f"{self.what} {value!r}: unknown parameter {unknown[0]!r} "
                               f"(it takes: {takes})", path, line)
        out = []
        for name, p in b.params:
            if name not in params:
                if p.default is REQUIRED:
                    raise CascadeError(f"{self.what} {value!r}: parameter {name!r} is required"
                                       + (f" ({p.doc})" if p.doc else ""), path, line)
                continue
            given = params[name]
            ok = isinstance(given, p.types) and not (isinstance(given, bool)
                                                     and bool not in p.types)
            problem = None if ok else f"must be {_type_name(p.types)}"
            if problem is None and p.check is not None:
                problem = p.check(given)
            if problem:
                raise CascadeError(f"{self.what} {value!r}: parameter {name!r} {problem}",
                                   path, getattr(params, "key_lines", {}).get(name, line))
            out.append((name, _frozen(given)))
        return Ref(value, tuple(out))


_loaded = False


def load_plugins() -> None:
    """Import every ``cascade.behaviours`` entry point of the installed distributions (once;
    ``reload_plugins`` reads them again). One that fails to load is an error naming it."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    load_entry_points(GROUP, "behaviours")


def reload_plugins() -> None:
    """Read the entry points again on next use (after a package was installed)."""
    global _loaded
    _loaded = False


class Exit(Struct, frozen=True):
    """An exit rule's answer after a round: whether the rounds end, and why (its
    explanation). A flow's rule also says what the next round is: its strategy phase, its
    direction; a person's decision that concluded is said after the rounds; escalations are
    quiet up to ``quiet_until``; ``probed``: the probing round was given."""

    ends: bool
    why: str = ""
    phase: int | None = None
    direction: str = ""
    conclusion: str = ""
    quiet_until: int | None = None
    probed: bool = False


class Ruling(Struct, frozen=True):
    """An outcome rule's answer: the outcome (READY, IMPASSE, CHANGES, REJECT) and its
    explanation -- the one place an outcome is explained: status, the record, the hook and
    ``check`` print it. ``counted``: what each member counted as (alias -> verdict);
    ``tally``: verdicts by kind; ``against`` and ``missing``: the names held against it and
    of those who gave nothing."""

    outcome: str
    why: str
    counted: dict[str, str] = field(default_factory=dict)
    tally: dict[str, int] = field(default_factory=dict)
    against: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
