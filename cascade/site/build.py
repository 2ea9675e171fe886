"""``cascade site [-o DIR]``: the repository's governed decisions as a static site in DIR
(default ``_site``), every link relative, nothing fetched from the network: docs/site.md says
what it writes. A DIR that is a file, or a folder holding something that is not a site of
ours, is refused: nothing of the user's is overwritten. ``--serve``: cascade.site.preview."""
from __future__ import annotations

import importlib.util
import json
import time
from functools import partial
from pathlib import Path

from cascade.base.atomic import atomic_write
from cascade.base.errors import CascadeError
from cascade.base.gitio import git_or_none, repo_root
from cascade.commands.stats import Stats, counted_as, tally
from cascade.site.charts import charts
from cascade.site.collect import Entry, collect
from cascade.site.pages import ASSETS, IMAGES, MARK, decision_page
from cascade.site.panel import CHARTS, panel_page
from cascade.site.preview import Preview
from cascade.site.style import CSS
from cascade.site.timeline import as_script, search_index, timeline

EXTRA = ("markdown_it", "nh3", "pygal")
PORT = 8000  # --serve's default
POLL = 1.0  # seconds between two looks at the files, with --serve


def _target(out: Path) -> None:
    """Refuse an output that is a file, or a folder of someone else's."""
    if out.exists() and not out.is_dir():
        raise CascadeError("is a file, not a folder: -o names the folder the site is written "
                           "to", out)
    if out.is_dir() and any(out.iterdir()):
        index = out / "index.html"
        if not (index.is_file() and MARK in index.read_text("utf-8", "replace")):
            raise CascadeError("is a folder that holds something other than a site cascade "
                               "wrote: name an empty or new folder", out)


def measured(root: Path, entries: list[Entry]) -> Stats:
    """``cascade stats``' figures, of the ledgers the site read."""
    items = [counted_as(e.discussion.opened, e.rule, e.source, e.discussion.ledger)
             for e in entries if e.discussion is not None and e.discussion.opened is not None]
    figures = tally(items, root)
    figures.unread = {e.discussion.ledger: e.discussion.error for e in entries
                      if e.discussion is not None and e.discussion.error}
    return figures


def write(root: Path, out: Path, entries: list[Entry], commit: str) -> int:
    """Every page into ``out``, and the images they show; the number of files written."""
    out.mkdir(parents=True, exist_ok=True)
    figures = measured(root, entries)
    drawn = charts(figures)
    files = {"index.html": timeline(entries, commit), "style.css": CSS,
             "stats.html": panel_page(figures, drawn, commit)}
    by_slug = {e.slug: e for e in entries}
    assets: set[str] = set()
    for e in entries:
        files[f"{e.slug}.html"] = decision_page(e, by_slug, commit, assets)
    index = search_index(entries)
    files["search.json"] = json.dumps(index, ensure_ascii=False, indent=0) + "\n"
    files["search.js"] = as_script(index)
    for name, text in files.items():
        atomic_write(out / name, text.encode("utf-8"), durable=False)  # built again at will
    (out / CHARTS).mkdir(exist_ok=True)
    for chart in drawn:
        atomic_write(out / CHARTS / f"{chart.name}.svg", chart.svg, durable=False)
    return len(files) + len(drawn) + copy_images(root, out / ASSETS, assets)


def copy_images(root: Path, into: Path, wanted: set[str]) -> int:
    """The images the documents show, copied below ``into``: each a regular file inside the
    repository (not reached through a link out of it), of a raster image type (``IMAGES``);
    the number copied."""
    count = 0
    top = root.resolve()
    for rel in sorted(wanted):
        source = root / rel
        if Path(rel).suffix.lower() not in IMAGES or not source.is_file():
            continue
        real = source.resolve()
        if not real.is_relative_to(top):
            continue
        (into / rel).parent.mkdir(parents=True, exist_ok=True)
        atomic_write(into / rel, real.read_bytes(), durable=False)  # built again at will
        count += 1
    return count


def build(root: Path, out: Path) -> None:
    """The site of ``root``'s decisions at its HEAD, written to ``out``."""
    head = git_or_none(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    commit = head.decode().strip() if head else ""
    entries = collect(root)
    count = write(root, out, entries, commit)
    decisions = sum(1 for e in entries if e.source)
    print(f"cascade site: {decisions} decision(s), {len(entries) - decisions} topic "
          f"discussion(s), {count} file(s) in {out}", flush=True)


def site(output: str | None = None, serve: bool = False, port: int = PORT) -> int:
    missing = [m for m in EXTRA if importlib.util.find_spec(m) is None]
    if missing:
        raise CascadeError(f"cascade site needs {', '.join(missing)}: pip install "
                           "'cascadingdev[site]'")
    root = repo_root()
    out = Path(output or root / "_site")
    _target(out)
    build(root, out)
    if not serve:
        return 0
    preview = Preview(root, out, partial(build, root, out))
    port = preview.start(port)
    print(f"cascade site: serving {out} at http://127.0.0.1:{port}/ (built again when a "
          "document, a ledger or a rule changes; Ctrl-C stops)", flush=True)
    try:
        while True:
            time.sleep(POLL)
            preview.poll()
    except KeyboardInterrupt:
        return 0
    finally:
        preview.stop()
