"""The reply cache: one prompt is never paid for twice.

Keyed by persona, model and a hash of the exact messages sent; stored under the repository's
git directory (``.git/cascade/replies``), else the user's cache folder. A rerun after
pre-commit threw the appended text away sends the same prompt, so it costs no call.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from cascade.base.atomic import atomic_write
from cascade.base.errors import CascadeError, os_error_line
from cascade.base.gitio import git_dir_or_none

VERSION = 1


def prompt_key(alias: str, model: str, messages: list[dict[str, Any]]) -> str:
    blob = json.dumps({"v": VERSION, "persona": alias, "model": model, "messages": messages},
                      sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def cache_dir(root: Path) -> Path:
    override = os.environ.get("CASCADE_CACHE_DIR")
    if override:
        return Path(override)
    git_dir = git_dir_or_none(root)
    if git_dir is not None:
        return git_dir / "cascade" / "replies"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "cascade" / "replies"


class ReplyCache:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._warned = False  # one warning: every put after a failure likely fails alike

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            data = json.loads(self._path(key).read_text("utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and "text" in data else None

    def put(self, key: str, record: dict[str, Any]) -> None:
        """Store a reply. A cache that cannot be written (disk full, file too large, no
        permission, ...) costs money, not correctness: the turn goes on, and the first such
        failure is reported once, on stderr, as a warning."""
        path = self._path(key)
        if path.parent.is_symlink():  # never written through a link (the entry: atomic_write)
            self._warn(f"{path.parent}: a symbolic link, not followed")
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # a cache: atomic, not durable (a torn entry after a power loss reads as a miss)
            atomic_write(path, json.dumps(record, ensure_ascii=False).encode("utf-8"),
                         durable=False)
        except OSError as exc:
            self._warn(os_error_line(exc))
        except CascadeError as exc:  # a symbolic link where the entry goes: not followed
            self._warn(str(exc))

    def _warn(self, reason: str) -> None:
        if self._warned:
            return
        self._warned = True
        try:
            print(f"cascade: warning: reply cache not written: {reason} (the "
                  "same prompt will be asked again)", file=sys.stderr, flush=True)
        except (OSError, ValueError):  # no stderr to tell: the cache is still optional
            pass
