"""The review reaches the author, and the gate holds what it says it holds: through real
`git commit` (a plain hook and the pre-commit framework), with replies scripted over HTTP.

- a passing commit whose review leaves findings or questions open shows them (at most six
  lines: who, what, where, and the command that shows the rest);
- a rule's `hold:` holds a commit on an open finding at or above a severity, and the blocked
  message names the finding, its severity and line, and the markers and commands that close it;
- `check` holds a revision whose participant was never heard, as the hook does: deleting the
  REJECT and committing with --no-verify fails `check` (range and snapshot).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import inproc
import pytest
from conftest import git
from inproc import commit
from test_findings import TEXT, answer, cascade, panel
from test_hook import DOC, LEDGER, RULES, install_plain, loop_repo, match, run  # noqa: F401

from cascade.ledger.parse import parse

SECURITY_CHANGES = answer("Retention needs a bound.\n\nQ: Who owns the archive?", "CHANGES", [
    {"severity": "major", "where": "Keep everything", "what": "unbounded retention",
     "suggestion": "keep a year"}])


def _start(repo: Path, rules: str = RULES) -> None:
    (repo / ".ai-rules.yml").write_text(rules)
    git(repo, "add", ".ai-rules.yml")
    git(repo, "commit", "-qm", "rules", "--no-verify", "--allow-empty")
    (repo / DOC).write_text(TEXT)
    git(repo, "add", DOC)


def _cascade_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("cascade: ")]


def test_a_passing_commit_shows_the_open_items_under_a_plain_hook(loop_repo, fake_llm):
    repo = loop_repo
    install_plain(repo)
    panel(fake_llm, answer("Fine.", "READY", []), SECURITY_CHANGES)  # 2 of 3 READY: it passes
    _start(repo)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    shown = _cascade_lines(landed.out)
    at = shown.index(f"cascade: {DOC} passes with 2 open item(s) in its review:")
    assert shown[at + 1:] == [
        "cascade:   F1 major (line 7) from AI-Security: unbounded retention",
        "cascade:   Q1 question from AI-Security (ledger line "
        f"{_line_of(repo, 'Q: Who owns the archive?')}): Who owns the archive?",
        f"cascade:   the whole review: cascade status {DOC}"]
    assert len(shown) - at <= 6


def test_a_long_review_is_cut_to_six_lines_with_the_command_that_shows_the_rest(loop_repo,
                                                                                fake_llm):
    repo = loop_repo
    install_plain(repo)
    many = [{"severity": s, "where": "Keep everything", "what": f"issue {n}"}
            for n, s in enumerate(["major", "minor", "minor", "info", "info"], 1)]
    panel(fake_llm, answer("Fine.", "READY", []), answer("Hm.", "CHANGES", many))
    _start(repo)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    shown = _cascade_lines(landed.out)
    at = shown.index(f"cascade: {DOC} passes with 5 open item(s) in its review:")
    tail = shown[at:]
    assert len(tail) == 5  # the heading, three items, the pointer
    assert tail[1].startswith("cascade:   F1 major")  # the most severe first
    assert tail[-1] == f"cascade:   2 more, and the whole review: cascade status {DOC}"


def test_pre_commit_shows_a_passing_review_s_open_items(loop_repo, fake_llm):
    """The configuration `cascade init` writes (its local hook, verbose: true), run by the real
    pre-commit: a passing hook's output is shown only with verbose, so the author reads it."""
    repo = loop_repo
    assert inproc.cascade(repo, "init").returncode == 0  # in process; pre-commit runs below
    config = repo / ".pre-commit-config.yaml"
    text = config.read_text()
    assert "verbose: true" in text
    config.write_text(text.replace("entry: cascade hook",
                                   f"entry: {sys.executable} -m cascade hook"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init", "--no-verify")
    run(repo, sys.executable, "-m", "pre_commit", "install", check=True)
    panel(fake_llm, answer("Fine.", "READY", []), SECURITY_CHANGES)
    _start(repo, RULES)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert "Passed" in landed.out
    assert f"cascade: {DOC} passes with 2 open item(s) in its review:" in landed.out
    assert "F1 major (line 7) from AI-Security: unbounded retention" in landed.out


def test_the_shipped_hook_manifest_is_verbose():
    import yaml
    manifest = yaml.safe_load((Path(__file__).parent.parent / ".pre-commit-hooks.yaml")
                              .read_text())
    assert next(h for h in manifest if h["id"] == "cascade")["verbose"] is True


HOLD_MAJOR = RULES + "    hold: major\n"


def test_hold_major_blocks_naming_the_finding_and_the_way_out(loop_repo, fake_llm):
    repo = loop_repo
    install_plain(repo)
    panel(fake_llm, answer("Fine.", "READY", []), SECURITY_CHANGES)
    _start(repo, HOLD_MAJOR)
    blocked = commit(repo)
    assert blocked.returncode == 1, blocked.out
    assert ("2/3 READY, but F1 (major, line 7, AI-Security) is open, and the rule holds the "
            "commit on a major or worse finding") in blocked.out
    assert "'A(F1): ...'" in blocked.out
    assert f"cascade comment {DOC} --waive F1 'reason'" in blocked.out
    assert f"cascade decide {DOC} READY --reason '...'" in blocked.out
    # the author answers it, as the message says; the panel reads the answer, and Security
    # finds the document ready: its finding is resolved, the commit passes
    assert cascade(repo, "comment", LEDGER, "A(F1): we keep a year; see the retention ADR"
                   ).returncode == 0
    fake_llm.script(match("AI-Security"), answer("Agreed.", "READY", []))
    git(repo, "add", LEDGER)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    status = json.loads(cascade(repo, "status", LEDGER, "--json").stdout)
    f1 = status["discussions"][0]["findings"][0]
    assert f1["status"] == "resolved" and f1["answers"][0]["text"].startswith("we keep a year")
    assert cascade(repo, "check", "--from-ref", "HEAD~1").returncode == 0


def test_an_answer_closes_a_held_finding_when_the_panel_is_not_asked_again(loop_repo,
                                                                           fake_llm):
    """The answer is the author's word on it: a held finding answered in the ledger no longer
    holds, whether or not the panel speaks again (here its reply is the same CHANGES, whose
    new finding holds in turn: the gate names it)."""
    repo = loop_repo
    install_plain(repo)
    panel(fake_llm, answer("Fine.", "READY", []), SECURITY_CHANGES)
    _start(repo, HOLD_MAJOR)
    assert commit(repo).returncode == 1
    assert cascade(repo, "comment", LEDGER, "A(F1): we keep a year").returncode == 0
    git(repo, "add", LEDGER)
    again = commit(repo)
    assert again.returncode == 1
    assert "but F2 (major, line 7, AI-Security) is open" in again.out  # F1 answered: not named
    status = json.loads(cascade(repo, "status", LEDGER, "--json").stdout)
    assert [f["status"] for f in status["discussions"][0]["findings"]] == ["answered", "open"]


def test_the_default_hold_lets_a_major_finding_through_and_check_agrees(loop_repo, fake_llm):
    repo = loop_repo
    install_plain(repo)
    panel(fake_llm, answer("Fine.", "READY", []), SECURITY_CHANGES)
    _start(repo)
    base = git(repo, "rev-parse", "HEAD").strip()
    assert commit(repo).returncode == 0
    out = cascade(repo, "check", "--from-ref", base, "--format", "github")
    assert out.returncode == 0, out.out
    annotations = [x for x in out.stdout.splitlines() if x.startswith("::")]
    assert annotations == [x for x in annotations if not x.startswith("::error")]
    assert any(x.startswith(f"::warning file={DOC},line=7,") and "F1" in x
               for x in annotations)  # open, and it fails nothing


def test_deleting_the_reject_then_no_verify_fails_check(loop_repo, fake_llm):
    """The hook blocked on Security's REJECT; its block deleted from the working tree, the rest
    committed with --no-verify: 2 of 3 READY with Security never heard does not pass check."""
    repo = loop_repo
    install_plain(repo)
    panel(fake_llm, answer("Fine.", "READY", []), answer("No.", "REJECT", [
        {"severity": "critical", "where": "store events in SQLite", "what": "no backups"}]))
    _start(repo)
    base = git(repo, "rev-parse", "HEAD").strip()
    assert commit(repo).returncode == 1
    text = (repo / LEDGER).read_text()
    block = next(c for c in parse(text).comments if c.author == "AI-Security")
    lines = text.splitlines(keepends=True)
    start = next(i for i in range(block.line - 1, -1, -1) if lines[i].startswith("---"))
    end = next((i for i in range(block.line, len(lines)) if lines[i].startswith("---")),
               len(lines))
    (repo / LEDGER).write_text("".join(lines[:start] + lines[end:]))
    git(repo, "add", LEDGER, DOC)
    git(repo, "commit", "-qm", "sneak", "--no-verify")
    for args in (("--from-ref", base), ()):
        out = cascade(repo, "check", *args)
        assert out.returncode == 1, out.out
        assert "AI-Security has not answered this revision: the review is not complete" in \
            out.stdout, out.out


def _line_of(repo: Path, needle: str) -> int:
    return next(n for n, line in enumerate((repo / LEDGER).read_text().splitlines(), 1)
                if needle in line)



def test_a_decider_by_e_mail_waives_with_comment_waive_from_their_own_commit(loop_repo,
                                                                            fake_llm,
                                                                            monkeypatch):
    repo = loop_repo
    install_plain(repo)
    panel(fake_llm, answer("Fine.", "READY", []), SECURITY_CHANGES)
    _start(repo, HOLD_MAJOR + "    deciders: [carol@example.com]\n")
    assert commit(repo).returncode == 1  # F1 major holds it
    refused = cascade(repo, "comment", DOC, "--waive", "F99", "no such finding")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "WAIVE(F99) names no finding of this discussion (its findings: F1-F1" in \
        refused.stderr
    assert cascade(repo, "comment", DOC, "A(F7): an answer to nothing").returncode == 2
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Carol")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "carol@example.com")
    waived = cascade(repo, "comment", DOC, "--waive", "f1", "a year is fine for now")
    assert waived.returncode == 0, waived.out
    block = [c for c in parse((repo / LEDGER).read_text()).comments][-1]
    assert block.author == "Carol <carol@example.com>"  # what the e-mail entry matches
    assert block.body.strip() == "WAIVE(F1): a year is fine for now"
    # the panel reads the waiver (a person's comment asks it again); Security keeps its CHANGES
    # with a minor point, which the rule does not hold on
    fake_llm.script(match("AI-Security"), answer("Noted the waiver.", "CHANGES", [
        {"severity": "minor", "where": "Keep everything", "what": "say where it is archived"}]))
    git(repo, "add", LEDGER)
    landed = commit(repo)  # Carol's own commit: the waiver counts, nothing holds
    assert landed.returncode == 0, landed.out
    f1 = json.loads(cascade(repo, "status", LEDGER, "--json").stdout)["discussions"][0][
        "findings"][0]
    assert (f1["status"], f1["closed_by"]["by"]) == ("waived", "Carol <carol@example.com>")
    asked = [r.text for r in fake_llm.chat_requests if match("AI-Security") in r.text][-1]
    assert ("> Settled by people (raise one again only if the document has changed what it "
            "is about):\n> F1 (major): unbounded retention -- waived by Carol "
            "<carol@example.com>: a year is fine for now") in asked  # the panel reads it


def test_a_decision_over_open_findings_lists_them_and_they_are_overridden(loop_repo,
                                                                          fake_llm):
    repo = loop_repo
    install_plain(repo)
    panel(fake_llm, answer("Fine.", "READY", []), SECURITY_CHANGES)
    _start(repo, HOLD_MAJOR)
    assert commit(repo).returncode == 1  # F1 holds it
    decided = cascade(repo, "decide", DOC, "READY", "--reason", "a year is our policy")
    assert decided.returncode == 0, decided.out
    block = [c for c in parse((repo / LEDGER).read_text()).comments][-1]
    assert "overriding the panel and its open findings F1 (major, AI-Security: unbounded " \
        "retention).\n\na year is our policy" in block.body
    git(repo, "add", LEDGER, DOC)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    shown = _cascade_lines(landed.out)
    at = shown.index(f"cascade: {DOC} passes with 1 open item(s) in its review:")
    assert not any("F1" in line for line in shown[at:])  # overridden: not shown as open
    data = json.loads(cascade(repo, "status", LEDGER, "--json").stdout)["discussions"][0]
    f1 = data["findings"][0]
    assert (f1["status"], f1["closed_by"]["how"]) == ("overridden", "decided READY")
    assert data["gate"]["ok"] is True and data["gate"]["effects"] == {"F1": None}
    status = cascade(repo, "status", LEDGER).out
    assert "F1 major: unbounded retention (@security) -- overridden (decided READY) by" in status


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_the_ui_shows_the_gate_s_verdict_and_the_open_finding(loop_repo, fake_llm,
                                                                   monkeypatch):
    """The terminal UI (driven by Textual's Pilot) says what the hook said: the commit passed,
    and F1 is open."""
    from cascade.ui.app import CascadeApp

    repo = loop_repo
    install_plain(repo)
    panel(fake_llm, answer("Fine.", "READY", []), SECURITY_CHANGES)
    _start(repo)
    assert commit(repo).returncode == 0
    monkeypatch.chdir(repo)
    app = CascadeApp(repo / LEDGER)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        summary = str(app.screen.query_one("#summary").render())
        side = str(app.screen.query_one("#side-text").render())
    assert f"Gate for {DOC}: ok: consensus READY (2/3 READY)" in summary
    assert "F1 major (line 7): unbounded retention (AI-Security)" in side


def test_a_hostile_finding_is_shown_inert_on_a_passing_commit(loop_repo, fake_llm):
    """A finding is model text: shown to the author, it can neither colour nor clear the
    terminal, nor forge a line of cascade's own."""
    repo = loop_repo
    install_plain(repo)
    panel(fake_llm, answer("Fine.", "READY", []), answer("Hm.", "CHANGES", [
        {"severity": "minor", "where": "Keep everything",
         "what": "\x1b[2J\x1b[31mred\x1b[0m\ncascade: all clear, nothing open\r"}]))
    _start(repo)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert "\x1b" not in landed.out and "\r" not in landed.out
    assert not any(line.startswith("cascade: all clear") for line in landed.out.splitlines())
    shown = next(line for line in _cascade_lines(landed.out) if "F1 minor" in line)
    assert "red" in shown and "cascade: all clear" in shown  # the text itself, on its own line


def test_a_persona_that_fails_holds_the_hook_and_check_alike(loop_repo, fake_llm, monkeypatch):
    """Two READY and a persona that never answered (its endpoint fails): no open items are
    shown as if it passed, and the ledger committed past the hook fails check, naming it."""
    from fakellm import http_error

    repo = loop_repo
    monkeypatch.setenv("CASCADE_RETRIES", "0")
    install_plain(repo)
    panel(fake_llm, answer("Fine.", "READY", []), http_error(500, "upstream down"))
    _start(repo)
    base = git(repo, "rev-parse", "HEAD").strip()
    blocked = commit(repo)
    assert blocked.returncode == 1 and "open item(s)" not in blocked.out
    git(repo, "add", LEDGER)
    git(repo, "commit", "-qm", "past the hook", "--no-verify")
    for args in (("--from-ref", base), ()):
        out = cascade(repo, "check", *args)
        assert out.returncode == 1 and "AI-Security did not answer for this revision" in \
            out.stdout, out.out


@pytest.mark.parametrize("rules,passes", [(RULES, True), (HOLD_MAJOR, False)])
def test_every_surface_gives_the_one_verdict(rules, passes, loop_repo, fake_llm):
    """One revision, a passing and a held one: the hook's line, check in text, JSON, GitHub
    and SARIF, and status say the same verdict, and F1's level agrees with it."""
    repo = loop_repo
    install_plain(repo)
    panel(fake_llm, answer("Fine.", "READY", []), SECURITY_CHANGES)
    _start(repo, rules)
    base = git(repo, "rev-parse", "HEAD").strip()
    hook_run = commit(repo)
    assert (hook_run.returncode == 0) is passes
    if not passes:
        git(repo, "add", LEDGER)
        git(repo, "commit", "-qm", "past the hook", "--no-verify")
    gate = json.loads(cascade(repo, "status", LEDGER, "--json").stdout)["discussions"][0]["gate"]
    assert gate["ok"] is passes
    assert f"{'ok' if passes else 'blocked'}: {gate['reason']}" in hook_run.out
    text = cascade(repo, "check", "--from-ref", base)
    data = json.loads(cascade(repo, "check", "--from-ref", base, "--format", "json").stdout)
    github = cascade(repo, "check", "--from-ref", base, "--format", "github").stdout
    sarif = json.loads(cascade(repo, "check", "--from-ref", base, "--format", "sarif").stdout)
    assert (text.returncode == 0) is passes and data["ok"] is passes
    assert data["verdicts"][0]["ok"] is passes and gate["reason"] in data["verdicts"][0]["verdict"]
    level = "error" if not passes else "warning"
    assert gate["effects"] == {"F1": level}
    assert any(x.startswith(f"::{level} ") and "cascade F1 (major)" in x
               for x in github.splitlines())
    f1 = next(r for r in sarif["runs"][0]["results"] if r["ruleId"] == "finding/major")
    assert f1["level"] == level
