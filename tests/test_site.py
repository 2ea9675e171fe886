"""``cascade site``: the decision log as a static site.

A real repository (git, the plain hook under ``inproc.commit``, the panel's replies from the
fake endpoint): ADRs with a ledger holding findings, a question and its answer, a waiver and a
person's decision; a superseded ADR; a topic discussion. The site is built in this process and
its HTML parsed (html.parser): the timeline shows what ``cascade list`` and ``cascade status``
say; a decision's page shows its review; the text models and pull requests wrote -- a
``<script>``, a ``javascript:`` link, an ``<img onerror>``, raw HTML in markdown -- renders
inert.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import inproc
import pytest
from conftest import git
from inproc import commit
from test_findings import answer, panel
from test_hook import DOC, LEDGER, RULES, install_plain, loop_repo  # noqa: F401  (a fixture)

from cascade.site.render import markdown_html, safe_url

pytestmark = pytest.mark.usefixtures("hook_stages_nothing")

EVIL = ("<script>alert('doc')</script>\n\n[click me](javascript:alert(1)) "
        "[data](data:text/html;base64,PHNjcmlwdD4=) [spaced]( JaVaScRiPt:alert(3))\n\n"
        "<img src=x onerror=alert(2)>\n\n<a href=\"javascript:evil()\">raw link</a>\n\n"
        "<div onclick=\"steal()\">smuggled <b>html</b></div>\n\n"
        "<iframe src=\"https://evil.example\"></iframe>\n\n"
        "![pic](javascript:alert(4)) [ok](https://example.com/ok) [rel](0002-use-files.md)\n\n"
        "![diagram](img/flow.png) ![svg](img/evil.svg) ![out](../../../etc/passwd.png)\n")
TEXT = ("# Use SQLite\n\n## Status\n\nAccepted\n\n## Context\n\nWe will store events in SQLite.\n\n"
        "## Retention\n\nKeep everything.\n\n" + EVIL)
OLD = "docs/adr/0002-use-files.md"
NEW = "docs/adr/0003-use-postgres.md"
GOVERNS = "docs/adr/0004-use-queues.md"


def cascade(repo: Path, *args: str) -> inproc.Ran:
    return inproc.cascade(repo, *args)


@pytest.fixture
def decided(loop_repo, fake_llm):
    return decided_repo(loop_repo, fake_llm)


def decided_repo(repo: Path, fake_llm) -> Path:
    """ADR 1 reviewed: findings (one answered and waived), a question answered, a person's
    decision; ADR 2 superseded by ADR 3 (neither reviewed); a topic discussion. ``repo``: a
    ``loop_repo`` (tests/test_site_browser.py builds one once for its module)."""
    panel(fake_llm, answer("Needs work.", "CHANGES", [
        {"severity": "major", "where": "Keep everything", "what": "unbounded retention",
         "why": "the disk fills", "suggestion": "archive after a year"},
        {"severity": "critical", "where": "store events in SQLite",
         "what": "<script>alert('finding')</script> no backups"}]),
        security=answer("See [x](javascript:alert(1)) <img src=x onerror=alert(5)>", "READY", []))
    (repo / ".ai-rules.yml").write_text(RULES + "    deciders: [Test Person]\n")
    (repo / DOC).write_text(TEXT)
    (repo / OLD).write_text("# 2. Use files\n\n## Status\n\nSuperseded by [3. Use Postgres]"
                            "(0003-use-postgres.md)\n\n## Context\n\nFiles.\n")
    (repo / NEW).write_text("# 3. Use Postgres\n\n## Status\n\nProposed\n\n## Context\n\nPostgres.\n")
    (repo / GOVERNS).write_text("---\nstatus: accepted\ngoverns: [\"src/**\"]\n---\n\n"
                                "# Use queues\n\nQueues.\n")
    git(repo, "add", ".ai-rules.yml", OLD, NEW, GOVERNS)
    git(repo, "commit", "-qm", "rules and three ADRs", "--no-verify")
    (repo / "src").mkdir()
    (repo / "src/app.py").write_text("print('hi')\n")
    git(repo, "add", "src/app.py")
    git(repo, "commit", "-qm", "the app <b>moves</b> away", "--no-verify")
    (repo / "docs/adr/img").mkdir()
    (repo / "docs/adr/img/flow.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (repo / "docs/adr/img/evil.svg").write_text("<svg onload='alert(1)'/>")
    install_plain(repo)
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1  # the panel asks for changes: blocked
    for text in ("Q: How long do we keep events? <img src=x onerror=alert(6)>",
                 "A(Q1): a year, then archive.\n\nA(F1): we archive after a year.",
                 "WAIVE(F1): archived after a year, agreed"):
        assert cascade(repo, "comment", LEDGER, text).returncode == 0
    assert cascade(repo, "decide", DOC, "READY", "--reason",
                   "Accepted risk <script>alert('decide')</script>").returncode == 0
    assert cascade(repo, "new", "Pick a queue", "--template", "feature").returncode == 0
    return repo


class Page(HTMLParser):
    """A page's tags (name, attributes), its text, and its table rows (cells' text)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.rows: list[list[str]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append(" ".join(" ".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    @property
    def all_text(self) -> str:
        return " ".join(" ".join(self.text).split())


def pages(out: Path) -> dict[str, Page]:
    return {p.name: Page(p.read_text()) for p in sorted(out.glob("*.html"))}


def built(repo: Path) -> Path:
    ran = cascade(repo, "site", "-o", "out")
    assert ran.returncode == 0, ran.out
    assert "4 decision(s), 1 topic discussion(s)" in ran.stdout
    return repo / "out"


def test_the_timeline_lists_every_decision_with_the_verdict_list_and_status_give(decided):
    out = built(decided)
    listed = json.loads(cascade(decided, "list", "--format", "json").stdout)
    index = pages(out)["index.html"]
    header, *rows = index.rows
    assert header == ["Date", "No.", "Title", "Status", "Review", "Gate", "Superseded by"]
    by_number = {r[1]: r for r in rows}
    documents = [x for x in listed if x["kind"] == "document"]
    assert sorted(by_number) == sorted(x["number"] for x in documents)
    assert sorted(by_number) == ["0001", "0002", "0003", "0004"]
    for x in documents:
        row = by_number[x["number"]]
        assert row[2] == x["title"] and row[3] == (x["status"] or "-")
        assert row[4] == x["review"]
        assert row[6] == x["superseded_by"]
    assert by_number["0002"][6] == "3. Use Postgres" and by_number["0003"][3] == "Proposed"
    status = json.loads(cascade(decided, "status", LEDGER, "--json").stdout)["discussions"][0]
    gate = status["gate"]
    assert by_number["0001"][5] == ("ok" if gate["ok"] else "blocked") + f": {gate['reason']}"
    assert by_number["0001"][4] == status["status"]
    assert by_number["0002"][4] == "unreviewed" and by_number["0002"][5] == ""
    # supersession links both ways; the filters know every status and folder
    old = next(t for t in index.tags if t[0] == "a" and t[1].get("href") == "0003.html")
    assert old
    assert "Supersedes" in pages(out)["0003.html"].all_text
    options = [t for t in index.tags if t[0] == "option"]
    assert len(options) >= 4
    assert any(t[0] == "tr" and t[1].get("data-folder") == "docs/adr" for t in index.tags)
    # the commit it was built from, on every page
    head = git(decided, "rev-parse", "HEAD").strip()[:12]
    assert all(f"Built from commit {head}" in p.all_text for p in pages(out).values())
    # no network: every link and script is relative
    for page in pages(out).values():
        for tag, attrs in page.tags:
            if tag in ("script", "link") and (attrs.get("src") or attrs.get("href")):
                assert "//" not in (attrs.get("src") or attrs.get("href"))


def test_a_decision_page_shows_its_review(decided):
    out = built(decided)
    status = json.loads(cascade(decided, "status", LEDGER, "--json").stdout)["discussions"][0]
    page = pages(out)["0001.html"]
    text = page.all_text
    findings = {r[0]: r for r in page.rows if r and r[0].startswith("F")}
    assert set(findings) == {f["id"] for f in status["findings"]} == {"F1", "F2"}
    f1, f2 = findings["F1"], findings["F2"]
    assert f1[1] == "major" and f1[2].startswith("line ") and "unbounded retention" in f1[3]
    assert f1[5].startswith(next(f["status"] for f in status["findings"] if f["id"] == "F1"))
    assert "A: we archive after a year." in f1[3]
    assert f2[1] == "critical"
    assert f2[5].split()[0] == next(f["status"] for f in status["findings"] if f["id"] == "F2")
    assert "Q1 answered How long do we keep events?" in text
    assert "A: a year, then archive." in text
    decision = status["decision_history"][-1]
    assert f"READY by {decision['by']} in force" in text
    votes = [r for r in page.rows if len(r) == 4 and r[1].startswith("AI-")]
    assert len(votes) == 3  # the panel's, under the revision they reviewed
    assert votes[0][0] == status["findings"][0]["revision"][:12] and votes[1][0] == ""
    assert next(r for r in votes if r[1] == "AI-Architect")[2] == "CHANGES"
    drifted = pages(out)["0004.html"].all_text
    assert "Governs: src/**" in drifted and "Drifted: 1 commit(s)" in drifted
    assert "the app <b>moves</b> away" in drifted  # a commit's subject: text too
    assert "We will store events in SQLite." in text  # the document, rendered
    topic = next(p for name, p in pages(out).items() if name.startswith("topic-"))
    assert "Discussion: Pick a queue" in topic.all_text
    search = json.loads((out / "search.json").read_text())
    assert {e["slug"] for e in search} >= {"0001", "0002", "0003"}
    assert "archive" in next(e for e in search if e["slug"] == "0001")["text"]


def test_untrusted_text_renders_inert(decided):
    """A document and ledger comments holding ``<script>``, ``javascript:`` and ``data:``
    links, ``<img onerror>`` and raw HTML in markdown: text on the page, never markup."""
    out = built(decided)
    for name, page in pages(out).items():
        for tag, attrs in page.tags:
            assert tag not in ("iframe", "div", "b", "object", "embed"), (name, tag)
            home = "charts/" if name == "stats.html" else "files/"  # the panel's charts
            assert tag != "img" or (attrs.get("src") or home).startswith(home), attrs
            assert not any(a.lower().startswith("on") for a in attrs), (name, tag, attrs)
            if (tag, attrs) == ICON:
                continue  # the page's own empty icon
            for key in ("href", "src"):
                value = "".join((attrs.get(key) or "").split()).lower()
                assert not value.startswith(("javascript:", "data:", "vbscript:")), (name, attrs)
        scripts = [a for t, a in page.tags if t == "script"]
        assert all(not a.get("src") or a["src"] == "search.js" for a in scripts)
        assert len(scripts) <= 1 and (not scripts or name == "index.html")
    page = pages(out)["0001.html"]
    assert "<script>alert('doc')</script>" in page.all_text  # shown as text
    assert "<img src=x onerror=alert(2)>" in page.all_text
    assert "<script>alert('finding')</script> no backups" in page.all_text
    assert "Accepted risk <script>alert('decide')</script>" in page.all_text
    # a model's comment, rendered: its raw HTML is text, its javascript: link no link
    assert "See [x](javascript:alert(1)) <img src=x onerror=alert(5)>" in page.all_text
    assert "Q: How long do we keep events? <img src=x onerror=alert(6)>" in page.all_text
    links = {a.get("href") for t, a in page.tags if t == "a"}
    assert "https://example.com/ok" in links
    assert "0002.html" in links  # a link to another governed document: its page
    assert (out / "files/docs/adr/img/flow.png").read_bytes() == b"\x89PNG\r\n\x1a\n"
    # opened on its own, a document's SVG's scripts would run: only the site's own charts
    assert not list((out / "files").rglob("*.svg"))
    assert all(b"<script" not in p.read_bytes() for p in out.rglob("*.svg"))
    assert not list(out.rglob("passwd*"))
    images = [a for t, a in page.tags if t == "img"]
    assert {a.get("src") for a in images} == {"files/docs/adr/img/flow.png", None}
    raw = (out / "0001.html").read_text()
    assert "<script" not in raw and "<iframe" not in raw and "onerror" not in raw.replace(
        "&lt;img src=x onerror", "")
    index = (out / "search.js").read_text()
    assert "</script" not in index.lower() and "<" not in index


ICON = ("link", {"rel": "icon", "href": "data:,"})


def test_every_page_has_its_icon_inline_so_a_host_is_not_asked_for_one(decided):
    """Without an icon of its own a page makes the browser ask the host for /favicon.ico: a
    404 on the console of every page (tests/test_site_browser.py: no error on the console)."""
    for name, page in pages(built(decided)).items():
        assert [t for t in page.tags if t[0] == "link" and t[1].get("rel") == "icon"] == [
            ICON], name


def test_the_renderer_keeps_links_to_http_mailto_and_relative():
    assert safe_url("https://x.org") and safe_url("mailto:a@b.c") and safe_url("../a.md")
    assert safe_url("#top") and safe_url("a.md#x")
    for bad in ("javascript:alert(1)", " JavaScript:x", "java\tscript:x", "data:text/html,x",
                "vbscript:x", "file:///etc/passwd", "&#106;avascript:x"):
        assert not safe_url(bad), bad
    images = markdown_html("![a](https://tracker.example/p.png) ![b](//cdn.example/b.png)")
    assert "src" not in images and 'alt="a"' in images  # nothing fetched from the network
    html = markdown_html("[a](javascript:x) <b onmouseover=x>b</b> [c](mailto:c@d.e)")
    assert "href=\"javascript" not in html and "onmouseover" not in html.split("&lt;b")[0]
    assert "href=\"mailto:c@d.e\"" in html and "<b" not in html


def test_output_that_is_a_file_or_someone_elses_folder_is_refused(decided):
    (decided / "afile").write_text("mine\n")
    ran = cascade(decided, "site", "-o", "afile")
    assert ran.returncode == 2
    assert ran.stderr.strip().count("\n") == 0 and "afile" in ran.stderr
    assert "Traceback" not in ran.out and (decided / "afile").read_text() == "mine\n"
    (decided / "notes").mkdir()
    (decided / "notes/todo.txt").write_text("keep\n")
    ran = cascade(decided, "site", "-o", "notes")
    assert ran.returncode == 2 and "notes" in ran.stderr
    assert (decided / "notes/todo.txt").read_text() == "keep\n"
    assert cascade(decided, "site", "-o", "out").returncode == 0
    assert cascade(decided, "site", "-o", "out").returncode == 0  # its own site: rebuilt


def test_the_preview_serves_the_site_and_builds_it_again_on_change(decided):
    """``cascade site --serve``: served on 127.0.0.1; a changed document, a new comment in a
    ledger, a commit: built again; a change that breaks nothing the site reads: no rebuild."""
    import urllib.request
    from functools import partial

    from cascade.site.build import build
    from cascade.site.preview import Preview

    out = decided / "out"
    build(decided, out)
    preview = Preview(decided, out, partial(build, decided, out))
    port = preview.start(0)
    try:
        def fetch(name: str) -> str:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/{name}", timeout=10) as r:
                return r.read().decode()

        assert '<a href="0003.html">Use Postgres</a>' in fetch("index.html")
        assert not preview.poll()  # nothing changed
        (decided / NEW).write_text((decided / NEW).read_text().replace("Use Postgres",
                                                                        "Use MariaDB"))
        assert preview.poll()
        assert '<a href="0003.html">Use MariaDB</a>' in fetch("index.html")
        assert cascade(decided, "comment", LEDGER, "Q: and the backups?").returncode == 0
        assert preview.poll() and "and the backups?" in fetch("0001.html")
        (decided / "src/app.py").write_text("print('moved')\n")  # no document: no rebuild
        assert not preview.poll()
        git(decided, "commit", "-qam", "move again", "--no-verify")
        assert preview.poll()
        assert "Drifted: 2 commit(s)" in fetch("0004.html")
    finally:
        preview.stop()


def test_serve_on_a_port_in_use_is_one_line(decided):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        ran = cascade(decided, "site", "-o", "out", "--serve", "--port",
                      str(taken.getsockname()[1]))
    assert ran.returncode == 2 and ran.stderr.startswith("cascade: --port")
    assert ran.stderr.strip().count("\n") == 0
    ran = cascade(decided, "site", "-o", "out", "--serve", "--port", "70000")
    assert ran.returncode == 2
    assert ran.stderr.strip() == "cascade: --port 70000: not a port (0 to 65535)"


def test_a_repository_without_decisions_gets_an_empty_timeline(repo):
    git(repo, "commit", "-qm", "start", "--allow-empty")
    ran = cascade(repo, "site")
    assert ran.returncode == 0, ran.out
    assert "0 decision(s), 0 topic discussion(s)" in ran.stdout
    index = Page((repo / "_site/index.html").read_text())
    assert index.rows == [["Date", "No.", "Title", "Status", "Review", "Gate", "Superseded by"]]


def test_outside_a_repository_or_without_the_extra_is_one_line(tmp_path, monkeypatch):
    ran = cascade(tmp_path, "site")
    assert ran.returncode == 2 and ran.stderr.strip().count("\n") == 0, ran.out
    assert not (tmp_path / "_site").exists()
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "nh3" else real(name, *a))
    ran = cascade(tmp_path, "site")
    assert ran.returncode == 2
    assert ran.stderr.strip() == ("cascade: cascade site needs nh3: pip install "
                                  "'cascadingdev[site]'")


def test_a_topic_discussion_has_its_page_with_its_record(repo, cli, fake_llm, monkeypatch):
    """A pcs discussion run to its end: its page shows the protocol, the outcome and the
    record the run wrote beside the ledger."""
    from test_pcs import RECORD, TOPIC, Panel, discuss

    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    Panel(fake_llm)
    code, out, err = discuss(cli)
    assert code == 0, out + err
    assert (repo / RECORD).is_file()
    ran = cascade(repo, "site")
    assert ran.returncode == 0, ran.out
    assert "0 decision(s), 1 topic discussion(s)" in ran.stdout
    site = repo / "_site"
    index = Page((site / "index.html").read_text())
    link = next(a["href"] for t, a in index.tags if t == "a" and a.get("href", "").startswith(
        "topic-"))
    page = Page((site / link).read_text())
    assert f"Discussion: {TOPIC}" in page.all_text
    assert "Protocol pcs" in page.all_text and "Outcome READY" in page.all_text
    assert "Record" in page.all_text and "Consensus statement" in page.all_text
    assert "Built from commit none" in page.all_text  # no commit yet


def test_the_supersession_chain_is_followed_both_ways_and_stops_at_a_cycle():
    from cascade.site.collect import Entry
    from cascade.site.pages import chain

    def entry(slug, by="", supersedes=()):
        return Entry(slug, slug, f"t{slug}", "", "unreviewed", "", f"d/{slug}.md", "d", "",
                     supersedes=list(supersedes), superseded_slug=by)

    a, b, c = entry("1", by="2"), entry("2", by="3", supersedes=["1"]), entry("3", supersedes=["2"])
    pages = {x.slug: x for x in (a, b, c)}
    assert [x.slug for x in chain(b, pages)] == ["1", "2", "3"]
    assert [x.slug for x in chain(a, pages)] == ["1", "2", "3"]
    x, y = entry("8", by="9", supersedes=["9"]), entry("9", by="8", supersedes=["8"])
    assert [e.slug for e in chain(x, {"8": x, "9": y})] == ["9", "8"]


NODE_DOM = r"""
// A few DOM calls, enough for the timeline's script: rows, selects, the search box, the
// results list, and a <script src> that runs search.js when appended.
const fs = require('fs');
const [rowsJson, scriptPath, indexPath] = process.argv.slice(2);
function el(tag) {
  return {tag, children: [], listeners: {}, dataset: {}, hidden: false, value: '', _text: '',
    addEventListener(kind, fn) { (this.listeners[kind] = this.listeners[kind] || []).push(fn); },
    fire(kind) { (this.listeners[kind] || []).forEach(fn => fn()); },
    appendChild(child) { this.children.push(child);
      if (child.tag === 'script') { eval(fs.readFileSync(indexPath, 'utf8')); child.fire('load'); }
      return child; },
    set textContent(v) { this._text = v; this.children = []; },
    get textContent() { return this._text + this.children.map(c => c.textContent).join(''); }};
}
const rows = JSON.parse(rowsJson).map(d => Object.assign(el('tr'), {dataset: d}));
const byId = {};
['f-status', 'f-folder', 'q', 'results', 'shown', 'filters', 'index-js'].forEach(
  id => byId[id] = el(id));
delete byId['index-js'];
global.window = global;
global.document = {head: el('head'), querySelectorAll: () => rows,
  getElementById: id => byId[id] || null, createElement: el,
  createTextNode: text => Object.assign(el('#text'), {_text: text})};
eval(fs.readFileSync(scriptPath, 'utf8'));
const out = {filters_shown: !byId['filters'].hidden};
byId['f-status'].value = 'proposed'; byId['f-status'].fire('change');
out.proposed = rows.filter(r => !r.hidden).length;
byId['f-status'].value = ''; byId['f-status'].fire('change');
out.all = byId['shown'].textContent;
byId['q'].value = 'ARCHIVE year'; byId['q'].fire('input');
out.found = byId['results'].children.map(li => [li.children[0].href, li.textContent]);
byId['q'].value = 'no such words anywhere'; byId['q'].fire('input');
out.none = byId['results'].textContent;
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page's script")
def test_the_timelines_script_filters_and_searches(decided, tmp_path):
    """The timeline's inline script, run by node against a few DOM calls (not a browser):
    the status filter hides the other rows; a search loads search.js and lists the pages
    that hold every word, case aside."""
    out = built(decided)
    html = (out / "index.html").read_text()
    script = html[html.index("<script>") + len("<script>"):html.index("</script>")]
    (tmp_path / "timeline.js").write_text(script)
    (tmp_path / "dom.js").write_text(NODE_DOM)
    index = Page(html)
    rows = [{k[5:]: v for k, v in a.items() if k.startswith("data-")}
            for t, a in index.tags if t == "tr" and "data-status" in a]
    ran = subprocess.run(["node", str(tmp_path / "dom.js"), json.dumps(rows),
                          str(tmp_path / "timeline.js"), str(out / "search.js")],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert result["filters_shown"]  # hidden until the script runs: the table alone without it
    assert result["proposed"] == 1 and result["all"] == "4 of 4"
    assert result["found"] == [["0001.html", "0001 Use SQLite (Accepted)"]]
    assert result["none"] == "No match."


@pytest.mark.parametrize("status", ["Superseded by [](0007-use-queues.md)",
                                    "superseded by [ADR-0007](0007-use-queues.md)"])
def test_what_supersedes_is_found_by_its_path_or_its_number(repo, status):
    (repo / ".ai-rules.yml").write_text(RULES)
    (repo / "docs/adr").mkdir(parents=True)
    (repo / "docs/adr/0001-use-files.md").write_text(f"# 1. Use files\n\n## Status\n\n{status}\n")
    (repo / "docs/adr/0007-use-queues.md").write_text("# 7. Use queues\n\n## Status\n\nAccepted\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "adrs")
    out = built_in(repo)
    old, new = Page((out / "0001.html").read_text()), Page((out / "0007.html").read_text())
    assert ("a", {"href": "0007.html"}) in old.tags
    assert ("a", {"href": "0001.html"}) in new.tags and "Supersedes" in new.all_text


def built_in(repo: Path) -> Path:
    ran = cascade(repo, "site", "-o", "out")
    assert ran.returncode == 0, ran.out
    return repo / "out"


def test_a_document_that_is_a_link_out_of_the_repository_is_not_published(repo, tmp_path):
    """A site built by CI from a pull request: a governed name that is a symbolic link to a
    file outside (a key, a token) shows a line saying why, never the file."""
    secret = tmp_path / "secret.txt"
    secret.write_text("# TOKEN hunter2\n\n## Status\n\nhunter2\n")
    (repo / ".ai-rules.yml").write_text(RULES)
    (repo / "docs/adr").mkdir(parents=True)
    (repo / "docs/adr/0001-leak.md").symlink_to(secret)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "a link")
    out = built_in(repo)
    assert not any("hunter2" in p.read_text() for p in out.iterdir() if p.is_file())
    assert "symbolic link" in Page((out / "0001.html").read_text()).all_text


def test_the_timeline_list_and_status_say_one_review(decided):
    """A decision recorded as Eve's but committed by someone else: the gate and `status`
    (knowing who added each line) do not count it, a reading that does not ask git would.
    `list`, the site's timeline and `status` say the same review: one answer."""
    repo = decided
    rules = (repo / ".ai-rules.yml").read_text().replace("    deciders: [Test Person]\n", "")
    (repo / ".ai-rules.yml").write_text(rules)
    assert cascade(repo, "decide", DOC, "REJECT", "--reason", "Too slow.", "--author",
                   "Eve <eve@example.com>").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Eve's decision, committed by another", "--no-verify")
    listed = {x["number"]: x for x in json.loads(cascade(repo, "list", "--format",
                                                         "json").stdout)}
    status = json.loads(cascade(repo, "status", LEDGER, "--json").stdout)["discussions"][0]
    assert status["status"] == "ACCEPTED"  # the earlier decision, Test Person's, in force
    assert listed["0001"]["review"] == status["status"]
    row = next(r for r in pages(built(repo))["index.html"].rows if r[1] == "0001")
    assert row[4] == status["status"]
    from cascade.ui.view_data import view  # the terminal UI's reading (no Textual)
    assert view(repo / LEDGER).status == status["status"]
