"""Reading files into a prompt, behind the secret boundary: files git ignores and
credential files are never read; everything read is redacted before it leaves."""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from cascade.turns.redact import is_secret_file


@dataclass
class SourceText:
    path: str  # repository-relative
    text: str | None  # None when withheld or missing
    data: bytes | None
    note: str = ""  # why it is withheld, or that it is missing


def git_ignored(root: Path, rel: str) -> bool:
    try:
        proc = subprocess.run(["git", "check-ignore", "-q", "--no-index", "--", rel], cwd=root,
                              capture_output=True, check=False)
    except FileNotFoundError:
        return False
    return proc.returncode == 0


def withheld_reason(root: Path, rel: str) -> str | None:
    if is_secret_file(rel):
        return "a credentials file: never sent to a model"
    if git_ignored(root, rel):
        return "ignored by git: never sent to a model"
    return None


def read_source(root: Path, rel: str, data: bytes | None = None) -> SourceText:
    """The document under review: the given bytes (e.g. staged content) or the working tree."""
    reason = withheld_reason(root, rel)
    if reason:
        return SourceText(rel, None, None, reason)
    if data is None:
        try:
            data = (root / rel).read_bytes()
        except FileNotFoundError:
            return SourceText(rel, None, None, "no such file")
        except OSError as exc:
            return SourceText(rel, None, None, f"cannot read: {exc.strerror}")
    text = data.decode("utf-8", errors="replace")
    return SourceText(rel, text, data)
