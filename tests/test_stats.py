"""``cascade stats``: the panel, measured, checked against a history counted by hand.

A real repository, the plain hook under ``inproc.commit``, the panel's replies from the fake
endpoint (each with a cost header: what a proxy reports), commits on set days:

- ADR 1, proposed on day 0 (``--no-verify``). Day 2: reviewed -- the architect asks for
  changes with a major and a critical finding, security and the pragmatist are READY; blocked.
  A person answers F1 and waives F2, and decides READY (overruling the architect, and
  overriding F1: an answer leaves a finding for a review or a decision to close): it lands on
  day 2. 2 commits, 2 days.
- ADR 2, proposed on day 1. Day 4: the pragmatist asks for changes (a minor finding): blocked;
  the ledger is committed as it stands past the gate (``--no-verify``). Day 5: the document
  changed, all three review again, READY (the pragmatist's finding resolved): it lands.
  3 commits, 4 days.
- ADR 3, day 6: READY from all three at the first try. 1 commit, 0 days. On day 7 a block
  under AI-Security's name is written by hand into its ledger (no stamp): not its reply.

Counted by hand:

| persona | discussions | replies/votes | blocks | findings | agreed | overruled | cost |
|---|---|---|---|---|---|---|---|
| AI-Architect | 3 | 4 | 1 | critical 1 (waived), major 1 (overridden) | 2 of 3 | 1 | 4 × 0.01 |
| AI-Security | 3 | 4 | 0 | none | 3 of 3 | 0 | 4 × 0.02 |
| AI-Pragmatist | 3 | 4 | 1 | minor 1 (resolved) | 3 of 3 | 0 | 4 × 0.03 |

rule adr: 3 discussions, all READY, 12 votes, 2 blocks, 1 decided by a person, commits to
conclusion 2, 3, 1 (median 2), days 2, 4, 0 (median 2).
"""
from __future__ import annotations

import json
from xml.etree import ElementTree
from pathlib import Path

import inproc
import pytest
from conftest import git
from fakellm import Fault
from inproc import commit
from ledgers import stamp
from test_findings import answer
from test_hook import DOC, LEDGER, RULES, install_plain, loop_repo  # noqa: F401  (a fixture)

from cascade.commands.stats import repository_stats

DOC2 = "docs/adr/0002-use-queues.md"
DOC3 = "docs/adr/0003-use-caches.md"
LEDGER2 = "docs/adr/discussions/0002-use-queues.discussion.md"
LEDGER3 = "docs/adr/discussions/0003-use-caches.discussion.md"
COST = {"AI-Architect": "0.01", "AI-Security": "0.02", "AI-Pragmatist": "0.03"}
DAY = 86400
START = 1772359200  # 2026-03-01 10:00 UTC


def cascade(repo: Path, *args: str) -> inproc.Ran:
    return inproc.cascade(repo, *args)


def on_day(monkeypatch, day: int) -> None:
    stamp = f"@{START + day * DAY} +0000"
    monkeypatch.setenv("GIT_AUTHOR_DATE", stamp)
    monkeypatch.setenv("GIT_COMMITTER_DATE", stamp)


def script(fake, name: str, *replies: str) -> None:
    """``name``'s replies, in turn (the last one again after them), each with its cost; what
    the endpoint reports of each (its tokens: a quarter of the characters of the prompt and
    of the reply) is kept in ``fake.served``."""
    def serving(content: str):
        def serve(request) -> Fault:
            fake.served[name] = fake.served.get(name, 0) + len(request.text) // 4 + \
                len(content) // 4
            return Fault(content=content, headers={"x-litellm-response-cost": COST[name]})
        return serve
    fake.script(f"Reply as {name} ", *[serving(r) for r in replies])


def ready() -> str:
    return answer("Fine.", "READY", [])


@pytest.fixture
def history(loop_repo, fake_llm, monkeypatch):
    repo = loop_repo
    fake_llm.served = {}
    (repo / ".ai-rules.yml").write_text(RULES.replace("threshold_ready: 0.67",
                                                      "threshold_ready: 1.0")
                                        + "    deciders: [Test Person]\n")
    git(repo, "add", ".ai-rules.yml")
    git(repo, "commit", "-qm", "deciders", "--no-verify")
    install_plain(repo)
    # ADR 1 proposed on day 0, ADR 2 on day 1, neither reviewed yet
    on_day(monkeypatch, 0)
    git(repo, "add", DOC)
    git(repo, "commit", "-qm", "propose ADR 1", "--no-verify")
    on_day(monkeypatch, 1)
    (repo / DOC2).write_text("# Use queues\n\nWe will use a queue.\n")
    git(repo, "add", DOC2)
    git(repo, "commit", "-qm", "propose ADR 2", "--no-verify")
    # day 2: ADR 1 reviewed, blocked, answered, waived, decided; it lands
    on_day(monkeypatch, 2)
    script(fake_llm, "AI-Architect", answer("Needs work.", "CHANGES", [
        {"severity": "major", "where": "store events", "what": "unbounded retention"},
        {"severity": "critical", "where": "SQLite", "what": "no backups"}]), ready())
    script(fake_llm, "AI-Security", ready())
    script(fake_llm, "AI-Pragmatist", ready())
    (repo / DOC).write_text("# Use SQLite\n\nWe will store events in SQLite.\n\nReviewed.\n")
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1
    for text in ("A(F1): we archive after a year.", "WAIVE(F2): backups are the platform's"):
        assert cascade(repo, "comment", LEDGER, text).returncode == 0
    assert cascade(repo, "decide", DOC, "READY", "--reason", "accepted risk").returncode == 0
    git(repo, "add", DOC, LEDGER)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    # day 4: ADR 2 blocked by the pragmatist; day 5: changed, all READY, it lands
    on_day(monkeypatch, 4)
    script(fake_llm, "AI-Pragmatist", answer("Too vague.", "CHANGES", [
        {"severity": "minor", "where": "a queue", "what": "which queue?"}]),
        answer("Clear now.", "READY", [], resolved=["F1"]))
    (repo / DOC2).write_text("# Use queues\n\nWe will use a queue for events.\n")
    git(repo, "add", DOC2)
    assert commit(repo).returncode == 1
    git(repo, "add", LEDGER2)  # pushed as it stands, past the gate: not its conclusion
    git(repo, "commit", "-qm", "work in progress", "--no-verify")
    on_day(monkeypatch, 5)
    (repo / DOC2).write_text("# Use queues\n\nWe will use a RabbitMQ queue.\n")
    git(repo, "add", DOC2)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    # day 6: ADR 3 lands at once; day 7: a block written by hand under a persona's name
    on_day(monkeypatch, 6)
    script(fake_llm, "AI-Pragmatist", ready())
    (repo / DOC3).write_text("# Use caches\n\nWe will cache reads.\n")
    git(repo, "add", DOC3)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    on_day(monkeypatch, 7)
    with (repo / LEDGER3).open("a") as f:
        f.write("\n---\nName: AI-Security\n\nThis must not stand.\n\nVOTE: REJECT\n---\n")
    git(repo, "add", LEDGER3)
    git(repo, "commit", "-qm", "a hand-written block", "--no-verify")
    return repo


def test_the_figures_are_the_hand_counted_ones(history, fake_llm):
    data = json.loads(cascade(history, "stats", "--json").stdout)
    assert data["discussions"] == 3 and data["unread"] == {}
    personas = {p["name"]: p for p in data["personas"]}
    assert sorted(personas) == ["AI-Architect", "AI-Pragmatist", "AI-Security"]
    expected = {  # discussions, replies, votes, blocks, concluded, agreed, overruled
        "AI-Architect": (3, 4, 4, 1, 3, 2, 1),
        "AI-Security": (3, 4, 4, 0, 3, 3, 0),
        "AI-Pragmatist": (3, 4, 4, 1, 3, 3, 0)}
    for name, counts in expected.items():
        p = personas[name]
        assert (p["discussions"], p["replies"], p["votes"], p["blocks"], p["concluded"],
                p["agreed"], p["overruled"]) == counts, name
    arch, sec, prag = (personas[n] for n in ("AI-Architect", "AI-Security", "AI-Pragmatist"))
    assert arch["block_rate"] == 0.25 and sec["block_rate"] == 0.0
    assert arch["agreement"] == 0.6667 and prag["agreement"] == 1.0
    assert arch["findings"] == {"critical": 1, "major": 1, "minor": 0, "info": 0}
    # F1 was answered, then the decision overrode it (an answer leaves it for a review or a
    # decision to close); F2 was waived before the decision
    assert arch["findings_by_state"] == {"open": 0, "resolved": 0, "answered": 0,
                                         "waived": 1, "overridden": 1}
    assert prag["findings"]["minor"] == 1 and prag["findings_by_state"]["resolved"] == 1
    assert sec["findings"] == dict.fromkeys(("critical", "major", "minor", "info"), 0)
    assert arch["cost"] == 0.04 and arch["cost_per_discussion"] == round(0.04 / 3, 6)
    assert prag["cost"] == 0.12 and prag["cost_per_discussion"] == 0.04
    for name in expected:
        assert personas[name]["tokens"] == fake_llm.served[name] > 0, name
    (rule,) = data["rules"]
    assert rule["name"] == "adr" and rule["discussions"] == 3
    assert rule["outcomes"] == {"READY": 3} and rule["decided"] == 1
    assert (rule["replies"], rule["votes"], rule["blocks"]) == (12, 12, 2)
    assert rule["findings"] == {"critical": 1, "major": 1, "minor": 1, "info": 0}
    assert rule["cost"] == 0.24 and rule["cost_per_discussion"] == 0.08
    assert rule["to_conclusion"] == {"measured": 3,
                                     "commits": {"median": 2, "min": 1, "max": 3},
                                     "days": {"median": 2.0, "min": 0.0, "max": 4.0}}


def test_the_text_says_the_same_figures(history):
    out = cascade(history, "stats").stdout
    assert "The panel over 3 discussions." in out
    assert "AI-Architect: 3 discussions, 4 replies, 4 votes, 1 block (25%)" in out
    assert "findings: 1 critical, 1 major (1 waived, 1 overridden)" in out
    assert "last vote as concluded: 2 of 3 (67%); overruled by a person: 1" in out
    assert "adr: 3 discussions (3 READY), 12 votes, 2 blocks (17%)" in out
    assert "decided by a person: 1; to conclusion: median 2 commits (1-3), 2 days (0-4) " \
           "over 3" in out
    assert "$0.0133 per discussion" in out  # the architect's 0.04 over 3


def test_a_repository_without_discussions(repo):
    ran = cascade(repo, "stats")
    assert ran.returncode == 0 and ran.stdout.strip() == "No discussions yet: nothing to measure."
    data = json.loads(cascade(repo, "stats", "--json").stdout)
    assert data == {"discussions": 0, "personas": [], "rules": [], "unread": {}}


def test_stats_of_the_python_api_match_the_command(history):
    assert repository_stats(history).as_dict() == json.loads(
        cascade(history, "stats", "--json").stdout)


def test_the_sites_page_of_the_panel_shows_the_same_figures(history):
    """stats.html: the same figures (tables) and a chart per figure, each an SVG image file
    with no script in it, with alt text that says its numbers."""
    from test_site import Page
    assert cascade(history, "site").returncode == 0
    site = history / "_site"
    page = Page((site / "stats.html").read_text())
    rows = {r[0]: r for r in page.rows}
    assert rows["AI-Architect"][1:9] == ["3", "4", "1", "25%",
                                         "1 critical, 1 major (1 waived, 1 overridden)",
                                         "2 of 3", "1", rows["AI-Architect"][8]]
    assert rows["AI-Architect"][9] == "$0.0133"
    assert rows["AI-Security"][1:5] == ["3", "4", "0", "0%"]
    assert rows["adr"][1:8] == ["3", "3 READY", "12", "17%",
                                "1 critical, 1 major, 1 minor (1 resolved, 1 waived, "
                                "1 overridden)", "1",
                                "2 commits (1-3), 2 days (0-4) over 3"]
    images = [a for tag, a in page.tags if tag == "img"]
    assert [a["src"] for a in images] == [f"charts/{n}.svg" for n in (
        "block-rate", "findings", "findings-ended", "agreement", "tokens", "days")]
    alt = {a["src"]: a["alt"] for a in images}
    assert "AI-Architect: 25%" in alt["charts/block-rate.svg"]
    assert "AI-Architect: 1 critical, 1 major" in alt["charts/findings.svg"]
    assert "adr: 2 days" in alt["charts/days.svg"]
    for a in images:
        svg = (site / a["src"]).read_bytes()
        ElementTree.fromstring(svg)  # well-formed
        assert b"<script" not in svg and b"http://" not in svg.replace(
            b"http://www.w3.org/", b"").replace(b"http://pygal.org", b"").replace(
            b"http://github.com/Kozea/pygal", b"")
    index = Page((site / "index.html").read_text())
    assert ("a", {"href": "stats.html"}) in index.tags  # every page leads to it


def test_a_rule_name_that_holds_markup_stays_text_in_the_page_and_its_charts(history):
    rules = (history / ".ai-rules.yml").read_text()
    (history / ".ai-rules.yml").write_text(rules.replace(
        "name: adr", "name: \"<script>alert('rule')</script>\""))
    assert cascade(history, "site").returncode == 0
    html = (history / "_site/stats.html").read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert(&#x27;rule&#x27;)" in html
    svg = (history / "_site/charts/days.svg").read_bytes()
    assert b"<script" not in svg and b"&lt;script&gt;alert('rule')&lt;/script&gt;" in svg
    assert {e.text for e in ElementTree.fromstring(svg).iter()
            if e.text and "alert" in e.text} == {"<script>alert('rule')</script>"}


def test_a_topic_discussion_counts_under_its_protocol(repo):
    """A discussion of no document: its replies count for its personas, under
    ``topic (<protocol>)``; a ledger that cannot be read is named, not counted."""
    topic = repo / "notes/caching.discussion.md"
    topic.parent.mkdir()
    topic.write_text(stamp(
        "<!-- DISCUSSION -->\n<!-- Title: Caching -->\n<!-- Protocol: review -->\n"
        "<!-- Participants: architect, security -->\n\n# Caching\n\n---\n\n"
        "---\nName: AI-Architect\n\nCache reads.\n\nVOTE: READY\n---\n\n"
        "---\nName: AI-Security\n\nNot yet.\n\nVOTE: CHANGES\n---\n"))
    (repo / "notes/broken.discussion.md").write_text(
        "<!-- DISCUSSION -->\n<!-- Title: Broken -->\n<!-- Protocol: no-such-protocol -->\n")
    data = json.loads(cascade(repo, "stats", "--json").stdout)
    assert [(r["name"], r["discussions"], r["votes"], r["blocks"]) for r in data["rules"]] == \
        [("topic (review)", 1, 2, 1)]
    assert {p["name"]: p["blocks"] for p in data["personas"]} == {"AI-Architect": 0,
                                                                 "AI-Security": 1}
    assert list(data["unread"]) == ["notes/broken.discussion.md"]
    ran = cascade(repo, "stats")
    assert ran.returncode == 0
    assert "notes/broken.discussion.md: not counted:" in ran.stderr
