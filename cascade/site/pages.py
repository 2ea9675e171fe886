"""The site's pages as HTML strings. Every value from a document or a ledger passes through
``esc`` (text) or ``markdown_html`` (markdown, sanitised): cascade.site.render. Built with
string joins rather than Jinja2: the pages are a few tables and lists, one escaping function
covers every value, and no template language (its own escaping rules and ``|safe``) stands
between a value and the page."""
from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, unquote

from cascade.site.collect import Entry, Review
from cascade.site.render import esc, markdown_html

ASSETS = "files"  # where the images the documents show are copied, below the site
# The images copied: raster only. Opened on its own (a link to its copy), an SVG's scripts
# would run in the site's origin.
IMAGES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
MARK = "by cascade site."  # in every page's footer: a folder holding it is a site of ours
_FRONT = re.compile(r"\A---\n(.*?\n)---\n", re.S)


def layout(title: str, body: str, commit: str, script: str = "") -> str:
    """A whole page: the stylesheet beside it, the timeline's link, the commit it shows. Its
    icon is empty and inline: a browser asks a host for /favicon.ico otherwise, and logs the
    404 on the console of every page."""
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><link rel=\"icon\" href=\"data:,\">"
            "<link rel=\"stylesheet\" href=\"style.css\"></head>\n"
            f"<body><header><a href=\"index.html\">Decision log</a> "
            f"<a href=\"stats.html\">The panel</a></header>\n<main>\n{body}\n"
            f"</main>\n<footer>Built from commit <code>{esc(commit[:12] or 'none')}</code> "
            f"{MARK}</footer>{script}</body></html>\n")


def table(head: Iterable[str], rows: Iterable[Iterable[str]], attrs: str = "") -> str:
    """A table; ``head`` is text (escaped here), each cell already HTML."""
    out = [f"<table{attrs}><thead><tr>"
           + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    out += ["<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows]
    return "\n".join(out) + "</tbody></table>"


def link(slug: str, text: str) -> str:
    return f"<a href=\"{esc(slug)}.html\">{esc(text)}</a>"


def badge(kind: str, text: str) -> str:
    word = re.sub(r"[^a-z]", "", text.split(" ")[0].lower()) or "none"
    return f"<span class=\"{esc(kind)} {esc(kind)}-{esc(word)}\">{esc(text)}</span>"


def gate_text(review: Review | None) -> str:
    """The gate's verdict, as ``cascade status`` gives it: ok or blocked, and why."""
    if review is None:
        return ""
    if review.error:
        return f"error: {review.error}"
    gate = review.data.get("gate")
    if not gate:
        return ""
    return ("ok" if gate["ok"] else "blocked") + f": {gate['reason']}"


def document(e: Entry, pages: dict[str, str], assets: set[str]) -> str:
    """A document: its front matter as it is written, then its markdown rendered; a link to
    another governed document leads to its page (``pages``: slug by document), an image
    beside it to its copy under ``files/`` (added to ``assets``, repository-relative)."""
    text = e.text
    m = _FRONT.match(text)
    front = ""
    if m:
        front = f"<pre class=\"front\">{esc(m.group(1))}</pre>\n"
        text = text[m.end():]
    folder = posixpath.dirname(e.source)

    def relink(attribute: str, url: str) -> str | None:
        path, _, anchor = url.partition("#")
        target = posixpath.normpath(posixpath.join(folder, unquote(path.split("?")[0])))
        outside = not path or path.startswith("/") or target.split("/")[0] == ".."
        if attribute == "src":  # an image of the repository's, copied; no other
            if outside or posixpath.splitext(target)[1].lower() not in IMAGES:
                return None
            assets.add(target)
            return f"{ASSETS}/{quote(target)}"
        if outside:
            return url
        return (f"{pages[target]}.html" + (f"#{anchor}" if anchor else "")) if target in pages \
            else url

    return f"{front}<article class=\"doc\">{markdown_html(text, relink)}</article>"


def meta(e: Entry, by_slug: dict[str, Entry]) -> str:
    rows = [("Status", badge("status", e.status or "-")),
            ("Review", badge("review", e.review)),
            ("Gate", esc(gate_text(e.discussion) or "-"))]
    if e.source:
        rows.append(("Document", f"<code>{esc(e.source)}</code>"))
    if e.discussion:
        rows.append(("Ledger", f"<code>{esc(e.discussion.ledger)}</code>"))
    rows.append(("Date", esc(e.date or "-")))
    if e.superseded:
        target = e.superseded_slug
        rows.append(("Superseded by", link(target, e.superseded) if target else esc(e.superseded)))
    if e.supersedes:
        rows.append(("Supersedes", ", ".join(link(s, _label(by_slug[s])) for s in e.supersedes)))
    line = chain(e, by_slug)
    if len(line) > 2:  # two: the rows above say it
        rows.append(("Chain", " &rarr; ".join(
            f"<strong>{esc(_label(x))}</strong>" if x is e else link(x.slug, _label(x))
            for x in line)))
    return ("<dl class=\"meta\">" + "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in rows)
            + "</dl>")


def chain(e: Entry, by_slug: dict[str, Entry]) -> list[Entry]:
    """The supersession chain through ``e``, oldest first: back through the first of what
    each supersedes, forward through what supersedes each (a cycle stops it)."""
    seen = {e.slug}

    def walk(step) -> list[Entry]:
        out, x = [], e
        while (slug := step(x)) and slug not in seen:
            x = by_slug[slug]
            seen.add(x.slug)
            out.append(x)
        return out

    back = walk(lambda x: x.supersedes[0] if x.supersedes else "")
    return back[::-1] + [e] + walk(lambda x: x.superseded_slug)


def _label(e: Entry) -> str:
    return f"{e.number} {e.title}".strip()


def drift_section(drift: dict[str, Any] | None) -> str:
    """``governs:`` and what changed the governed paths since the decision was accepted."""
    if not drift:
        return ""
    out = ["<section id=\"drift\"><h2>Governs and drift</h2>",
           "<p>Governs: " + ", ".join(f"<code>{esc(g)}</code>" for g in drift["governs"])
           + "</p>"]
    if not drift["accepted"]:
        out.append("<p>The commit that accepted it is not in the history: not checked.</p>")
    elif not drift["commits"]:
        out.append(f"<p>Accepted at <code>{esc(drift['accepted'][:12])}</code> "
                   f"({esc(drift['accepted_date'])}); no commit since changed the paths it "
                   "governs.</p>")
    else:
        out.append(f"<p class=\"drifted\">Drifted: {len(drift['commits'])} commit(s) since it "
                   f"was accepted at <code>{esc(drift['accepted'][:12])}</code> "
                   f"({esc(drift['accepted_date'])}) changed the paths it governs.</p>")
        out.append(table(("Commit", "Date", "Author", "Subject", "Paths"), (
            (f"<code>{esc(c['commit'][:12])}</code>", esc(c["date"]), esc(c["author"]),
             esc(c["subject"]), esc(", ".join(c["paths"]))) for c in drift["commits"])))
    return "\n".join(out) + "</section>"


def decision_page(e: Entry, by_slug: dict[str, Entry], commit: str, assets: set[str]) -> str:
    heading = _label(e) if e.source else f"Discussion: {e.title}"
    body = [f"<h1>{esc(heading)}</h1>", meta(e, by_slug)]
    if e.source:
        pages = {x.source: x.slug for x in by_slug.values() if x.source}
        body.append(f"<section id=\"document\"><h2>Document</h2>{document(e, pages, assets)}"
                    "</section>")
    body.append(drift_section(e.drift))
    if e.discussion is not None:
        body.append(review_section(e.discussion))
    elif e.source:
        body.append("<section id=\"review\"><h2>Review</h2><p>Not reviewed: no ledger.</p>"
                    "</section>")
    return layout(heading, "\n".join(b for b in body if b), commit)


def review_section(r: Review) -> str:
    """A ledger's review: its state, votes, findings, questions, decisions and record."""
    if r.error:
        return (f"<section id=\"review\"><h2>Review</h2><p class=\"error\">{esc(r.error)}</p>"
                "</section>")
    d = r.data
    consensus = d["consensus"]
    said = (f"reached, {consensus['outcome']}" if consensus["reached"] else "not reached")
    out = ["<section id=\"review\"><h2>Review</h2>",
           "<dl class=\"meta\">" + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in (
               ("Protocol", d.get("protocol")), ("Phase", d.get("phase")),
               ("Outcome", d.get("outcome") or "-"),
               ("Consensus", f"{said} ({consensus['reason']})"),
               ("Participants", ", ".join(d.get("participants") or []) or "-"))) + "</dl>"]
    gate = d.get("gate")
    if gate:
        out.append(f"<p class=\"gate\">Gate for <code>{esc(gate['document'])}</code>: "
                   f"{badge('gate', 'ok' if gate['ok'] else 'blocked')} {esc(gate['reason'])}"
                   + (f"<br>Ways out: {esc(gate['ways_out'])}" if gate["ways_out"] else "")
                   + "</p>")
    out += [votes_section(r), findings_section(d["findings"]), questions_section(d),
            decisions_section(d), not_counted_section(d)]
    if r.record:
        out.append(f"<section id=\"record\"><h3>Record</h3><article class=\"doc\">"
                   f"{markdown_html(r.record)}</article></section>")
    out.append(comments_section(r))
    return "\n".join(x for x in out if x) + "</section>"


def comments_section(r: Review) -> str:
    """The discussion as the ledger holds it, folded, each comment sanitised as a document."""
    if not r.comments:
        return ""
    items = [f"<li><p><strong>{esc(c.author)}</strong>"
             + (f" {badge('vote', c.vote)}" if c.vote else "")
             + f" <small>({esc(c.origin)}, line {esc(c.line)})</small></p>"
             f"<article class=\"doc\">{markdown_html(c.body)}</article></li>"
             for c in r.comments]
    return (f"<details id=\"discussion\"><summary>The discussion ({len(r.comments)} "
            f"comment(s))</summary><ol>{''.join(items)}</ol></details>")


def votes_section(r: Review) -> str:
    if not r.votes:
        return "<h3>Panel</h3><p>No votes yet.</p>"
    rows, last = [], None
    for v in r.votes:  # ledger order: each revision's votes together
        shown = v.revision if v.revision != last else ""
        last = v.revision
        rows.append((f"<code>{esc(shown)}</code>" if shown else "", esc(v.author),
                     badge("vote", v.vote), esc(v.line)))
    current = r.data.get("votes") or {}
    now = ", ".join(f"{esc(k)}: {esc(v)}" for k, v in current.items())
    return ("<section id=\"panel\"><h3>Panel</h3>"
            + (f"<p>Counted for the current revision (after the findings' policy): {now}</p>"
               if now else "")
            + table(("Revision", "Who", "Vote", "Ledger line"), rows) + "</section>")


def findings_section(findings: list[dict[str, Any]]) -> str:
    if not findings:
        return "<section id=\"findings\"><h3>Findings</h3><p>None.</p></section>"
    rows = []
    for f in findings:
        lines = f["lines"]
        where = (f"line {lines[0]}" if lines and lines[0] == lines[1] else
                 f"lines {lines[0]}-{lines[1]}" if lines else "not located")
        how = ", ".join(f"{k}: {v}" for k, v in (f["closed_by"] or {}).items())
        what = esc(f["what"]) + "".join(
            f"<br><small>{esc(label)}: {esc(f[k])}</small>"
            for k, label in (("why", "why"), ("suggestion", "suggestion"), ("where", "where"))
            if f.get(k))
        what += "".join(f"<br><small>A: {esc(a['text'])} ({esc(a['author'])})</small>"
                        for a in f["answers"])
        rows.append((esc(f["id"]), badge("severity", f["severity"]), esc(where), what,
                     esc(f["author"]), badge("state", f["status"]) + (
                         f"<br><small>{esc(how)}</small>" if how else "")))
    return ("<section id=\"findings\"><h3>Findings</h3>"
            + table(("Id", "Severity", "Where", "What", "By", "State"), rows) + "</section>")


def questions_section(d: dict[str, Any]) -> str:
    items = []
    for q in d["questions"]:
        answers = "".join(f"<li>A: {esc(a['text'])} <small>({esc(a['author'])}, line "
                          f"{esc(a['line'])})</small></li>" for a in q["answers"])
        items.append(f"<li><strong>{esc(q['id'])}</strong> {badge('state', q['status'])} "
                     f"{esc(q['text'])} <small>({esc(q['author'])}, line {esc(q['line'])})"
                     f"</small>" + (f"<ul>{answers}</ul>" if answers else "") + "</li>")
    items += [f"<li>A (to no question): {esc(a['text'])} <small>({esc(a['author'])})</small>"
              "</li>" for a in d["answers"] if a["question"] is None]
    return _listed("questions", "Questions and answers", items)


def decisions_section(d: dict[str, Any]) -> str:
    items = [f"<li>{badge('vote', x['vote'])} by {esc(x['by'])} "
             + ("<strong>in force</strong>" if x["in_force"] else
                f"not in force: {esc(x['note'])}")
             + f" <small>(line {esc(x['line'])})</small><br>{esc(x['reason'])}</li>"
             for x in d["decision_history"]]
    items += [f"<li>DECISION: {esc(x['text'])} <small>({esc(', '.join(x['supporters']))}, line "
              f"{esc(x['line'])})</small></li>" for x in d["decisions"]]
    return _listed("decisions", "Decisions", items)


def not_counted_section(d: dict[str, Any]) -> str:
    items = [f"<li>line {esc(x['line'])}: {esc(x.get('author', ''))}: {esc(x['reason'])}</li>"
             for key in ("not_counted", "forged") for x in d[key]]
    items += [f"<li>line {esc(x['line'])}: {esc(x['kind'])}: {esc(x['reason'])}</li>"
              for x in d["unfounded"]]
    return _listed("not-counted", "Not counted", items)


def _listed(section: str, title: str, items: list[str]) -> str:
    """A section of a review holding ``items`` (HTML) as a list; none: no section."""
    if not items:
        return ""
    return f"<section id=\"{section}\"><h3>{title}</h3><ul>{''.join(items)}</ul></section>"
