"""The repository's edge: paths cascade reads or writes stay inside the work tree and never
pass through a symbolic link.

A ``Source:`` header, a rule's ``discussion:`` path or ``cascade new --source`` is data someone
wrote, and a symbolic link is one line in a commit: followed, either would carry
``~/.pgpass`` to a model, or a ledger write out of the repository. So a path that is absolute
or climbs out with ``..`` is refused, and so is one where the file, or a folder of it below
the top, is a symbolic link (``lstat``; the final open uses ``O_NOFOLLOW``): one line naming
the path, exit 2. The repository's own configuration is read the same way (``read_config``):
a persona's text is part of a prompt. A path a person types may be absolute or relative to
the current folder, but must lie inside the work tree (``refuse_outside``).
"""
from __future__ import annotations

import errno
import os
import posixpath
from pathlib import Path

from cascade.base.errors import CascadeError
from cascade.base.resources import is_bundled

__all__ = ["relative", "first_link", "refuse_links", "read_inside", "check_local", "open_nofollow",
           "read_config", "refuse_outside", "LINK_HINT"]

LINK_HINT = "cascade never follows one (put the file itself there)"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def relative(rel: str) -> str | None:
    """``rel`` normalised ('a/./b' -> 'a/b'), or None when it leaves the work tree: absolute,
    a drive letter, '~', or climbing out with '..'."""
    text = str(rel).replace("\\", "/")
    if not text or text.startswith(("/", "~")) or (len(text) > 1 and text[1] == ":"):
        return None
    norm = posixpath.normpath(text)
    if norm == "." or norm == ".." or norm.startswith("../"):
        return None
    return norm


def first_link(root: Path, rel: str) -> str | None:
    """The first of ``rel``'s folders, or ``rel`` itself, that is a symbolic link below
    ``root`` (repository-relative), or None. Components that do not exist yet are fine."""
    parts = rel.split("/")
    path = root
    for i, part in enumerate(parts):
        path = path / part
        try:
            if path.is_symlink():
                return "/".join(parts[: i + 1])
        except OSError:
            return None
        if not path.exists():
            return None
    return None


def refuse_links(root: Path, rel: str, what: str, *, where: str | os.PathLike[str] | None = None,
                 line: int | None = None) -> str:
    """``rel`` normalised, or a one-line error (exit 2) when it leaves the work tree or
    passes through a symbolic link. ``what`` names the path in the message ("the document",
    "the ledger"); ``where``/``line`` name the file that asked for it (a ledger's header)."""
    norm = relative(rel)
    if norm is None:
        raise CascadeError(f"{what} {rel!r} is outside the repository: cascade reads and "
                           "writes only files inside it", where if where is not None else rel,
                           line)
    link = first_link(root, norm)
    if link is not None:
        through = "is" if link == norm else f"passes through {link}, which is"
        raise CascadeError(f"{what} {norm} {through} a symbolic link: {LINK_HINT}",
                           where if where is not None else root / norm, line)
    return norm


def read_inside(root: Path, rel: str, what: str, *, where: str | os.PathLike[str] | None = None,
                line: int | None = None) -> bytes:
    """The bytes of a regular file inside the work tree, never through a symbolic link.
    FileNotFoundError when it does not exist; other OS errors as OSError."""
    norm = refuse_links(root, rel, what, where=where, line=line)
    try:
        fd = os.open(root / norm, os.O_RDONLY | _NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # swapped for a link since the check
            raise CascadeError(f"{what} {norm} is a symbolic link: {LINK_HINT}",
                               where if where is not None else root / norm, line) from None
        raise
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def _lexical_top(path: Path) -> Path | None:
    """The repository top above ``path`` found without resolving links (resolving would walk
    up from a link's target instead). A top (a folder with ``.git`` or ``.cascade``) reached
    through a link counts only when the command runs in it (a home folder that is a link):
    another work tree that a link below the top leads into does not, else that link would
    go unseen."""
    try:
        here = os.getcwd()
    except OSError:
        here = ""
    nearest = None
    for folder in path.parents:
        if (folder / ".git").exists() or (folder / ".cascade").is_dir():
            real = os.path.realpath(folder)
            inside = here == real or here.startswith(real.rstrip(os.sep) + os.sep)
            if real == str(folder) or inside:
                return folder
            nearest = nearest or folder
    return nearest


def check_local(path: str | os.PathLike[str], what: str) -> None:
    """Refuse (one line, exit 2) a file to read or write whose folders below the repository
    top, or which itself, is a symbolic link. Outside a repository only the file is checked."""
    p = Path(os.path.abspath(path))
    top = _lexical_top(p)
    if top is not None:
        rel = p.relative_to(top).as_posix()
        link = first_link(top, rel)
        if link is not None:
            through = "is" if link == rel else f"passes through {link}, which is"
            raise CascadeError(f"{what} {through} a symbolic link: {LINK_HINT}", path)
    elif p.is_symlink():
        raise CascadeError(f"{what} is a symbolic link: {LINK_HINT}", path)


def open_nofollow(path: str | os.PathLike[str], what: str) -> bytes:
    """Read ``path`` after ``check_local``, refusing a final symbolic link at open time too."""
    check_local(path, what)
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise CascadeError(f"{what} is a symbolic link: {LINK_HINT}", path) from None
        raise
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def read_config(path: str | os.PathLike[str], what: str = "the configuration file") -> bytes:
    """A configuration file's bytes. The repository's own (a rule file, a preset, a persona, a
    protocol, a template) is refused (one line, exit 2) when it, or a folder of it below the
    repository top, is a symbolic link -- as ``open_nofollow``; a bundled one is read as it is."""
    if is_bundled(path):
        return Path(path).read_bytes()
    return open_nofollow(path, what)


def refuse_outside(root: Path, path: str | os.PathLike[str], what: str) -> Path:
    """``path`` as a person typed it (absolute, or relative to the current folder), when it
    lies inside the work tree ``root`` and no symbolic link below ``root`` leads to it; else a
    one-line error (exit 2) naming it. The path is followed as the system follows it: a link
    above the top (a home folder that is one) is taken, and ``..`` after a link climbs from
    where the link leads."""
    top = Path(os.path.realpath(root))
    given = Path(path)
    here = Path(given.anchor) if given.is_absolute() else Path(os.getcwd())
    parts = list(given.parts[1:] if given.is_absolute() else given.parts)
    hops = 0
    while parts:
        part = parts.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            here = here.parent
            continue
        step = here / part
        if step.is_symlink():
            if here == top or top in here.parents:
                link = step.relative_to(top).as_posix()
                through = "is" if not parts else f"passes through {link}, which is"
                raise CascadeError(f"{what} {through} a symbolic link: {LINK_HINT}", path)
            hops += 1
            if hops > 40:
                raise CascadeError(f"{what}: too many levels of symbolic links", path)
            target = Path(os.readlink(step))
            if target.is_absolute():
                here = Path(target.anchor)
                parts = list(target.parts[1:]) + parts
            else:
                parts = list(target.parts) + parts
            continue
        here = step
    if here != top and top not in here.parents:
        raise CascadeError(f"{what} is outside the repository ({top}): cascade reads and "
                           "writes only files inside it", path)
    return given
