"""YAML loading that remembers line numbers, so every config error can name file and line."""
from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from pathlib import Path

import yaml

from cascade.base.errors import CascadeError, raise_all
from cascade.base.safepath import read_config

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class LineDict(dict):
    """A mapping from a YAML file that knows where it and each of its keys stand."""

    line: int = 0
    key_lines: dict[object, int]

    def line_of(self, key: object) -> int:
        return self.key_lines.get(key, self.line)


class LineList(list):
    """A sequence from a YAML file that knows where it and each of its items stand."""

    line: int = 0
    item_lines: list[int]

    def line_at(self, index: int) -> int:
        return self.item_lines[index] if 0 <= index < len(self.item_lines) else self.line


class _Loader(_Base):  # type: ignore[misc, valid-type]
    pass


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    result = LineDict()
    result.line = node.start_mark.line + 1
    result.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in result:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = key_node.start_mark.line + 1
    return result


def _construct_sequence(loader: yaml.SafeLoader, node: yaml.SequenceNode) -> LineList:
    result = LineList(loader.construct_object(item, deep=True) for item in node.value)
    result.line = node.start_mark.line + 1
    result.item_lines = [item.start_mark.line + 1 for item in node.value]
    return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def start_line(data: object, fallback: int | None = None) -> int | None:
    """Where a value read by ``load_yaml`` starts: a mapping's or a list's first line (a
    scalar does not know its line: ``fallback``)."""
    return getattr(data, "line", None) or fallback


def items_with_lines(data: list, fallback: int | None = None):
    """``(item, line)`` for each item of a list read by ``load_yaml``."""
    for index, item in enumerate(data):
        yield item, (data.line_at(index) if isinstance(data, LineList) else fallback)


def load_yaml(path: Path, text: str | None = None) -> object:
    """Parse a YAML file; syntax errors become a CascadeError naming file and line."""
    if text is None:
        text = read_text(path)
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        problem = exc.problem or exc.context or "invalid YAML"
        line, unfinished = _fault_line(exc, text)
        raise CascadeError(f"invalid YAML: {problem}" + (f" ({unfinished})" if unfinished else ""),
                           path, line) from None
    except yaml.YAMLError as exc:
        raise CascadeError(f"invalid YAML: {exc}", path) from None


# What the scanner was reading when it failed, where the fault is that line's, not the line it
# had reached: a key without its colon ("while scanning a simple key"), an unclosed quote, an
# unclosed [ or { -- it notices only at the next line, or at the end of the file.
_STARTED_BEFORE = {"simple key": "a line that is not 'key: value'",
                   "quoted scalar": "a quoted string that starts here is not closed",
                   "flow sequence": "a [ list that starts here is not closed",
                   "flow mapping": "a { mapping that starts here is not closed"}


def _fault_line(exc: yaml.MarkedYAMLError, text: str) -> tuple[int | None, str]:
    """The line of a YAML syntax error as the person would fix it -- where what was left
    unfinished starts (``_STARTED_BEFORE``), else where the parser stopped; never past the
    file's last line that has text (the end of the file is no line of it) -- and what was
    left unfinished there ("": nothing, or not known)."""
    mark, context = exc.problem_mark or exc.context_mark, exc.context_mark
    if mark is None:
        return None, ""
    line, unfinished = mark.line + 1, ""
    said = next((words for key, words in _STARTED_BEFORE.items() if key in (exc.context or "")),
                None)
    if context is not None and context.line < mark.line and said is not None and (
            "flow" not in (exc.context or "") or _only_ends(text, mark)):
        line, unfinished = context.line + 1, said
    last = len(text.rstrip().splitlines()) or 1
    return min(line, last), unfinished


def _only_ends(text: str, mark) -> bool:
    """Whether a [ or { was left unclosed: the parser stopped at the end of the file, or at
    a ``key:`` starting a later line (the mapping the list was in, going on)."""
    lines = text.splitlines()
    if mark.line >= len(lines) or not text[mark.index:].strip():
        return True
    before = lines[mark.line][:mark.column]
    return bool(re.match(r"\s*[^\s:#\[\]{},]+\s*\Z", before)) and \
        lines[mark.line][mark.column:mark.column + 1] == ":"


def read_text(path: Path) -> str:
    """Read a UTF-8 configuration file (never through a symbolic link, unless bundled:
    cascade.base.safepath.read_config); a missing or undecodable file is a one-line error."""
    return decode_utf8(read_bytes(read_config, path), path)


def read_bytes(read: Callable[[Path], bytes], path: Path, what: str = "file") -> bytes:
    """``read(path)``; an OS error is one line naming ``path`` (``what``: its kind of file)."""
    try:
        return read(path)
    except FileNotFoundError:
        raise CascadeError(f"no such {what}", path) from None
    except IsADirectoryError:
        raise CascadeError(f"is a directory, not a {what}", path) from None
    except OSError as exc:
        raise CascadeError(f"cannot read: {exc.strerror}", path) from None


def decode_utf8(data: bytes, path: Path | str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise CascadeError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})", path, line
        ) from None


def check_keys(data: object, path: Path, allowed: set[str], required: set[str], what: str,
               line: int | None = None) -> LineDict:
    """Validate that ``data`` is a mapping with only ``allowed`` keys and all ``required`` ones:
    every key at fault is reported at once (cascade.base.errors.raise_all). ``line``: where
    ``data`` stands when it is a scalar (which does not know its line)."""
    raise_all(key_errors(data, path, allowed, required, what, line))
    return data  # type: ignore[return-value]


def key_errors(data: object, path: Path, allowed: set[str], required: set[str], what: str,
               line: int | None = None) -> list[CascadeError]:
    """``check_keys``'s findings, each at its key's line: an unknown key (with the allowed
    key it is near, if any), a missing required one. Not a mapping: raised at once."""
    if not isinstance(data, dict):
        raise CascadeError(f"{what} must be a mapping", path, start_line(data, line) or 1)
    key_line = data.line_of if isinstance(data, LineDict) else (lambda _k: start_line(data, line))
    found = []
    for key in data:
        if key not in allowed:
            found.append(CascadeError(
                f"unknown {what} key {key!r} (allowed: {', '.join(sorted(allowed))})"
                + did_you_mean(key, allowed), path, key_line(key)))
    for key in sorted(required):
        if key not in data or data[key] in (None, ""):
            found.append(CascadeError(f"{what} is missing {key!r}", path,
                                      key_line(key) if key in data else start_line(data, line)))
    return found


def did_you_mean(word: object, known) -> str:
    """``"; did you mean 'x'?"`` when ``word`` reads like one of ``known`` (a misspelt key or
    name), else ``""``: said after the message."""
    if not isinstance(word, str):
        return ""
    near = difflib.get_close_matches(word, [k for k in known if isinstance(k, str)], n=1)
    return f"; did you mean {near[0]!r}?" if near else ""
