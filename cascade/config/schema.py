"""Configuration schemas, declared: a file kind (a rule, a persona, a rule's ``consensus:``...)
is a table of its keys, each with the kind of value it takes and its default; ``read`` checks
a mapping against its table and returns the values, or raises one line naming the file and
the line of the key at fault.

A kind is a function ``(value) -> value`` that raises ``Bad(what it must be)``; the message is
``<label> must be <what>`` (a kind may name the value otherwise, say it in other words, or
point at a line inside it: ``Bad``). Kinds here cover what the files use; a file kind may add
its own.

Why not pydantic (a dependency already, through litellm): the no-op hook reads the rule files
on every commit, and importing pydantic costs several times what that whole hook does.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from cascade.config.yamlio import LineDict, LineList, key_errors, start_line
from cascade.base.errors import CascadeError, raise_all

# Plain classes here, and no typing: the no-op hook reads the rule files, and importing
# msgspec for records (and the typing_extensions, inspect, ast... it loads) would cost it
# more than reading them.
Kind = Callable[[object], object]


class Bad(Exception):
    """A value of the wrong kind: ``str(exc)`` says what it must be. ``subject``: how the
    message names the value, instead of the key's label (to show the value); ``must``: the
    words before what it says ("must not be"); ``line``: where in the value the fault is (an
    item of a list), instead of the key's line."""

    def __init__(self, what: str, subject: str | None = None, must: str = "must be",
                 line: int | None = None) -> None:
        super().__init__(what)
        self.subject, self.must, self.line = subject, must, line


class Key:
    """One key of a table: the kind of value it takes, its default, whether it is required,
    and how a message names it (default: the key)."""

    __slots__ = ("default", "kind", "label", "required")

    def __init__(self, kind: Kind, default: object = None, required: bool = False,
                 label: str | None = None) -> None:
        self.kind, self.default, self.required, self.label = kind, default, required, label


def read(data: object, keys: Mapping[str, Key], path: Path, what: str,
         line: int | None = None, names: Mapping[str, object] | None = None
         ) -> dict[str, object]:
    """The values of ``data`` (a mapping, at ``line`` when it is not one) by ``keys``: a key
    that is absent or null takes its default. Unknown keys, missing required ones and values
    of the wrong kind raise CascadeError at the key's line -- all of them at once. A key's
    label may name ``names`` and the values read before it (``"step {id!r}: words"``)."""
    out, errors = read_all(data, keys, path, what, line, names)
    raise_all(errors)
    return out


def read_all(data: object, keys: Mapping[str, Key], path: Path, what: str,
             line: int | None = None, names: Mapping[str, object] | None = None
             ) -> tuple[dict[str, object], list[CascadeError]]:
    """``read``, returning what is wrong instead of raising it (a value at fault takes its
    key's default): the values, and the errors, each at its line. Not a mapping: raised."""
    errors = key_errors(data, path, set(keys), {k for k, key in keys.items() if key.required},
                        what, line)
    found: dict = data  # type: ignore[assignment]  # key_errors proved it a mapping
    at = found.line_of if isinstance(found, LineDict) else (lambda _k: start_line(found, line))
    out: dict[str, object] = {}
    for name, key in keys.items():
        value = found.get(name)
        if value is None:
            out[name] = key.default
            continue
        try:
            out[name] = key.kind(value)
        except Bad as exc:
            out[name] = key.default
            label = exc.subject or key.label or name
            if "{" in label:
                label = label.format(**{**out, **(names or {})})
            errors.append(CascadeError(f"{label} {exc.must} {exc}", path, exc.line or at(name)))
    return out, errors


def value_of(kind: Kind, value: object, label: str, path: Path, line: int | None) -> object:
    """One value of ``kind`` (not in a table), or one line naming ``label``, file and line."""
    try:
        return kind(value)
    except Bad as exc:
        raise CascadeError(f"{exc.subject or label} {exc.must} {exc}", path,
                           exc.line or line) from None


# Kinds.

def text(value: object) -> str:
    if not isinstance(value, str):
        raise Bad("a string")
    return value


def word(what: str) -> Kind:
    """A non-empty word, stripped (``what``: e.g. "the name of one of the protocol's modes")."""
    def kind(value: object) -> str:
        if not isinstance(value, str) or not value.strip():
            raise Bad(what)
        return value.strip()
    return kind


def texts(value: object) -> tuple[str, ...]:
    """A string, or a non-empty list of non-empty strings."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise Bad("a string or a list of strings")


def some_texts(value: object) -> tuple[str, ...]:
    """``texts``, where nothing (an empty list or string) is none."""
    return texts(value) if value else ()


def text_lines(value: object) -> tuple[str, ...]:
    """A list of strings, maybe empty (nothing at all: none); a wrong item is named at its
    own line."""
    if not value:
        return ()
    if not isinstance(value, list):
        raise Bad("a list of strings")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise Bad("a list of strings", line=value.line_at(index)
                      if isinstance(value, LineList) else None)
    return tuple(value)


def raw(value: object) -> object:
    """Any value: the reader of the key checks it (a nested table, a pattern...)."""
    return value


def flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise Bad("true or false")
    return value


def whole(low: int = 1) -> Kind:
    def kind(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise Bad(f"a whole number of at least {low}")
        return value
    return kind


def fraction(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise Bad("a number between 0 and 1")
    return value


def one_of(*choices: str, must: str = "must be") -> Kind:
    def kind(value: object) -> str:
        if value not in choices:
            raise Bad(" or ".join([", ".join(choices[:-1]), choices[-1]] if len(choices) > 1
                                  else choices), must=must)
        return value  # type: ignore[return-value]
    return kind


def choice(choices: Iterable[str], must: str = "must be", ordered: bool = False) -> Kind:
    """One of ``choices`` (read when a value is checked: a registry may grow), said as "one
    of a, b, c" (``ordered``: sorted)."""
    def kind(value: object) -> str:
        if not isinstance(value, str) or value not in choices:
            listed = sorted(choices) if ordered else list(choices)
            raise Bad(f"one of {', '.join(listed)}", must=must)
        return value
    return kind


def span(what: str) -> Kind:
    """Two whole numbers of at least 1, the first not above the second: ``[low, high]``."""
    def kind(value: object) -> tuple[int, int]:
        if not isinstance(value, list) or len(value) != 2 or not all(
                isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in value) \
                or value[0] > value[1]:
            raise Bad(what, must="takes")
        return value[0], value[1]
    return kind


def words(what: str, must: str = "must be") -> Kind:
    """A list of strings (maybe empty), said as ``what``."""
    def kind(value: object) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
            raise Bad(what, must=must)
        return tuple(value)
    return kind
