"""A decision record's own status, as the ADR tools write it (which ecosystem writes which:
cascade.config.adr_conventions). Four forms, the first found wins: a ``status:`` key in
leading ``---`` front matter (MADR 3+, log4brains); a ``## Status`` section (adr-tools,
Nygard: its first non-blank line is the status, the lines after it -- ``Supersedes [...]``
-- belong to it too); a bullet ``* Status: proposed`` (MADR 2); a table row ``| Status |
Proposed |`` (opendatahub). The one-line forms serve any key (a template's date too):
``LINE_FORMS``. ``governs()`` reads the paths a decision governs in the same forms (a
``## Governs`` section: a path a bullet; front matter: a list, ``[a, b]`` or one value).

``core()`` is what a review is about: the text without its status and without spacing
differences (indentation is kept: it is markdown's structure). Two revisions with the same
core differ only in their status or their spacing; a review of one holds for the other
(cascade.protocol.derivation). Re-wrapping a paragraph changes the core: it may change what a
list or a table says, so it is reviewed.

Pure functions on text; nothing here imports more than ``re`` and ``hashlib``.
"""
from __future__ import annotations

import hashlib
import posixpath
import re


# The one-line forms of a key (group 1: up to the value, group 2: the value, a row's group 3:
# the rest of it): front matter ``key: value``, a bullet ``* Key: value`` (``- **Key:**
# value``), a metadata table's row ``| Key | value |``.
LINE_FORMS = {"front-matter": r"^({key}[ \t]*:[ \t]*)(.*?)[ \t]*$",
              "bullet": r"^([*-][ \t]+(?:\*\*)?{key}(?:\*\*)?[ \t]*:(?:\*\*)?[ \t]*)(.*?)[ \t]*$",
              "row": r"^([ \t]*\|[ \t]*(?:\*\*)?{key}(?:\*\*)?[ \t]*\|[ \t]*)([^|]*?)([ \t]*\|.*)$"}


def line_form(form: str, key: str) -> re.Pattern[str]:
    """The pattern of ``key`` (``status``, ``date``) in one of ``LINE_FORMS``."""
    return re.compile(LINE_FORMS[form].format(key=key), re.I)


_FRONT_STATUS = line_form("front-matter", "status")
_FRONT_GOVERNS = line_form("front-matter", "governs")
_SECTION = re.compile(r"^##[ \t]+status[ \t#]*$", re.I)
_HEADING = re.compile(r"^#{1,6}[ \t]")
_BULLET = line_form("bullet", "status")
_ROW = line_form("row", "status")
_SEPARATOR = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}")
_TITLE = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.M)
_FRONT_END = re.compile(r"^(---|\.\.\.)[ \t]*$", re.M)
_SUPERSEDED_BY = re.compile(r"superseded[ \t]+by[ \t]*:?[ \t]*\[([^\]]*)\](?:\(([^)]*)\))?", re.I)
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")
_GOVERNS_SECTION = re.compile(r"^##[ \t]+governs[ \t#]*$", re.IGNORECASE)
_GOVERNS_LINE = re.compile(r"^(?:[*-][ \t]+)?(?:\*\*)?governs(?:\*\*)?[ \t]*:(?:\*\*)?[ \t]*(.*?)"
                           r"[ \t]*$", re.IGNORECASE)
_GOVERNS_ROW = re.compile(r"^[ \t]*\|[ \t]*(?:\*\*)?governs(?:\*\*)?[ \t]*\|([^|]*)\|", re.IGNORECASE)
_FRONT_ITEM = re.compile(r"^[ \t]+-[ \t]*(.*?)[ \t]*$")


class Status:
    """Where a document states its status, in which ``form`` (front-matter, section, bullet,
    row): lines ``first``..``last`` (0-based, inclusive) hold it; ``line`` holds the value."""

    __slots__ = ("form", "value", "line", "first", "last")

    def __init__(self, form: str, value: str, line: int, first: int, last: int) -> None:
        self.form, self.value, self.line, self.first, self.last = form, value, line, first, last

    def __repr__(self) -> str:
        return f"Status({self.form!r}, {self.value!r}, line={self.line + 1})"


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").split("\n")


def _front(lines: list[str]):
    """Each line of a leading ``---`` block, with its index, up to its end (or the file's)."""
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                return
            yield i, lines[i]


def unfenced(lines: list[str], start: int = 0):
    """Each line from ``start`` outside a code fence, with its index (a fence's own lines are
    neither)."""
    fenced = False
    for i in range(start, len(lines)):
        if _FENCE.match(lines[i]):
            fenced = not fenced
        elif not fenced:
            yield i, lines[i]


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def find(text: str) -> Status | None:
    lines = _lines(text)
    for i, line in _front(lines):
        m = _FRONT_STATUS.match(line)
        if m:
            return Status("front-matter", _unquote(m.group(2)), i, i, i)
    for i, line in unfenced(lines):
        if _SECTION.match(line):
            end = i + 1
            while end < len(lines) and not _HEADING.match(lines[end]):
                end += 1
            body = [j for j in range(i + 1, end) if lines[j].strip()]
            if not body:
                return Status("section", "", i, i + 1, i)
            return Status("section", lines[body[0]].strip(), body[0], i + 1, body[-1])
        m = _BULLET.match(line)
        if m:
            return Status("bullet", m.group(2), i, i, i)
        m = _ROW.match(line)
        if m and not (i + 1 < len(lines) and _SEPARATOR.match(lines[i + 1])):  # not a header
            return Status("row", m.group(2), i, i, i)
    return None


def set_status(text: str, value: str) -> str:
    """``text`` with its status line saying ``value`` (the rest of the document as it was,
    byte for byte). Raises ValueError when the document states no status."""
    found = find(text)
    if found is None:
        raise ValueError("the document states no status")
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = _lines(text)
    if found.form == "front-matter":
        key = lines[found.line].split(":", 1)[0]
        old = lines[found.line].split(":", 1)[1].strip()
        quote = old[0] if old[:1] in ("'", '"') and old[-1:] == old[:1] else ""
        lines[found.line] = f"{key}: {quote}{value}{quote}"
    elif found.form == "bullet":
        m = _BULLET.match(lines[found.line])
        assert m is not None
        lines[found.line] = m.group(1) + value
    elif found.form == "row":
        m = _ROW.match(lines[found.line])
        assert m is not None
        lines[found.line] = m.group(1) + value + m.group(3)
    elif found.last < found.first:  # an empty section: the status goes after the heading
        lines[found.line + 1:found.line + 1] = ["", value]
    else:
        indent = lines[found.line][:len(lines[found.line]) - len(lines[found.line].lstrip())]
        lines[found.line] = indent + value
    return newline.join(lines)


def add_status_line(text: str, line: str) -> str:
    """Add a line to the status (adr-tools' ``Supersedes [...]``): after the section's last
    line; in front matter or a bullet, nothing is added (their status is one value)."""
    found = find(text)
    if found is None or found.form != "section":
        return text
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = _lines(text)
    at = max(found.last, found.line) + 1
    lines[at:at] = ["", line]
    return newline.join(lines)


def matching_case(word: str, current: str) -> str:
    """``word`` in the case the document already uses (MADR writes ``accepted``, adr-tools
    ``Accepted``)."""
    if current and current[:1].islower():
        return word.lower()
    return word


def core(data: bytes) -> str:
    """A short digest of what a review of ``data`` is about: the text without its status
    and with runs of spaces inside lines, trailing spaces, runs of blank lines and line
    endings normalised."""
    text = data.decode("utf-8", "surrogateescape")
    found = find(text)
    lines = _lines(text)
    if found is not None:
        if found.form == "section":
            del lines[found.first:found.last + 1]
        else:
            del lines[found.line]
    out: list[str] = []
    for line in lines:
        body = line.lstrip()
        line = line[:len(line) - len(body)] + " ".join(body.split())  # indentation is meaning
        if not line and out and not out[-1]:
            continue  # runs of blank lines count as one
        out.append(line)
    while out and not out[-1]:
        out.pop()
    while out and not out[0]:
        out.pop(0)
    digest = hashlib.sha256("\n".join(out).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:16]


def document_title(path: str, data: bytes | None) -> str:
    """The document's first heading (after any front matter: MADR's template opens its front
    matter with a ``# ...`` YAML comment), else its file name."""
    if data:
        text = data.decode("utf-8", "replace")
        if text.startswith("---"):
            end = _FRONT_END.search(text[3:])
            if end:
                text = text[3 + end.end():]
        m = _TITLE.search(text)
        if m:
            return m.group(1)
    return posixpath.splitext(posixpath.basename(path))[0].replace("-", " ").replace("_", " ")


def superseded_by(text: str) -> str | None:
    """What supersedes the document, as its status says (``Superseded by [4. Title](...)``,
    MADR's ``superseded by [ADR-0004](...)``): the link's text, else its target."""
    found = find(text)
    if found is None:
        return None
    block = "\n".join(_lines(text)[min(found.first, found.line):max(found.last, found.line) + 1])
    m = _SUPERSEDED_BY.search(block)
    if m is None:
        return None
    return m.group(1).strip() or (m.group(2) or "").strip() or None


class Governs:
    """The paths a decision says it governs (repository-relative globs), and the line (1-based)
    that says so; ``bad``: a value that is not a path, for the message."""

    __slots__ = ("bad", "line", "paths")

    def __init__(self, paths: tuple[str, ...], line: int, bad: str = "") -> None:
        self.paths, self.line, self.bad = paths, line, bad

    def __repr__(self) -> str:
        return f"Governs({self.paths!r}, line={self.line})"


def _path_items(value: str) -> list[str]:
    """``a, b``, ``[a, "b"]``, `` `a` `` -> the paths, unquoted."""
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    items = [_unquote(v.strip().strip("`").strip()) for v in value.split(",")]
    return [i for i in items if i]


def _front_governs(lines: list[str]) -> Governs | None:
    for i, line in _front(lines):
        m = _FRONT_GOVERNS.match(line)
        if m is None:
            continue
        if m.group(2):
            value = m.group(2)
            if value.startswith(("{", "|", ">", "&", "*", "!")):
                return Governs((), i + 1, value)
            return Governs(tuple(_path_items(value)), i + 1)
        items = []
        for line in lines[i + 1:]:
            item = _FRONT_ITEM.match(line)
            if item is None:
                break
            if item.group(1).startswith(("{", "[", "- ")) or item.group(1).endswith(":"):
                return Governs((), i + 1, item.group(1))
            items.append(_unquote(item.group(1)))
        return Governs(tuple(i for i in items if i), i + 1)
    return None


def governs(text: str) -> Governs | None:
    """What the document says it governs (the first form found wins), or None."""
    lines = _lines(text)
    found = _front_governs(lines)
    if found is not None:
        return found
    for i, line in unfenced(lines):
        if _GOVERNS_SECTION.match(line):
            items = []
            for body in lines[i + 1:]:
                if _HEADING.match(body):
                    break
                body = body.strip()
                if body:
                    items += _path_items(body[1:] if body[:1] in "*-" else body)
            return Governs(tuple(items), i + 1)
        m = _GOVERNS_LINE.match(line) or _GOVERNS_ROW.match(line)
        if m:
            return Governs(tuple(_path_items(m.group(1))), i + 1)
    return None
