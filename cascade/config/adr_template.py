"""An ADR template, found and filled (``cascade new``, docs/cli.md): the repository's own
(cascade.config.adr_conventions) in the new document's folder or the rule's, else
``templates/documents/adr.md``. Filled with plain replacements, no Jinja2: adr-tools'
``NUMBER``, ``TITLE``, ``DATE``, ``STATUS``; the first heading, front matter
``title:``/``date:``/``nav_order:``, a ``Date:`` bullet or table row; status ``Proposed`` in
the template's case (one that states none gets ``status: proposed`` front matter: _add_status).
And the status line of a superseded record, in its tool's form.
"""
from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

from cascade.base import docstatus
from cascade.base.docstatus import unfenced
from cascade.base.errors import CascadeError
from cascade.base.resources import search_path
from cascade.base.safepath import read_inside
from cascade.config.adr_conventions import PROPOSED, TEMPLATE_FILES, TEMPLATE_GLOBS

_UNNUMBERED = re.compile(r"(?:\{\{[ \t]*NUMBER[ \t]*\}\}|\bNUMBER\b)\.?[ \t]*")
_TOKEN = re.compile(r"\{\{[ \t]*(NUMBER|TITLE|DATE|STATUS)[ \t]*\}\}|\b(NUMBER|TITLE|DATE|STATUS)\b")
_H1 = re.compile(r"^#[ \t]+(.*?)[ \t#]*$")
_DATE_BULLET = docstatus.line_form("bullet", "date")
_DATE_LINE = re.compile(r"^(date[ \t]*:[ \t]*)([\[{].*|.*YYYY.*)$", re.IGNORECASE)
_DATE_ROW = docstatus.line_form("row", "date")  # opendatahub: | Date | insert date |
_MADR = re.compile(r"^##[ \t]+Context and Problem Statement", re.IGNORECASE | re.MULTILINE)  # in every MADR
_COMMENTED_STATUS = re.compile(r"^#[ \t]*status[ \t]*:", re.IGNORECASE)  # MADR 4's docs/decisions


def find_template(root: Path, folders: list[str]) -> tuple[str, str]:
    """The repository's own template for a new document (or the built-in one), and where it
    came from."""
    for folder in dict.fromkeys(folders):
        base = root / folder
        names = list(TEMPLATE_FILES) + sorted(p.relative_to(base).as_posix()
                                              for pattern in TEMPLATE_GLOBS
                                              for p in base.glob(pattern))
        for name in names:
            rel = posixpath.join(folder, name) if folder else name
            if os.path.lexists(root / rel) and not (root / rel).is_dir():
                return decode(read_inside(root, rel, "the template"), root / rel), rel
    for folder in search_path("templates", root):
        path = folder / "documents" / "adr.md"
        if path.is_file():
            try:
                rel = path.relative_to(root).as_posix()
                data = read_inside(root, rel, "the template")
            except ValueError:  # bundled
                data = path.read_bytes()
                return decode(data, path), "the built-in ADR template"
            return decode(data, path), rel
    raise CascadeError("no ADR template: templates/documents/adr.md is missing")


def decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CascadeError(f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
                           f"{exc.start})", path) from None


def fill(text: str, *, number: str, title: str, date: str, status: str = PROPOSED) -> str:
    """A template with its placeholders filled: adr-tools' tokens, else the first heading and
    front matter ``title:``; the status in the template's own case; the date."""
    values = {"NUMBER": number, "TITLE": title, "DATE": date, "STATUS": status}
    if not number:  # a folder of unnumbered records: "# NUMBER. TITLE" is "# TITLE"
        text = _UNNUMBERED.sub("", text)
    seen: set[str] = set()

    def token(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        seen.add(name)
        return values[name]

    text = _TOKEN.sub(token, text)
    if "TITLE" not in seen:
        text = _set_title(text, title)
    if number.isdigit():  # MADR's own docs order their pages by number (Just the Docs)
        text = _set_front(text, "nav_order", number) or text
    found = docstatus.find(text)
    if found is not None:
        text = docstatus.set_status(text, docstatus.matching_case(status, _bare(found.value)))
    else:
        text = _add_status(text, status)
    return _set_date(text, date)


def _add_status(text: str, status: str) -> str:
    """A template with front matter, or MADR's, that states no status gets one, so the review
    can move it (a rule's ``status:``) and a later document can supersede it: ``status:
    proposed`` in the front matter, in place of a commented-out ``# status:`` line (MADR 4's
    own ``docs/decisions``); MADR's minimal template gets front matter for it. Other
    templates are left as they are."""
    lines = text.split("\n")
    cr = "\r" if lines[0].endswith("\r") else ""
    front = _front_end(lines)
    line = f"status: {status.lower()}{cr}"
    if front > 0:
        at = next((i for i in range(1, front) if _COMMENTED_STATUS.match(lines[i])), None)
        if at is None:
            lines.insert(1, line)
        else:
            lines[at] = line
    elif _MADR.search(text):
        lines[0:0] = ["---" + cr, line, "---" + cr]
    return "\n".join(lines)


def _bare(value: str) -> str:
    """A status placeholder without its brackets: ``{proposed | accepted}`` -> ``proposed ...``."""
    return value.lstrip("{[(\"' \t")


def _front_end(lines: list[str]) -> int:
    """The index of the line closing the leading front matter, or -1 when there is none."""
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                return i
    return -1


def _replace(line: str, pattern: re.Pattern[str], value: str) -> str:
    """``line`` (maybe ending in ``\\r``) with its value replaced, keeping quotes."""
    end = "\r" if line.endswith("\r") else ""
    m = pattern.match(line.rstrip("\r"))
    assert m is not None
    old = m.group(2)
    quote = old[0] if old[:1] in ("'", '"') and old[-1:] == old[:1] and len(old) > 1 else ""
    return f"{m.group(1)}{quote}{value}{quote}{end}"


def _set_front(text: str, name: str, value: str) -> str | None:
    """``text`` with its front matter's key ``name`` saying ``value``; None: it has no such key."""
    lines = text.split("\n")
    key = docstatus.line_form("front-matter", name)
    for i in range(1, _front_end(lines)):
        if key.match(lines[i].rstrip("\r")):
            lines[i] = _replace(lines[i], key, value)
            return "\n".join(lines)
    return None


def _set_title(text: str, title: str) -> str:
    text = _set_front(text, "title", title) or text
    lines = text.split("\n")
    front = _front_end(lines)
    for i, line in unfenced(lines, front + 1):
        if _H1.match(line.rstrip("\r")):
            lines[i] = f"# {title}" + ("\r" if line.endswith("\r") else "")
            return "\n".join(lines)
    if front < 0:
        return "\n".join([f"# {title}", ""] + lines)
    return "\n".join(lines[:front + 1] + ["", f"# {title}"] + lines[front + 1:])


def _set_date(text: str, date: str) -> str:
    dated = _set_front(text, "date", date)
    if dated is not None:
        return dated
    lines = text.split("\n")
    for i, line in unfenced(lines, _front_end(lines) + 1):
        for pattern in (_DATE_BULLET, _DATE_LINE):
            if pattern.match(line.rstrip("\r")):
                lines[i] = _replace(line, pattern, date)
                return "\n".join(lines)
        row = _DATE_ROW.match(line.rstrip("\r"))
        if row:
            lines[i] = row.group(1) + date + row.group(3) + ("\r" if line.endswith("\r") else "")
            return "\n".join(lines)
    return text


def heading(text: str, fallback: str) -> str:
    """A document's title as adr-tools links to it: its first ``# `` heading (after any front
    matter), e.g. ``9. Use MySQL``."""
    lines = text.split("\n")
    for _, line in unfenced(lines, _front_end(lines) + 1):
        m = _H1.match(line.rstrip("\r"))
        if m and m.group(1):
            return m.group(1)
    return fallback


def superseded_status(status: docstatus.Status, new_text: str, ident: str, link: str) -> str:
    """The status of a record superseded by the new one (its text ``new_text``, its number
    ``ident``) at ``link``, in the case its status is written in: adr-tools' ``Superseded by
    [5. Title](0005-title.md)`` (the heading as the link text) in a ``## Status`` section,
    MADR's ``superseded by [ADR-0005](0005-title.md)`` in any other form (log4brains' date-named
records: ``superseded by [20201002-title](20201002-title.md)``, its slug)."""
    word = docstatus.matching_case("Superseded by", _bare(status.value))
    if status.form == "section":
        return f"{word} [{heading(new_text, ident)}]({link})"
    if len(ident) == 8 and ident.isdigit():  # log4brains names a record by its slug
        label = posixpath.splitext(posixpath.basename(link.rstrip("/")))[0]
    else:
        label = ident if not ident[:1].isdigit() else f"ADR-{ident}"
    return f"{word} [{label}]({link})"
