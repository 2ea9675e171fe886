"""Findings: every blocking verdict says where and why, on the document's own lines.

The reading and locating of a reply's findings and the policy table are pure (tested
directly, the policy exhaustively and as a property); the rest runs in a real repository:
real git, the real hook under `git commit`, scripted replies over HTTP, `cascade status` and
`cascade check` as a user runs them.
"""
from __future__ import annotations

import itertools
import json
import re
import subprocess
from pathlib import Path

import jsonschema
import inproc
import pytest
from conftest import git
from hypothesis import given
from hypothesis import strategies as st
from inproc import commit
from test_hook import DOC, LEDGER, RULES, install_plain, loop_repo, match  # noqa: F401  (loop_repo is a fixture)

from cascade import Discussion
from cascade.config.rules import SEVERITIES
from cascade.ledger.parse import parse
from cascade.protocol import findings as F
from cascade.ui.view_data import view  # the UI's discussion view

pytestmark = pytest.mark.usefixtures("hook_stages_nothing")

TEXT = "# Use SQLite\n\nWe will store events in SQLite.\n\n## Retention\n\nKeep everything.\n"


def answer(comment: str, vote: str | None, findings=None, **extra) -> str:
    body = {"comment": comment, "vote": vote, **extra}
    if findings is not None:
        body["findings"] = findings
    return json.dumps(body)


def cascade(repo: Path, *args: str) -> inproc.Ran:
    """``cascade ARGS`` in ``repo``, in this process (tests/inproc.py)."""
    return inproc.cascade(repo, *args)


def panel(fake, architect: str, security: str | None = None, pragmatist: str | None = None):
    fake.script(match("AI-Architect"), architect)
    fake.script(match("AI-Security"), security or answer("Fine.", "READY", []))
    fake.script(match("AI-Pragmatist"), pragmatist or answer("Fine.", "READY", []))


def first_review(repo: Path, fake, rules: str = RULES) -> subprocess.CompletedProcess[str]:
    """The document staged and committed: the hook asks the panel and blocks (it wrote)."""
    (repo / ".ai-rules.yml").write_text(rules)
    (repo / DOC).write_text(TEXT)
    git(repo, "add", ".ai-rules.yml")
    git(repo, "commit", "-qm", "rules", "--no-verify", "--allow-empty")
    install_plain(repo)
    git(repo, "add", DOC)
    proc = commit(repo)
    assert proc.returncode == 1, proc.out
    return proc


def findings_of(repo: Path) -> list[dict]:
    """The findings as `cascade status --json` gives them (under the rule's authority)."""
    data = json.loads(cascade(repo, "status", LEDGER, "--json").stdout)
    return data["discussions"][0]["findings"]


def block_of(repo: Path, author: str, index: int = -1):
    return [c for c in parse((repo / LEDGER).read_text()).comments if c.author == author][index]


# ---- reading and locating -----------------------------------------------------------------------

def test_findings_are_read_tolerantly():
    found, notes = F.read([
        {"severity": "critical", "where": "store events", "what": "no backups", "why": "loss",
         "suggestion": "add nightly backups", "colour": "red"},  # an unknown key: ignored
        "a bare string is the what",
        {"where": "Retention", "what": "no severity given"},
        {"severity": "bad", "what": "unknown severity"},
        {"where": "no what"}, 42])
    assert [(f.severity, f.what) for f in found] == [
        ("critical", "no backups"), ("major", "a bare string is the what"),
        ("major", "no severity given"), ("major", "unknown severity")]
    assert found[0].why == "loss" and found[0].suggestion == "add nightly backups"
    assert notes == ["findings: 3 without a known severity; taken as major",
                     "findings: 2 without a 'what' dropped"]
    assert F.read(None) == ([], [])


def test_where_is_located_by_quote_or_heading_and_never_guessed():
    assert F.locate("  WE WILL store\n events ", TEXT) == (3, 3)  # spacing and case aside
    assert F.locate('"store events in SQLite. Retention"', TEXT) == (3, 5)  # across lines
    assert F.locate("## Retention", TEXT) == (5, 5)
    assert F.locate("retention", TEXT) == (5, 5)
    assert F.locate("a sentence the document does not hold", TEXT) is None
    assert F.locate("We", TEXT) is None  # too short to be a quote, and no heading
    assert F.locate("store events", None) is None  # no document shown: nothing located
    found = F.located(F.read([{"severity": "minor", "where": "nowhere at all", "what": "x"},
                              {"severity": "major", "where": "Keep everything", "what": "y"}])[0],
                      TEXT)
    assert F.decode(F.encode(found)) == found
    assert [f.at for f in found] == ["not found", "7"]


# ---- the policy -------------------------------------------------------------------------------

def _stamp(severities, located=True):
    return {F.FIELD: F.encode(F.Finding(s, "q", f"a {s} thing", lines=(1, 1) if located else None)
                              for s in severities)}


@pytest.mark.parametrize("vote, severities, counted", [
    ("READY", [], "READY"), ("READY", ["info", "minor"], "READY"),
    ("READY", ["major"], "CHANGES"), ("READY", ["critical"], "REJECT"),
    ("READY", ["minor", "critical", "major"], "REJECT"), ("CHANGES", ["critical"], "REJECT"),
    ("CHANGES", ["minor"], "CHANGES"), ("REJECT", ["minor"], "REJECT"),
    ("ACCEPT", ["critical"], "REJECT"), ("ACCEPT", ["minor"], "ACCEPT"),
])
def test_the_default_policy_table(vote, severities, counted):
    weighed = F.counted(vote, _stamp(severities), F.policy_of(None))
    assert weighed.vote == counted
    assert (weighed.why is None) == (counted == vote)


def test_every_vote_with_every_finding_never_counts_below_its_floor():
    """Exhaustive over votes x sets of severities: a critical finding is never READY."""
    for vote in ("READY", "CHANGES", "REJECT", "ACCEPT"):
        for n in range(4):
            for severities in itertools.combinations_with_replacement(SEVERITIES, n):
                weighed = F.counted(vote, _stamp(severities), F.policy_of(None))
                if "critical" in severities:
                    assert weighed.vote == "REJECT", (vote, severities)
                if "major" in severities:
                    assert weighed.vote in ("CHANGES", "REJECT"), (vote, severities)


@given(st.sampled_from(["READY", "CHANGES", "REJECT", "ACCEPT"]),
       st.lists(st.sampled_from(SEVERITIES), max_size=6), st.booleans(),
       st.dictionaries(st.sampled_from(SEVERITIES[1:]),
                       st.sampled_from(["READY", "CHANGES", "REJECT"])),
       st.booleans())
def test_no_reply_with_a_critical_finding_is_ever_counted_ready(vote, severities, located,
                                                                 given_policy, require):
    policy = F.policy_of(tuple(given_policy.items()), require)
    weighed = F.counted(vote, _stamp(severities, located), policy)
    if "critical" in severities:
        assert weighed.vote == "REJECT"
    assert F.VERDICTS.index({"ACCEPT": "READY"}.get(weighed.vote, weighed.vote)) >= \
        F.VERDICTS.index({"ACCEPT": "READY"}.get(vote, vote))  # never loosened


def test_a_step_without_findings_counts_its_vote_as_given():
    assert F.counted("READY", {}, F.Policy()) == F.Counted("READY")


# ---- in a real repository --------------------------------------------------------------------

def test_a_ready_with_a_critical_finding_counts_as_reject_everywhere(loop_repo, fake_llm):
    repo = loop_repo
    panel(fake_llm, answer("Looks fine to me.", "READY", [
        {"severity": "critical", "where": "store events in sqlite", "what": "no backup plan",
         "why": "a lost disk loses every event", "suggestion": "add nightly backups"},
        {"severity": "minor", "where": "a sentence it does not hold", "what": "wording"}]))
    proc = first_review(repo, fake_llm)
    assert "READY:2 REJECT:1" in proc.out
    c = block_of(repo, "AI-Architect")
    assert c.vote == "READY"  # as given; counted as REJECT, and the block says so
    assert F.decode(c.provenance["findings"])[0].lines == (3, 3)
    assert F.decode(c.provenance["findings"])[1].lines is None
    assert "- F1 **critical** (line 3): no backup plan -- add nightly backups" in c.body
    assert "- F2 **minor** (not found in the document): wording" in c.body
    assert ("**Counted:** READY counted as REJECT: its critical finding (no backup plan) asks "
            "at least REJECT.") in c.body
    status = cascade(repo, "status", LEDGER)
    assert "REJECT (READY counted as REJECT: its critical finding" in status.out
    assert "Open Findings (2):" in status.out
    assert "F1 critical (line 3): no backup plan (@architect)" in status.out
    assert "F2 minor (not located): wording (@architect)" in status.out
    assert [f["id"] for f in findings_of(repo)] == ["F1", "F2"]
    explained = cascade(repo, "explain", DOC).out
    assert "Open findings (2), the most severe first:" in explained
    assert "  F1 critical (line 3): no backup plan (AI-Architect)" in explained
    assert cascade(repo, "summary", LEDGER).returncode == 0
    summary = (repo / LEDGER.replace(".md", ".sum.md")).read_text()
    assert "## Open findings\n\n- F1 critical (line 3): no backup plan (AI-Architect)" in summary
    assert view(repo / LEDGER).findings[0].startswith("F1 critical (line 3): no backup plan")
    # check agrees, without a model
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "add", LEDGER)
    git(repo, "commit", "-qm", "land", "--no-verify")
    out = cascade(repo, "check", "--from-ref", base)
    assert out.returncode == 1, out.out
    assert "REJECT from AI-Architect" in out.out


def test_a_blocking_vote_without_findings_is_asked_once_more(loop_repo, fake_llm):
    repo = loop_repo
    explained = answer("Needs work.", "CHANGES", [
        {"severity": "major", "where": "Retention", "what": "unbounded retention"}])
    panel(fake_llm, explained, answer("No.", "REJECT"))  # Security never gives one
    fake_llm.script(match("AI-Architect"), answer("Needs work.", "CHANGES"), explained)
    first_review(repo, fake_llm)
    assert fake_llm.calls(match("AI-Architect")) == 2
    assert fake_llm.calls(match("AI-Security")) == 2  # asked once more, never a third time
    assert fake_llm.calls(match("AI-Pragmatist")) == 1
    again = [r.text for r in fake_llm.chat_requests if match("AI-Security") in r.text][1]
    assert "Your vote is REJECT but you gave no findings" in again
    architect, security = block_of(repo, "AI-Architect"), block_of(repo, "AI-Security")
    assert F.decode(architect.provenance["findings"])[0].lines == (5, 5)
    assert "unexplained" not in architect.provenance
    assert security.provenance["unexplained"] == "yes" and security.vote == "REJECT"
    status = cascade(repo, "status", LEDGER)
    assert "AI-Security" in status.out and "REJECT from AI-Security" in status.out  # it counts


def test_a_waiver_counts_from_a_decider_and_is_refused_otherwise(loop_repo, fake_llm,
                                                                  monkeypatch):
    repo = loop_repo
    rules = RULES + "    deciders: [Dana Decider]\n"
    panel(fake_llm, answer("Needs work.", "CHANGES", [
        {"severity": "major", "where": "Keep everything", "what": "unbounded retention"}]))
    first_review(repo, fake_llm, rules)
    assert cascade(repo, "comment", LEDGER, "WAIVE(F1): fine by me", "--author",
                   "Bob Builder").returncode == 0
    found = findings_of(repo)
    assert found[0]["status"] == "open"
    assert found[0]["closed_by"]["refused"] == "Bob Builder is not one of the rule's deciders"
    status = cascade(repo, "status", LEDGER).out
    assert ("F1 major (line 7): unbounded retention (@architect) [waiver refused: Bob Builder "
            "is not one of the rule's deciders]") in status
    assert cascade(repo, "comment", LEDGER, "A(F1): we archive after a year.\n\n"
                   "WAIVE(F1): archived after a year, agreed", "--author",
                   "Dana Decider").returncode == 0
    found = findings_of(repo)  # the commit would be Test Person's, not Dana's: refused
    assert found[0]["status"] == "answered"  # a person answered it; the waiver does not count
    assert found[0]["closed_by"]["refused"] == ("recorded as Dana Decider's, but added in a "
                                                "commit by Test Person <test@example.com>")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Dana Decider")  # Dana commits it: it counts
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "dana@example.com")
    found = findings_of(repo)
    assert found[0]["status"] == "waived"
    assert found[0]["closed_by"]["by"] == "Dana Decider"
    assert found[0]["answers"][0]["text"] == "we archive after a year."
    assert Discussion.load(repo / LEDGER, root=repo).questions == []  # A(F1): not a question
    assert "Open Findings" not in cascade(repo, "status", LEDGER).out


def test_findings_are_carried_and_resolved_across_revisions(loop_repo, fake_llm):
    repo = loop_repo
    panel(fake_llm, answer("Needs work.", "CHANGES", [
        {"severity": "major", "where": "Keep everything", "what": "unbounded retention"}]))
    first_review(repo, fake_llm)
    git(repo, "add", LEDGER)
    (repo / DOC).write_text(TEXT.replace("Keep everything.", "Keep a year, then archive."))
    panel(fake_llm, answer("Better.", "READY", [], resolved=["F1"]),
          answer("Fine.", "READY", [{"severity": "minor", "where": "Keep a year",
                                     "what": "say where the archive lives"}]))
    git(repo, "add", DOC)
    second = commit(repo)
    assert second.returncode == 1, second.out  # it wrote: the ledger is to be staged
    prompts = [r.text for r in fake_llm.chat_requests if match("AI-Architect") in r.text]
    assert len(prompts) == 2
    assert "Findings still open from earlier reviews" not in prompts[0]
    assert "Findings still open from earlier reviews" in prompts[1]
    assert re.search(r"F1 \(major, lines? 7 of revision [0-9a-f]{7}\): unbounded retention",
                     prompts[1])
    d = Discussion.load(repo / LEDGER, root=repo)
    assert [(f.id, f.status) for f in d.findings] == [("F1", "resolved"), ("F2", "open")]
    assert d.findings[0].closed_by["by"] == "AI-Architect"
    assert "- F2 **minor** (line 7): say where the archive lives" in block_of(
        repo, "AI-Security").body  # numbered on from the ledger's
    status = cascade(repo, "status", LEDGER).out
    open_part = status.split("Open Findings")[1].split("Closed Findings")[0]
    assert "Open Findings (1):" in status and "F1" not in open_part
    assert "F1 major: unbounded retention (@architect) -- resolved by @architect" in \
        status.split("Closed Findings (1):")[1]
    git(repo, "add", LEDGER)
    assert commit(repo).returncode == 0


def test_a_concern_marker_is_a_major_finding(loop_repo, fake_llm):
    repo = loop_repo
    panel(fake_llm, answer("Fine.", "READY", []))
    first_review(repo, fake_llm)
    assert cascade(repo, "comment", LEDGER, "CONCERN: the events table grows forever",
                   "--author", "Ann").returncode == 0
    d = Discussion.load(repo / LEDGER, root=repo)
    assert [(f.id, f.severity, f.what, f.located) for f in d.findings] == [
        ("F1", "major", "the events table grows forever", False)]
    assert "F1 major: the events table grows forever (Ann)" in cascade(repo, "status",
                                                                       LEDGER).out


def test_require_location_makes_an_unlocated_block_advisory(loop_repo, fake_llm):
    repo = loop_repo
    rules = RULES + "    require_location: true\n"
    panel(fake_llm, answer("No.", "REJECT", [
        {"severity": "critical", "where": "a passage it never had", "what": "vague"}]))
    first_review(repo, fake_llm, rules)
    git(repo, "add", LEDGER)
    status = cascade(repo, "status", LEDGER).out
    assert "REJECT (REJECT is advisory: none of its blocking findings is located" in status
    assert commit(repo).returncode == 0  # two READY, the unlocated REJECT advisory


@pytest.mark.parametrize("policy, message, line", [
    ("    policy: {critical: MAYBE}\n", "policy critical must be READY, CHANGES or REJECT", 8),
    ("    policy:\n      blocker: REJECT\n", "policy key 'blocker' must be a severity", 9),
    ("    policy: strict\n", "rule 'policy' must be a mapping of severity", 8),
    ("    require_location: sometimes\n", "require_location must be true or false", 8),
])
def test_a_bad_policy_is_one_line_at_its_file_and_line(loop_repo, policy, message, line):
    repo = loop_repo
    (repo / ".ai-rules.yml").write_text(RULES + policy)
    git(repo, "add", DOC)
    proc = inproc.cascade(repo, "hook", DOC)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip() == proc.stderr.strip().splitlines()[0]
    assert proc.stderr.startswith(f"cascade: .ai-rules.yml:{line}: "), proc.stderr
    assert message in proc.stderr


# ---- in the pull request -----------------------------------------------------------------------

SARIF_SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
# The OASIS SARIF 2.1.0 schema, as published at
# https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json
# (its $id: https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/
# sarif-schema-2.1.0.json).


def landed_with_findings(repo: Path, fake) -> str:
    """A reviewed ADR landed (with --no-verify, as CI sees a pushed branch) with two open
    findings: one located on the document, one not. The commit before it."""
    panel(fake, answer("Needs work.", "CHANGES", [
        {"severity": "critical", "where": "store events in SQLite", "what": "no backups",
         "why": "a lost disk loses every event", "suggestion": "add nightly backups"},
        {"severity": "minor", "where": "a passage it never had", "what": "wording"}]))
    first_review(repo, fake)
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "add", LEDGER)
    git(repo, "commit", "-qm", "land", "--no-verify")
    return base


def test_check_annotates_each_open_finding_on_the_document_s_line(loop_repo, fake_llm):
    repo = loop_repo
    base = landed_with_findings(repo, fake_llm)
    out = cascade(repo, "check", "--from-ref", base, "--format", "github")
    assert out.returncode == 1, out.out
    lines = out.stdout.splitlines()
    critical = next(x for x in lines if "title=cascade F1" in x)
    problem = next(x for x in lines if "title=cascade check" in x)  # names the way out
    assert problem.endswith("ways out: answer F1 in the ledger ('A(F1): ...'), ask one persona "
                            f"with @alias, or cascade decide {DOC} READY --reason '...'")
    assert critical.startswith(f"::error file={DOC},line=3,endLine=3,title=cascade F1 "
                               "(critical)::F1 (critical, AI-Architect): no backups -- why: a "
                               "lost disk loses every event -- suggestion: add nightly backups")
    minor = next(x for x in lines if "title=cascade F2" in x)
    ledger_line = block_of(repo, "AI-Architect").line
    assert minor.startswith(f"::notice file={LEDGER},line={ledger_line},")  # it fails nothing
    assert minor.endswith("wording (not located in the document)")
    plain = cascade(repo, "check", "--from-ref", base)
    # the text format says what fails and its way out, not every finding
    assert "no backups" not in plain.stdout and "answer F1 in the ledger" in plain.stdout
    # a waiver committed by the person it names closes the finding; one by another does not
    assert cascade(repo, "comment", LEDGER, "WAIVE(F1): we accept it", "--author",
                   "Someone Else").returncode == 0
    assert cascade(repo, "comment", LEDGER, "WAIVE(F2): the wording is fine", "--author",
                   "Test Person").returncode == 0
    git(repo, "add", LEDGER)
    git(repo, "commit", "-qm", "waive", "--no-verify")  # as Test Person
    out = cascade(repo, "check", "--from-ref", base, "--format", "github").stdout
    assert "cascade F1 (critical)" in out and "cascade F2" not in out


def test_check_writes_sarif_that_the_2_1_0_schema_accepts(loop_repo, fake_llm):
    repo = loop_repo
    base = landed_with_findings(repo, fake_llm)
    out = cascade(repo, "check", "--from-ref", base, "--format", "sarif")
    assert out.returncode == 1, out.out
    data = json.loads(out.stdout)
    jsonschema.validate(data, json.loads(SARIF_SCHEMA.read_text()))
    results = data["runs"][0]["results"]
    found = [r for r in results if r["ruleId"].startswith("finding/")]
    assert [(r["ruleId"], r["level"]) for r in found] == [("finding/critical", "error"),
                                                          ("finding/minor", "note")]
    where = found[0]["locations"][0]["physicalLocation"]
    assert where == {"artifactLocation": {"uri": DOC}, "region": {"startLine": 3, "endLine": 3}}
    assert found[0]["message"]["text"].startswith("F1 (critical, AI-Architect): no backups")
    assert any(r["ruleId"] == "check/no-consensus" for r in results)  # why the check fails
    bad = json.loads(out.stdout)
    bad["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):  # the schema does judge
        jsonschema.validate(bad, json.loads(SARIF_SCHEMA.read_text()))


def test_who_is_not_asked_again_for_findings():
    """The embedded model's grammar holds a comment and a vote only: asked again for findings,
    it could only say the same, so its blocking vote is recorded as unexplained at once; and
    an advisory phase's vote, which cannot block, is not asked again."""
    from cascade.protocol.loader import load_protocol
    from cascade.protocol.runstate import Request
    from cascade.run.step_turn import unexplained
    from cascade.turns.call import LOCAL_MODEL
    from cascade.turns.replies import Reply

    step = load_protocol("review", None).steps.steps[0]
    request = Request("security", "participant", step, 1, "fast", [], None, "")
    reply = Reply("The tokens are kept in plain text.", "CHANGES")
    assert unexplained(request, reply, True, "openai/gpt-4o")
    assert not unexplained(request, reply, True, LOCAL_MODEL)
    assert not unexplained(request, Reply("Fine.", "READY"), True, "openai/gpt-4o")
    # an advisory phase's vote cannot block: not asked again either
    feedback = load_protocol("phased", None).steps.steps[0]
    assert not feedback.confirm
    assert not unexplained(Request("security", "participant", feedback, 1, "fast", [], None, ""),
                           reply, True, "openai/gpt-4o")


@pytest.mark.parametrize("required, calls, rounds", [(False, 14, 2), (True, 7, 1)])
def test_require_location_makes_an_unlocated_confirmation_advisory(loop_repo, fake_llm,
                                                                    required, calls, rounds):
    """A step protocol's confirmation too: a REJECT whose findings are all unlocated does not
    hold the synthesis back under require_location (pcs accepts in round 1); without it, it
    does (round 2)."""
    from test_pcs import Panel

    repo = loop_repo
    rules = RULES.replace("participants: [architect, security, pragmatist]",
                          "participants: [architect, security]\n    protocol: pcs")
    rules += "    require_location: true\n" if required else ""
    (repo / ".ai-rules.yml").write_text(rules)
    git(repo, "commit", "-qam", "ADRs are discussed with pcs")
    install_plain(repo)
    git(repo, "add", DOC)
    panel_ = Panel(fake_llm)
    panel_.verdicts[("AI-Security", 1)] = "REJECT"  # its finding quotes "-": not located
    blocked = commit(repo)
    assert fake_llm.calls() == calls, blocked.out
    data = json.loads(cascade(repo, "status", LEDGER, "--json").stdout)["discussions"][0]
    assert (data["outcome"], data["round"], data["consensus"]["reached"]) == ("READY", rounds, True)
    reject = [c for c in parse((repo / LEDGER).read_text()).comments
              if c.author == "AI-Security" and c.provenance.get("verdict") == "REJECT"]
    assert len(reject) == 1
