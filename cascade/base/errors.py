"""The one error type the CLI turns into a clean, one-line message."""
from __future__ import annotations

import contextlib
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

    @property
    def errors(self) -> list[CascadeError]:
        """The failures it stands for, each one line: itself (CascadeErrors: several)."""
        return [self]


class CascadeErrors(CascadeError):
    """Several expected failures found in one pass (every error of a rule file), each its own
    line ``path:line: message`` in ``str(err)``, in the order found. ``message``, ``path``
    and ``line`` are the first's; the exit code too."""

    def __init__(self, errors: list[CascadeError]) -> None:
        first = errors[0]
        super().__init__(first.message, exit_code=first.exit_code)
        self.path, self.line = first.path, first.line
        self._errors = list(errors)

    @property
    def errors(self) -> list[CascadeError]:
        return self._errors

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self._errors)


def in_order(errors: list[CascadeError]) -> list[CascadeError]:
    """Errors in the order of their files and lines."""
    return sorted(errors, key=lambda e: (e.path or "", e.line or 0))


class Found:
    """Errors kept as they are found (in ``errors``), to be raised all at once (raise_all):
    ``take(reader, *args)`` is the reader's answer, or None when it raised (its error kept);
    ``with found.kept():`` keeps the error of a block instead of stopping there."""

    def __init__(self, errors: list[CascadeError] | None = None) -> None:
        self.errors = errors if errors is not None else []

    def take(self, reader, *args):
        with self.kept():
            return reader(*args)
        return None

    @contextlib.contextmanager
    def kept(self):
        try:
            yield
        except CascadeError as exc:
            self.errors.extend(exc.errors)


def raise_all(errors: list[CascadeError]) -> None:
    """Raise what ``errors`` found: nothing, the one error as it is, or them all at once."""
    found = [one for e in errors for one in e.errors]
    if len(found) == 1:
        raise found[0]
    if found:
        raise CascadeErrors(found)


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
