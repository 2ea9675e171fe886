"""Reading files into a prompt, behind the secret boundary: files git ignores and
credential files are never read; everything read is redacted before it leaves."""
from __future__ import annotations

from pathlib import Path

from msgspec import Struct

from cascade.base.errors import CascadeError
from cascade.base.gitio import is_ignored
from cascade.base.safepath import read_inside, relative
from cascade.turns.redact import is_secret_file


class SourceText(Struct):
    path: str  # repository-relative
    text: str | None  # None when withheld or missing
    data: bytes | None
    note: str = ""  # why it is withheld, or that it is missing


def withheld_reason(root: Path, rel: str) -> str | None:
    if is_secret_file(rel):
        return "a credentials file: never sent to a model"
    if is_ignored(root, rel):
        return "ignored by git: never sent to a model"
    return None


def read_source(root: Path, rel: str, data: bytes | None = None, *,
                where: Path | str | None = None, line: int | None = None) -> SourceText:
    """The document under review: the given bytes (a blob git holds: staged, or the revision
    the ledger recorded) or the working tree. A path outside the work tree, or through a
    symbolic link, is refused (one line naming ``where``:``line``, the ledger's ``Source:``);
    the working tree is read with O_NOFOLLOW."""
    norm = relative(rel)
    if norm is None:
        raise CascadeError(f"Source {rel!r} is outside the repository: cascade sends only "
                           "files inside it to a model", where, line)
    reason = withheld_reason(root, norm)
    if reason:
        return SourceText(norm, None, None, reason)
    if data is None:
        try:
            data = read_inside(root, norm, "Source", where=where, line=line)
        except FileNotFoundError:
            return SourceText(norm, None, None, "no such file")
        except OSError as exc:
            return SourceText(norm, None, None, f"cannot read: {exc.strerror}")
    text = data.decode("utf-8", errors="replace")
    return SourceText(norm, text, data)
