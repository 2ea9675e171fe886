"""The one error type the CLI turns into a clean, one-line message."""
from __future__ import annotations

import os
from pathlib import Path


class CascadeError(Exception):
    """An expected failure: bad input or configuration. Exit code 2 unless told otherwise.

    ``str(err)`` is the one line the user sees: ``path:line: message``.
    """

    exit_code = 2

    def __init__(self, message: str, path: str | os.PathLike[str] | None = None,
                 line: int | None = None, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = display_path(path) if path is not None else None
        self.line = line
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        where = ""
        if self.path:
            where = f"{self.path}:{self.line}: " if self.line else f"{self.path}: "
        return f"{where}{self.message}"


def display_path(path: str | os.PathLike[str]) -> str:
    """A path as the user would type it: relative to the cwd when below it -- where it is,
    when it is a symbolic link (or in a folder that is one) leading elsewhere."""
    p = Path(path)
    try:
        cwd = Path.cwd().resolve()
        return str(p.resolve().relative_to(cwd))
    except OSError:
        return str(p)
    except ValueError:
        pass
    if ".." not in p.parts:  # lexically: '..' after a link would climb from where it leads
        try:
            return str(Path(os.path.abspath(p)).relative_to(cwd))
        except ValueError:
            pass
    return str(p)


def os_error_line(exc: OSError) -> str:
    """An operating-system error as the user reads it: ``path: reason`` (``reason`` alone when
    the error names no file), the reason being the system's, e.g. ``No space left on device``."""
    reason = exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc))
    if exc.filename is None:
        return reason
    name = os.fsdecode(exc.filename) if isinstance(exc.filename, (str, bytes, os.PathLike)) \
        else str(exc.filename)
    return f"{display_path(name)}: {reason}"


def is_config_path(path: str | bytes | os.PathLike[str] | int) -> bool:
    """A repository configuration file: a ``.ai-rules.yml`` (any folder) or anything below a
    ``.cascade/`` folder. Their failures are configuration errors (exit code 2)."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        return False
    p = Path(os.fsdecode(path))
    return p.name == ".ai-rules.yml" or ".cascade" in p.parts[:-1]
