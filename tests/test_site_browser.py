"""``cascade site`` in a real browser: the system's headless Chromium, driven by Selenium
through the system's chromedriver (both named by path: Selenium Manager is never asked, and
nothing is downloaded), over the site the real command builds from a fixture repository.

The repository is built once for the module (tests/test_site.py's ADRs -- a review with
findings, a question answered, a waiver, a person's decision, a superseded ADR, a topic -- and
an RFC in a second folder whose document and ledger are made of injection attempts: each
tries to set ``window.__pwned``, the page's title, a cookie, and to write ``PWNED`` to the
console). One browser serves the module. Each page is opened from ``file://`` (as a person
opens ``_site/index.html``) and over http from ``cascade site --serve`` (as a host serves it).

Without Chromium, chromedriver or selenium these tests skip, saying which is missing;
``CASCADE_BROWSER_TESTS=required`` (CI) makes that a failure.

A page the site adds gets its test beside these (as the panel's page, stats.html, has):
``visit(browser, url)`` opens it, ``what_ran(browser)``
says what ran that should not, what the console said and what was fetched off the machine;
``test_no_injected_script_runs_on_any_page`` already opens every page and every SVG image of
the site.
"""
from __future__ import annotations

import base64
import json
import os
import signal
import struct
import subprocess
import sys
from pathlib import Path

import inproc
import msgspec
import pytest
from browser import CHROMEDRIVER, chromium, missing
from conftest import REPO, git, isolate
from fakellm import FakeLLM
from inproc import commit
from test_findings import answer, panel
from test_hook import LEDGER, start_loop
from test_site import decided_repo

try:  # the test extra's: without it these tests skip, saying so (need_browser)
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:  # pragma: no cover (a machine without the test extra)
    pass

REQUIRED = "CASCADE_BROWSER_TESTS"
WAIT = 10  # seconds a page may take to show what a test waits for

RFC = "rfcs/0005-render-untrusted-text.md"
RFC_LEDGER = "rfcs/discussions/0005-render-untrusted-text.discussion.md"
RFC_RULE = """\
  - name: rfc
    match: "rfcs/*.md"
    template: adr
    discussion: "rfcs/discussions/{stem}.discussion.md"
    participants: [architect, security, pragmatist]
    consensus: {threshold_ready: 0.67, threshold_reject: 0.01, human_required: false}
    deciders: [Test Person]
"""
BODY_WORD = "quokka"  # in the RFC's body only: search finds it there


def js(vector: str) -> str:
    """What an injected script does: sets every sentinel the tests read."""
    return (f"window.__pwned='{vector}';document.title='PWNED {vector}';"
            f"document.cookie='pwned={vector}';console.error('PWNED {vector}')")


DATA = base64.b64encode(f"<script>{js('data-url')}</script>".encode()).decode()
INJECTED = f"""\
---
title: "</pre><script>{js('front-matter')}</script>"
status: proposed
---

# 5. Render <img src=x onerror="{js('title')}"> untrusted text

## Context

The {BODY_WORD} rule: what models and pull requests write is shown, never run.

<script>{js('script')}</script>

<img src=x onerror="{js('img')}">

<svg onload="{js('svg')}"><script>{js('svg-script')}</script></svg>

<iframe srcdoc="<script>{js('iframe')}</script>"></iframe>

<details open ontoggle="{js('details')}"><summary>details</summary></details>

<a href="javascript:{js('raw-link')}">raw link</a> <form action="javascript:{js('form')}">
<button>send</button></form>

<meta http-equiv="refresh" content="0;url=javascript:{js('meta')}">

<math><mtext><table><mglyph><style><img src=x onerror="{js('mxss')}">

[markdown link](<javascript:{js('md-link')}>) [entity link](<&#106;avascript:{js('entity')}>)
[data link](data:text/html;base64,{DATA}) [reference link][r] <javascript:window.__pwned=1>
[titled](https://example.com/ok "x\\" onmouseover=\\"{js('title-attribute')}")
[superseded one](../docs/adr/0002-use-files.md)

![image](<javascript:{js('img-src')}>) ![svg](img/evil.svg)

| cell | <img src=x onerror="{js('cell')}"> |
|---|---|
| <b onmouseover="{js('cell-b')}">b</b> | x |

```html
</code></pre><script>{js('fence')}</script>
```

[r]: <javascript:{js('reference')}>
"""
SVG = (f"<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"{js('svg-file')}\">"
       f"<script>{js('svg-file-script')}</script></svg>")


class Built(msgspec.Struct, frozen=True):
    """The fixture repository, its site, what the commands say of it, and the environment it
    was built in (for ``cascade site --serve``)."""
    repo: Path
    out: Path
    listed: list[dict]
    status: dict[str, dict]  # a ledger's ``cascade status --json``, by document
    env: dict[str, str]
    stats: dict  # ``cascade stats --json``


def cascade(repo: Path, *args: str) -> inproc.Ran:
    ran = inproc.cascade(repo, *args)
    assert ran.returncode == 0, ran.out
    return ran


def injected_review(repo: Path, fake: FakeLLM) -> None:
    """The RFC of injection attempts, reviewed: the panel's comments and findings, a
    question, its answer, a person's decision, each another attempt."""
    panel(fake, answer(f"<script>{js('comment')}</script> [see](<javascript:{js('c-link')}>)"
                       f" <img src=x onerror=\"{js('c-img')}\">", "CHANGES", [
        {"severity": "major", "where": BODY_WORD, "what": f"<script>{js('finding')}</script>",
         "why": f"<img src=x onerror=\"{js('why')}\">",
         "suggestion": f"[fix](javascript:{js('suggestion')})"}]),
        security=answer(f"<svg onload=\"{js('c-svg')}\"></svg> Fine.", "READY", []))
    rules = repo / ".ai-rules.yml"
    rules.write_text(rules.read_text() + RFC_RULE)
    git(repo, "add", ".ai-rules.yml")
    git(repo, "commit", "-qm", "a rule for rfcs", "--no-verify")
    (repo / "rfcs/img").mkdir(parents=True)
    (repo / RFC).write_text(INJECTED)
    (repo / "rfcs/img/evil.svg").write_text(SVG)
    git(repo, "add", RFC, "rfcs/img/evil.svg")
    assert commit(repo).returncode == 1  # the panel asks for changes
    for text in (f"Q: <script>{js('question')}</script> and then?",
                 f"A(Q1): <img src=x onerror=\"{js('answer')}\">"):
        cascade(repo, "comment", RFC_LEDGER, text)
    cascade(repo, "decide", RFC, "CHANGES", "--reason",
            f"<script>{js('decision')}</script> not yet")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The fixture repository and its site, built once for the module by the real commands
    (the hook in-process, the panel from the fake endpoint). Not built when no browser
    would read it."""
    need_browser(missing())
    top = tmp_path_factory.mktemp("browser-site")
    with pytest.MonkeyPatch.context() as mp, FakeLLM() as fake:
        (top / "home").mkdir()
        isolate(top / "home", mp)
        mp.setenv("CASCADE_STAGE", "0")  # tests/test_site.py's steps: its hook stages nothing
        repo = top / "repo"
        repo.mkdir()
        git(repo, "init", "-q")
        mp.chdir(repo)
        decided_repo(start_loop(repo, fake.url, mp), fake)
        injected_review(repo, fake)
        ran = cascade(repo, "site", "-o", "out")
        assert "5 decision(s), 1 topic discussion(s)" in ran.stdout, ran.out
        listed = json.loads(cascade(repo, "list", "--format", "json").stdout)
        status = {doc: json.loads(cascade(repo, "status", ledger, "--json").stdout)
                  ["discussions"][0] for doc, ledger in (("0001", LEDGER), ("0005", RFC_LEDGER))}
        env = {k: v for k, v in os.environ.items() if not k.startswith("CASCADE_")}
        stats = json.loads(cascade(repo, "stats", "--json").stdout)
    return Built(repo, repo / "out", listed, status, env, stats)


def need_browser(reason: str) -> None:
    """Skip, saying why, when ``reason`` names what is missing; fail instead when the
    environment says the browser tests are required (CI)."""
    if not reason:
        return
    if os.environ.get(REQUIRED) == "required":
        pytest.fail(f"{REQUIRED}=required, but {reason}", pytrace=False)
    pytest.skip(f"real-browser tests: {reason} (apt-get install chromium chromium-driver; "
                f"{REQUIRED}=required makes this a failure)")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    """Headless Chromium for the module (tests/browser.py): a new empty profile, the
    console's every message and every request kept; any ``alert``, ``confirm`` or ``prompt``
    a page runs sets the sentinel too."""
    need_browser(missing())
    driver = chromium(tmp_path_factory.mktemp("chromium-profile"), logs=True)
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": (
            "['alert', 'confirm', 'prompt'].forEach(function (n) { window[n] = function (m) {"
            " window.__pwned = n; console.error('PWNED ' + n + ' ' + m); }; });")})
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def served(site: Built):
    """``cascade site --serve`` on a free port, as a person previews it: its address."""
    proc = subprocess.Popen([sys.executable, "-m", "cascade", "site", "-o", "served", "--serve",
                             "--port", "0"], cwd=site.repo, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            env={**site.env, "PYTHONPATH": str(REPO)})
    try:
        said = []
        for line in proc.stdout:
            said.append(line)
            if " at http://127.0.0.1:" in line:
                yield line.split(" at ", 1)[1].split()[0]
                break
        else:
            pytest.fail("cascade site --serve did not serve: " + "".join(said))
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def base_url(kind: str, site: Built, request: pytest.FixtureRequest) -> str:
    """The site's address: its folder (file://) or the preview's (http://)."""
    return site.out.as_uri() + "/" if kind == "file" else request.getfixturevalue("served")


def visit(driver, url: str) -> None:
    """Open ``url`` and wait until it has loaded."""
    driver.get(url)
    WebDriverWait(driver, WAIT).until(
        lambda d: d.execute_script("return document.readyState") == "complete")


def unfolded(driver, url: str) -> None:
    """Open ``url``, and unfold what it folds (the discussion)."""
    visit(driver, url)
    for summary in driver.find_elements(By.CSS_SELECTOR, "details > summary"):
        summary.click()


def what_ran(driver) -> list[str]:
    """What ran on the page open now that should not have: the sentinel, the title, a cookie;
    every console message since the last look that is an error or a warning, or says PWNED;
    every request since the last look that left this machine (the logs are read and
    emptied)."""
    pwned, title, cookie = driver.execute_script(
        "return [String(window.__pwned || ''), document.title, document.cookie]")
    out = [f"window.__pwned = {pwned!r}"] if pwned else []
    out += [f"title {title!r}"] if title.startswith("PWNED") else []  # as the attempts set it
    out += [f"cookie {cookie!r}"] if "pwned" in cookie else []
    out += [f"console {e['level']}: {e['message']}" for e in driver.get_log("browser")
            if e["level"] in ("SEVERE", "WARNING") or "PWNED" in e["message"]]
    for entry in driver.get_log("performance"):
        said = json.loads(entry["message"])["message"]
        if said["method"] == "Network.requestWillBeSent":
            url = said["params"]["request"]["url"]
            if url.startswith(("http", "ws", "ftp")) and not url.startswith(
                    "http://127.0.0.1:"):  # not the browser's own (chrome://): the network
                out.append(f"fetched {url}")
    return out


def shown_rows(driver) -> list[list[str]]:
    """The timeline's rows the browser shows (laid out: not hidden), each one's cells as
    the browser renders them (``innerText``), in one call."""
    return driver.execute_script(
        "return Array.prototype.filter.call(document.querySelectorAll('#timeline tbody tr'),"
        " function (r) { return r.getClientRects().length; }).map(function (r) {"
        " return Array.prototype.map.call(r.cells, function (c) { return c.innerText.trim(); });"
        " });")


def documents(site: Built) -> list[dict]:
    return [x for x in site.listed if x["kind"] == "document"]


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("kind", ["file", "http"])
def test_the_timeline_lists_every_decision(site, browser, kind, request):

    base = base_url(kind, site, request)
    visit(browser, base + "index.html")
    rows = shown_rows(browser)
    docs = documents(site)
    assert len(rows) == len(docs) == 5
    by_number = {r[1]: r for r in rows}
    assert sorted(by_number) == ["0001", "0002", "0003", "0004", "0005"]
    for x in docs:
        row = by_number[x["number"]]
        assert row[2] == words(x["title"]) and row[3] == (x["status"] or "-")
        assert row[4] == x["review"]
    topics = browser.find_elements(By.CSS_SELECTOR, "main > ul li a")
    assert [t.text for t in topics] == ["Pick a queue"]
    assert browser.title == "Decision log"
    assert what_ran(browser) == []


def test_the_filters_show_the_rows_chosen(site, browser):
    """Status (the document's own, or its review's state) and folder, alone and together."""
    visit(browser, site.out.as_uri() + "/index.html")
    status = Select(browser.find_element(By.ID, "f-status"))
    folder = Select(browser.find_element(By.ID, "f-folder"))
    shown = browser.find_element(By.ID, "shown")
    docs = documents(site)
    assert shown.text == "5 of 5"  # before any choice

    def key(text: str) -> str:
        return (text.split() or [""])[0].lower().strip(".,;:")

    choices = [o.text for o in status.options][1:]
    assert {"proposed", "accepted", "superseded", "unreviewed"} <= set(choices)
    for choice in choices:
        status.select_by_visible_text(choice)
        want = sorted(x["number"] for x in docs if choice in (key(x["status"] or ""),
                                                               x["review"]))
        assert sorted(r[1] for r in shown_rows(browser)) == want, choice
        assert shown.text == f"{len(want)} of 5"
    status.select_by_index(0)
    assert [o.text for o in folder.options] == ["any", "docs/adr", "rfcs"]
    folder.select_by_visible_text("rfcs")
    assert [r[1] for r in shown_rows(browser)] == ["0005"] and shown.text == "1 of 5"
    status.select_by_visible_text("accepted")
    assert shown_rows(browser) == [] and shown.text == "0 of 5"
    folder.select_by_visible_text("docs/adr")
    assert sorted(r[1] for r in shown_rows(browser)) == sorted(
        x["number"] for x in docs if x["path"].startswith("docs/adr/")
        and "accepted" in (key(x["status"] or ""), x["review"]))
    status.select_by_index(0)
    folder.select_by_index(0)
    assert len(shown_rows(browser)) == 5 and shown.text == "5 of 5"
    assert what_ran(browser) == []


@pytest.mark.parametrize("kind", ["file", "http"])
def test_search_finds_a_decision_by_a_word_of_its_body(site, browser, kind, request):
    """Typed into the search box: the index (search.js) loads on the first search, from
    file:// as over http; the result leads to the decision's page."""
    assert not any(BODY_WORD in x["title"].lower() for x in site.listed)
    visit(browser, base_url(kind, site, request) + "index.html")
    box = browser.find_element(By.ID, "q")
    box.send_keys(BODY_WORD.upper())
    results = browser.find_element(By.ID, "results")
    WebDriverWait(browser, WAIT).until(lambda d: results.text)
    found = results.find_elements(By.TAG_NAME, "li")
    rfc = next(x for x in site.listed if x["number"] == "0005")
    assert [li.text for li in found] == [f"0005 {words(rfc['title'])} ({rfc['status']})"]
    box.clear()
    box.send_keys("archive year")  # every word, in a finding and an answer of ADR 1
    WebDriverWait(browser, WAIT).until(lambda d: "0001" in results.text)
    assert [li.text.split()[0] for li in results.find_elements(By.TAG_NAME, "li")] == ["0001"]
    box.clear()
    box.send_keys("no such words anywhere")
    WebDriverWait(browser, WAIT).until(lambda d: results.text == "No match.")
    box.clear()
    box.send_keys(BODY_WORD)
    WebDriverWait(browser, WAIT).until(lambda d: results.find_elements(By.TAG_NAME, "a"))
    results.find_element(By.TAG_NAME, "a").click()
    WebDriverWait(browser, WAIT).until(lambda d: d.current_url.endswith("/0005.html"))
    assert BODY_WORD in browser.find_element(By.ID, "document").text
    assert what_ran(browser) == []


def test_a_decision_page_shows_its_findings_and_its_decision(site, browser):

    for number in ("0001", "0005"):
        status = site.status[number]
        visit(browser, site.out.as_uri() + f"/{number}.html")
        rows = browser.find_elements(By.CSS_SELECTOR, "#findings tbody tr")
        cells = {r.find_elements(By.TAG_NAME, "td")[0].text:
                 [c.text for c in r.find_elements(By.TAG_NAME, "td")] for r in rows}
        assert sorted(cells) == sorted(f["id"] for f in status["findings"])
        for f in status["findings"]:
            row = cells[f["id"]]
            assert row[1] == f["severity"] and row[5].split()[0] == f["status"]
            assert row[3].startswith(words(f["what"]))
        decisions = browser.find_element(By.ID, "decisions").text
        last = status["decision_history"][-1]
        assert f"{last['vote']} by {last['by']} in force" in decisions
        assert words(last["reason"]) in words(decisions)
        assert what_ran(browser) == []
    assert {f["severity"] for f in site.status["0001"]["findings"]} == {"major", "critical"}
    assert "waived" in {f["status"] for f in site.status["0001"]["findings"]}
    questions = browser.find_element(By.ID, "questions").text  # the RFC's, shown last
    assert "Q1 answered" in questions and "A: <img src=x onerror=" in questions


@pytest.mark.parametrize("kind", ["file", "http"])
def test_the_panels_page_shows_its_charts_and_figures(site, browser, kind, request):
    """stats.html, reached from the timeline's header: every chart is an image the browser
    loaded and drew (no script needed), and its tables say what ``cascade stats --json``
    says."""
    visit(browser, base_url(kind, site, request) + "index.html")
    browser.find_element(By.CSS_SELECTOR, "header").find_element(By.LINK_TEXT,
                                                                 "The panel").click()
    WebDriverWait(browser, WAIT).until(lambda d: d.current_url.endswith("/stats.html"))
    WebDriverWait(browser, WAIT).until(lambda d: d.execute_script(
        "return Array.prototype.every.call(document.images, function (i) {"
        " return i.complete; })"))
    images = browser.execute_script(
        "return Array.prototype.map.call(document.images, function (i) {"
        " var box = i.getBoundingClientRect();"
        " return [i.getAttribute('src'), i.naturalWidth, box.width, box.height, i.alt]; })")
    assert [src for src, *_ in images] == [f"charts/{n}.svg" for n in (
        "block-rate", "findings", "findings-ended", "agreement", "tokens")]
    for src, drawn, width, height, alt in images:  # drawn: the SVG was read and laid out
        assert drawn > 0 and width > 600 and height > 150, (src, drawn, width, height)
        assert alt.split(":")[0], src
    rows = {r.find_elements(By.TAG_NAME, "td")[0].text:
            [c.text for c in r.find_elements(By.TAG_NAME, "td")]
            for r in browser.find_elements(By.CSS_SELECTOR, "main table tbody tr")}
    for persona in site.stats["personas"]:
        row = rows[persona["name"]]
        assert row[1:4] == [str(persona[k]) for k in ("discussions", "votes", "blocks")]
        assert row[6] == f"{persona['agreed']} of {persona['concluded']}"
    for rule in site.stats["rules"]:
        assert rows[rule["name"]][1] == str(rule["discussions"])
    assert len(site.stats["personas"]) == 3 and what_ran(browser) == []


def test_links_lead_from_page_to_page(site, browser):
    """From the timeline to a decision, along supersession both ways, from a document's
    link to another governed document, to a topic, and back to the timeline."""
    def go(text: str, where: str = "main") -> str:
        browser.find_element(By.CSS_SELECTOR, where).find_element(By.LINK_TEXT, text).click()
        return browser.current_url.rsplit("/", 1)[1]

    visit(browser, site.out.as_uri() + "/index.html")
    assert go("Use files") == "0002.html"
    assert browser.find_element(By.TAG_NAME, "h1").text == "0002 Use files"
    assert go("3. Use Postgres", "dl.meta") == "0003.html"  # superseded by, as its status says
    assert go("0002 Use files", "dl.meta") == "0002.html"  # supersedes
    assert go("Decision log", "header") == "index.html"
    assert go("Use SQLite") == "0001.html"
    assert go("rel", "#document") == "0002.html"  # [rel](0002-use-files.md)
    visit(browser, site.out.as_uri() + "/0005.html")
    assert go("superseded one", "#document") == "0002.html"  # ../docs/adr/0002-use-files.md
    assert go("Decision log", "header") == "index.html"
    assert go("Pick a queue").startswith("topic-")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Discussion: Pick a queue"
    assert what_ran(browser) == []


def test_every_page_fits_a_window_1280_wide(site, browser):
    """Nothing is pushed past the window's right edge (a long gate verdict, a status, a
    path): the page scrolls down, never sideways; a table's long status wraps in its cell."""
    for name in sorted(p.name for p in site.out.glob("*.html")):
        visit(browser, site.out.as_uri() + "/" + name)
        wide = browser.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth,"
            " Array.prototype.filter.call(document.querySelectorAll('main *'), function (e) {"
            " return e.getBoundingClientRect().right > document.documentElement.clientWidth;"
            " }).map(function (e) { return e.tagName + '.' + e.className; })]")
        assert wide[0] <= wide[1] and wide[2] == [], (name, wide)
    assert what_ran(browser) == []


@pytest.mark.parametrize("kind", ["file", "http"])
def test_no_injected_script_runs_on_any_page(site, browser, kind, request):
    """Every page of the site opened, its discussion unfolded, every link of what documents
    and ledgers wrote clicked (those that kept no address too) but those leading off the
    machine, the timeline searched for the page whose title is an attempt: no sentinel set,
    nothing said on the console (no error of our own either), and in the browser's reading
    no script, frame, ``on*`` attribute, or link that is not http(s), mailto or the site's
    own."""
    base = base_url(kind, site, request)
    names = sorted(p.name for p in site.out.glob("*.html"))
    assert {"index.html", "0001.html", "0005.html"} <= set(names)
    clicked = 0
    for name in names:
        unfolded(browser, base + name)
        ran = what_ran(browser)  # first: an attempt that ran has said so by now
        found = browser.execute_script(INSPECT)
        scripts = found["scripts"] - (name == "index.html")  # the timeline's own
        assert ran + found["bad"] + [f"{scripts} inline script(s)"] * bool(scripts) == [], name
        for i, href in enumerate(found["user_links"]):  # a link without its address too
            if href and not href.startswith(base):
                continue  # off the machine (https://example.com/ok)
            unfolded(browser, base + name)
            browser.find_elements(By.CSS_SELECTOR, "article.doc a")[i].click()
            if href:
                WebDriverWait(browser, WAIT).until(
                    lambda d, h=href: d.current_url in (h, h.split("#")[0]))
            assert what_ran(browser) == [], (name, i, href)
            clicked += 1
    assert clicked >= 3  # 0001's [rel], 0005's [superseded one], ...
    visit(browser, base + "index.html")
    box = browser.find_element(By.ID, "q")
    for text in ("onerror", "script", BODY_WORD):  # results are the attempts' titles
        box.clear()
        box.send_keys(text)
        WebDriverWait(browser, WAIT).until(
            lambda d: d.find_element(By.ID, "results").find_elements(By.TAG_NAME, "li"))
    assert browser.execute_script(INSPECT)["bad"] == []
    assert what_ran(browser) == []
    images = sorted(p.relative_to(site.out).as_posix() for p in site.out.rglob("*.svg"))
    for name in images:  # an image opened on its own runs its scripts: it holds none
        visit(browser, base + name)
        assert browser.execute_script("return document.querySelectorAll("
                                      "'script, foreignObject, [onload], [onclick]').length"
                                      ) == 0, name
        # opened on its own, over http an image has the browser ask for /favicon.ico
        assert [x for x in what_ran(browser) if "/favicon.ico " not in x] == [], name
    assert not browser.get_cookies()


# In the page: its scripts (the timeline's own, inline), anything a script could run from (an
# element that runs or frames content, an on* attribute, a link or source that is not
# http(s), mailto or the site's own -- but its own empty icon), and the links in what documents
# and ledgers wrote.
INSPECT = """
var ICON = 'link[rel=icon][href="data:,"]';  // the page's own empty icon
var bad = [], base = location.href.replace(/[^/]*$/, '');
document.querySelectorAll('iframe, frame, object, embed, svg, math, form, meta[http-equiv], '
                          + 'base, style, link:not([rel=stylesheet]):not(' + ICON + ')'
                          ).forEach(function (e) {
  bad.push('element ' + e.outerHTML.slice(0, 80)); });
document.querySelectorAll('script[src]').forEach(function (s) {
  if (s.src !== base + 'search.js') bad.push('script ' + s.src); });
document.querySelectorAll('*').forEach(function (e) {
  Array.prototype.forEach.call(e.attributes, function (a) {
    if (/^on/i.test(a.name)) bad.push(e.tagName + ' ' + a.name); }); });
document.querySelectorAll('[href]:not(' + ICON + '), [src]').forEach(function (e) {
  var url = e.href || e.src, ok = /^(https?:|mailto:)/.test(url) || url.indexOf(base) === 0;
  if (!ok) bad.push(e.tagName + ' ' + url); });
return {bad: bad, scripts: document.querySelectorAll('script:not([src])').length,
        user_links: Array.prototype.map.call(document.querySelectorAll('article.doc a'),
                                             function (a) { return a.href; })};
"""


def test_without_a_browser_the_tests_skip_saying_why_unless_required(tmp_path, monkeypatch):
    """Chromium, chromedriver and selenium are looked for where the tests run them; without
    one the tests skip, naming it -- and fail when ``CASCADE_BROWSER_TESTS=required``."""
    assert missing(str(tmp_path / "chromium"), CHROMEDRIVER).startswith(
        f"no chromium ({tmp_path / 'chromium'})")
    reason = missing(str(tmp_path / "chromium"), str(tmp_path / "chromedriver"))
    assert "no chromium" in reason and "no chromedriver" in reason
    monkeypatch.delenv(REQUIRED, raising=False)
    with pytest.raises(pytest.skip.Exception, match="no chromium .* CASCADE_BROWSER_TESTS"):
        need_browser(reason)
    monkeypatch.setenv(REQUIRED, "required")
    with pytest.raises(pytest.fail.Exception, match="CASCADE_BROWSER_TESTS=required, but no"):
        need_browser(reason)
    need_browser("")  # all there: runs


def test_the_screenshots_are_in_the_docs_and_small():
    """docs/site.md shows the timeline and a decision's page, as docs/site_screenshots.py
    makes them: PNGs 1280 wide, under 200 KB each."""
    text = (REPO / "docs/site.md").read_text()
    for name in ("site-timeline.png", "site-decision.png"):
        assert f"]({name})" in text, name
        data = (REPO / "docs" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) < 200_000, (name, len(data))
        assert struct.unpack(">I", data[16:20])[0] == 1280, name
    assert "python docs/site_screenshots.py" in text
