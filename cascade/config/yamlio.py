"""YAML loading that remembers line numbers, so every config error can name file and line."""
from __future__ import annotations

from pathlib import Path

import yaml

from cascade.base.errors import CascadeError
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
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or exc.context or "invalid YAML"
        raise CascadeError(f"invalid YAML: {problem}", path, line) from None
    except yaml.YAMLError as exc:
        raise CascadeError(f"invalid YAML: {exc}", path) from None


def read_text(path: Path) -> str:
    """Read a UTF-8 configuration file (never through a symbolic link, unless bundled:
    cascade.base.safepath.read_config); a missing or undecodable file is a one-line error."""
    try:
        data = read_config(path)
    except FileNotFoundError:
        raise CascadeError("no such file", path) from None
    except IsADirectoryError:
        raise CascadeError("is a directory, not a file", path) from None
    except OSError as exc:
        raise CascadeError(f"cannot read: {exc.strerror}", path) from None
    return decode_utf8(data, path)


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
    """Validate that ``data`` is a mapping with only ``allowed`` keys and all ``required`` ones.
    ``line``: where ``data`` stands when it is a scalar (which does not know its line)."""
    if not isinstance(data, dict):
        raise CascadeError(f"{what} must be a mapping", path, start_line(data, line) or 1)
    key_line = data.line_of if isinstance(data, LineDict) else (lambda _k: start_line(data, line))
    for key in data:
        if key not in allowed:
            raise CascadeError(
                f"unknown {what} key {key!r} (allowed: {', '.join(sorted(allowed))})",
                path, key_line(key))
    for key in sorted(required):
        if key not in data or data[key] in (None, ""):
            raise CascadeError(f"{what} is missing {key!r}", path,
                               key_line(key) if key in data else start_line(data, line))
    return data  # type: ignore[return-value]
