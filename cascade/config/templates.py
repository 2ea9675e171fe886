"""Jinja2 templates: discussion bodies and prompts. StrictUndefined: a missing variable is
an error naming the template, never a silent blank. Jinja2 is imported here only, and only
when something is rendered. A repository's own template (or one it includes) is read as
every configuration file is: never through a symbolic link (cascade.base.safepath.read_config)."""
from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from cascade.base.errors import CascadeError
from cascade.base.resources import search_path
from cascade.base.safepath import read_config
from cascade.config.yamlio import did_you_mean

# Other names a bundled template answers to (seed 002's `--template architecture-decision`),
# unless a template of that name exists: the repository's own stands.
ALIASES = {"discussions": {"architecture-decision": "adr"}}


def canonical(kind: str, name: str, root: Path | None) -> str:
    """The template ``name`` stands for: itself, or the one it is an alias of."""
    target = ALIASES.get(kind, {}).get(name)
    if target is None or name in available(kind, root):
        return name
    return target


def available(kind: str, root: Path | None) -> list[str]:
    names = set()
    for folder in search_path("templates", root):
        sub = folder / kind
        if sub.is_dir():
            names.update(p.name[: -len(".md.j2")] for p in sub.glob("*.md.j2"))
    return sorted(names)


def known(kind: str, name: str, root: Path | None) -> bool:
    """Whether ``name`` is a template of ``kind`` (or an alias of one), without Jinja2."""
    return name in ALIASES.get(kind, {}) or name in available(kind, root)


def unknown(kind: str, name: str, root: Path | None) -> CascadeError:
    """The error for a template name that is none: the available ones, and the one it is
    near."""
    aliases = [f"{a} ({t})" for a, t in ALIASES.get(kind, {}).items()]
    have = ", ".join(available(kind, root) + aliases) or "none"
    return CascadeError(f"unknown {kind[:-1] if kind.endswith('s') else kind} template "
                        f"{name!r} (available: {have})"
                        + did_you_mean(name, [*available(kind, root), *ALIASES.get(kind, {})]))


@functools.lru_cache(maxsize=16)
def _environment(folders: tuple[Path, ...]) -> Any:
    import jinja2  # Jinja2 only where a template is rendered

    return jinja2.Environment(
        loader=jinja2.FunctionLoader(functools.partial(_source, folders)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # markdown, not HTML
        # Compiled templates kept between runs (Jinja2's own per-user temp folder, checked for
        # ownership; keyed by the template's source): 20-30 ms of every run that renders one.
        bytecode_cache=jinja2.FileSystemBytecodeCache(),
    )


def _source(folders: tuple[Path, ...], name: str) -> tuple[str, str, Any] | None:
    """Template ``name``'s text, file and up-to-date check, from the first folder that has it
    (None: none has). As Jinja2's FileSystemLoader finds it (no ``..`` in a name), but read
    with read_config: a link where a template is looked up is refused, never skipped."""
    from jinja2.loaders import split_template_path  # Jinja2 only where a template is rendered

    pieces = split_template_path(name)
    for folder in folders:
        path = folder.joinpath(*pieces)
        if path.is_file() or path.is_symlink():
            text = read_config(path, "the template").decode("utf-8")
            stamp = _stamp(path)
            return (text.replace("\r\n", "\n").replace("\r", "\n"), os.path.normpath(path),
                    lambda: stamp is not None and _stamp(path) == stamp)
    return None


def _stamp(path: Path) -> int | None:
    try:
        return os.lstat(path).st_mtime_ns
    except OSError:
        return None


def render(kind: str, name: str, root: Path | None, **variables: Any) -> str:
    """Render ``templates/<kind>/<name>.md.j2`` (the repository's own copy wins)."""
    import jinja2  # Jinja2 only where a template is rendered

    folders = tuple(search_path("templates", root))
    env = _environment(folders)
    rel = f"{kind}/{canonical(kind, name, root)}.md.j2"
    try:
        template = env.get_template(rel)
    except jinja2.TemplateNotFound as exc:
        if exc.name != rel:  # {% extends %} or {% include %} of a missing one, in a template
            raise CascadeError(f"template error: no template {exc.name!r}",
                               _where(folders, rel)) from None
        # No file is wrong: whoever asked for the name (a rule, the command line) says where.
        raise unknown(kind, name, root) from None
    except jinja2.TemplateSyntaxError as exc:
        raise CascadeError(f"template syntax error: {exc.message}", exc.filename, exc.lineno) from None
    except UnicodeDecodeError as exc:
        raise CascadeError(f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
                           f"{exc.start})", _where(folders, rel)) from None
    except OSError as exc:
        raise CascadeError(f"cannot read: {exc.strerror or exc}", _where(folders, rel)) from None
    try:
        return template.render(**variables)
    except jinja2.TemplateSyntaxError as exc:  # in a template it includes
        raise CascadeError(f"template syntax error: {exc.message}", exc.filename, exc.lineno) from None
    except jinja2.TemplateNotFound as exc:
        raise CascadeError(f"template error: no template {exc.name!r}", template.filename) from None
    except jinja2.TemplateError as exc:
        raise CascadeError(f"template error: {exc.message or type(exc).__name__}",
                           template.filename) from None
    except CascadeError:  # a template it includes, refused (a symbolic link): named itself
        raise
    except Exception as exc:  # noqa: BLE001 - a repository's template failing as it renders
        raise CascadeError(f"template error: {type(exc).__name__}: {exc}", template.filename) from None


def _where(folders: tuple[Path, ...], rel: str) -> Path | None:
    """The file of ``rel`` that the loader uses (the first folder that has it)."""
    return next((f / rel for f in folders if (f / rel).is_file()), None)
