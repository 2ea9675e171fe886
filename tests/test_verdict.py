"""The gate's one verdict (cascade.protocol.verdict.gate), from the ledger alone: a table over
votes x findings x policy (hold:) x awaited x decisions x waivers and answers, and a property:
no surface -- the check's annotations (GitHub, SARIF), its job summary, the hook's open items
-- shows an error or an open finding the verdict does not hold, and nothing passes while a
participant is awaited.

The ledgers are built as the tool writes them (stamped blocks, stamped events), read with the
real parser and derived under a rule's authority; the expected verdict is written out by hand
from the rule's words, not computed by the code under test.
"""
from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ledgers import stamped_event

from cascade.check.documents import Governed, judge
from cascade.check.annotations import place
from cascade.check.ledgers import Job, evaluate
from cascade.check.formats import github, sarif, step_summary
from cascade.check.report import Report
from cascade.config.rules import Rule
from cascade.ledger.consensus import VotingConfig
from cascade.ledger.records import SOURCE_REVISION
from cascade.ledger.render import render_comment
from cascade.loop.hook_verdict import open_items
from cascade.loop.item import Item
from cascade.protocol import findings as F
from cascade.protocol.authority import Authority
from cascade.protocol.discussion import Discussion
from cascade.protocol.setting import setting_of
from cascade.protocol.verdict import gate

DOC = "docs/adr/0001-x.md"
LEDGER = "docs/adr/discussions/0001-x.discussion.md"
TEXT = "# X\n\nWe will store events in SQLite.\n\n## Retention\n\nKeep everything.\n"
REV = "a" * 40
DECIDER = "Dana Decider"
HEADER = ("<!-- DISCUSSION -->\n<!-- Title: X -->\n<!-- Protocol: review -->\n"
          "<!-- Phase: review -->\n<!-- Status: OPEN -->\n"
          "<!-- Participants: architect, security, pragmatist -->\n"
          f"<!-- Source: {DOC} -->\n\n# Review: X\n\n")
SEVERITY_RANK = {"critical": 0, "major": 1, "minor": 2, "info": 3}


def persona_block(name: str, vote: str, severity: str | None, revision: str = REV) -> str:
    found = [] if severity is None else [F.Finding(severity, "Keep everything", f"a {severity} "
                                                   "issue", lines=(7, 7))]
    return render_comment(name, f"{name} reviews.", vote, provenance={
        "model": "test", "revision": revision, "seen": "all", "findings": F.encode(found),
        **({"unexplained": "yes"} if vote != "READY" and not found else {})})


def ledger(security: str | None, severity: str | None, closing: str | None,
           decision: str | None) -> str:
    """The panel's review of revision REV: Architect and Pragmatist READY, Security as given
    (None: never answered) with a finding of ``severity``; then a person's ``closing`` of F1
    (``answer``, ``waive``, ``waive-by-other``) and a decision in force (``READY``,
    ``REJECT``) by the rule's decider."""
    out = HEADER + stamped_event(SOURCE_REVISION, f"{REV} path={DOC}") + "\n\n"
    out += persona_block("AI-Architect", "READY", None)
    if security is not None:
        out += persona_block("AI-Security", security, severity)
    out += persona_block("AI-Pragmatist", "READY", None)
    if closing == "answer":
        out += render_comment("Ann Author", "A(F1): we keep a year.")
    elif closing == "waive":
        out += render_comment(DECIDER, "WAIVE(F1): accepted for now.")
    elif closing == "waive-by-other":
        out += render_comment("Bob Builder", "WAIVE(F1): fine by me.")
    if decision is not None:
        out += render_comment(DECIDER, f"**Decision: {decision}** -- {DECIDER} decides.\n\n"
                              "We decide.", None, origin="decision",
                              provenance={"vote": decision, "revision": REV, "by": DECIDER})
    return out


def authority(hold: str) -> Authority:
    return Authority(("architect", "security", "pragmatist"), "review",
                     VotingConfig(0.67, 0.01), (DECIDER,), True, "rule 'adr' (.ai-rules.yml:1)",
                     F.policy_of(None, False, hold))


def judged(text: str, hold: str, tmp_path: Path):
    d = Discussion(tmp_path / LEDGER, text, setting_of(tmp_path), authority=authority(hold))
    return gate(d.state, REV, DOC), d


# ---- the table --------------------------------------------------------------------------------

VOTES = (None, "READY", "CHANGES", "REJECT")
SEVERITIES = (None, "critical", "major", "minor")
HOLDS = ("critical", "major", "none")
CLOSINGS = (None, "answer", "waive", "waive-by-other")
DECISIONS = (None, "READY", "REJECT")


def expected(security, severity, hold, closing, decision):
    """The verdict as the rule's words give it: (ok, kind, F1's status, F1's effect)."""
    status = None
    if severity is not None and security is not None:
        status = {None: "open", "answer": "answered", "waive": "waived",
                  "waive-by-other": "open"}[closing]
        if decision is not None and status in ("open", "answered"):
            status = "overridden"  # a person's decision in force over it
    if decision == "READY":
        return True, "ok", status, None
    if decision == "REJECT":
        return False, "rejected", status, None
    if security is None:
        return False, "awaited", status, None  # 2/3 READY meets 0.67: only the wait holds it
    least = {"critical": "REJECT", "major": "CHANGES"}.get(severity, "READY")
    order = ("READY", "CHANGES", "REJECT")
    counted = max(security, least, key=order.index)
    if counted == "REJECT":  # any REJECT (threshold_reject 0.01) blocks
        blocks = severity in ("critical", "major") and status == "open"
        return False, "no-consensus", status, ("error" if blocks else _level(severity, status))
    if (status == "open" and hold != "none"
            and SEVERITY_RANK[severity] <= SEVERITY_RANK[hold]):
        return False, "findings", status, "error"
    return True, "ok", status, _level(severity, status)


def _level(severity, status):
    if status != "open":
        return None
    return "warning" if severity in ("critical", "major") else "notice"


CASES = [c for c in itertools.product(VOTES, SEVERITIES, HOLDS, CLOSINGS, DECISIONS)
         if not (c[1] is None and c[3] is not None)  # no finding: nothing to close
         and not (c[0] is None and (c[1] is not None or c[3] is not None))]


@pytest.mark.parametrize("security,severity,hold,closing,decision", CASES)
def test_the_verdict_weighs_every_piece_of_evidence(security, severity, hold, closing,
                                                    decision, tmp_path):
    verdict, d = judged(ledger(security, severity, closing, decision), hold, tmp_path)
    ok, kind, status, effect = expected(security, severity, hold, closing, decision)
    assert (verdict.ok, verdict.kind) == (ok, kind), verdict.reason
    if status is None:
        assert verdict.findings == ()
        return
    (f1,) = verdict.findings
    assert f1.status == status
    assert verdict.effect(f1) == effect
    assert verdict.awaited == (("AI-Security",) if kind == "awaited" else ())
    if kind == "findings":
        assert verdict.holding == ("F1",) and "F1 (" in verdict.reason
        assert "'A(F1): ...'" in verdict.ways_out(DOC) and "--waive F1" in verdict.ways_out(DOC)


def test_the_table_covers_each_kind_and_each_effect():
    seen = {expected(*c)[1] for c in CASES} | {expected(*c)[3] for c in CASES}
    assert seen >= {"ok", "awaited", "findings", "no-consensus", "rejected",
                    "error", "warning", "notice", None}


def test_a_marker_naming_no_finding_is_kept_apart_and_counts_for_nothing(tmp_path):
    text = ledger("CHANGES", "major", None, None) + render_comment(
        DECIDER, "WAIVE(F9): nothing.\n\nA(F7): an answer to nothing.")
    verdict, d = judged(text, "major", tmp_path)
    assert verdict.kind == "findings" and verdict.findings[0].status == "open"
    assert [(x.kind, x.ref) for x in d.state.strays] == [("WAIVE", "F9"), ("A", "F7")]
    assert d.state.strays[0].reason == ("WAIVE(F9) by Dana Decider names no finding of this "
                                        "discussion: it does not count")


def test_a_later_ready_of_the_finding_s_author_resolves_it(tmp_path):
    text = ledger("CHANGES", "major", None, None) + persona_block("AI-Security", "READY", None)
    verdict, _ = judged(text, "major", tmp_path)
    assert verdict.ok and verdict.findings[0].status == "resolved"
    assert verdict.findings[0].closed_by["how"] == "voted READY"


def test_a_block_for_another_revision_leaves_its_author_awaited(tmp_path):
    text = ledger(None, None, None, None) + persona_block("AI-Security", "READY", None,
                                                          revision="b" * 40)
    verdict, _ = judged(text, "critical", tmp_path)
    assert (verdict.ok, verdict.kind, verdict.awaited) == (False, "awaited", ("AI-Security",))


# ---- the property: what every surface shows agrees with the verdict ---------------------------

class _Tree:
    """The committed tree, as check reads it (the document's text only)."""

    def __init__(self) -> None:
        self.files, self.links = {DOC: REV}, set()

    def data(self, rel: str) -> bytes:
        return TEXT.encode()


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(security=st.sampled_from(VOTES), severity=st.sampled_from(SEVERITIES),
       hold=st.sampled_from(HOLDS), closing=st.sampled_from(CLOSINGS),
       decision=st.sampled_from(DECISIONS))
def test_no_surface_contradicts_the_verdict(security, severity, hold, closing, decision,
                                            tmp_path):
    text = ledger(security, severity if security else None,
                  closing if security and severity else None, decision)
    verdict, d = judged(text, hold, tmp_path)
    if verdict.awaited or d.state.awaited:
        assert not verdict.ok  # nothing passes with a participant awaited
    state = evaluate(Job(LEDGER, LEDGER, text.encode(), tmp_path, tmp_path,
                         authority(hold), DOC, REV, None, True))
    assert (state.ok, state.kind) == (verdict.ok, verdict.kind)  # check's verdict is the gate's
    quick = evaluate(Job(LEDGER, LEDGER, text.encode(), tmp_path, tmp_path, authority(hold),
                         DOC, REV, None, False))  # the text format's read: markers if they bear
    assert (quick.ok, quick.kind) == (verdict.ok, verdict.kind)
    rule = Rule(name="adr", match=("docs/adr/*.md",), discussion="x")
    item = Governed(DOC, rule, LEDGER)
    report = Report(None, "HEAD")
    shown, problems = judge(item, state, ".ai-rules.yml:1", _Tree())
    report.verdicts.append(shown)
    report.problems += problems
    place(report, [item], {LEDGER: state}, _Tree())
    out = io.StringIO()
    github(report, out)
    annotations = [x for x in out.getvalue().splitlines() if x.startswith("::")]
    sarif_out = io.StringIO()
    sarif(report, sarif_out)
    results = json.loads(sarif_out.getvalue())["runs"][0]["results"]
    open_ids = {f.id for f in verdict.findings if f.status == "open"}
    annotated = {x.split("title=cascade ")[1].split(" ")[0] for x in annotations
                 if "title=cascade F" in x}
    assert annotated == {f.id for f in verdict.findings if verdict.effect(f)} <= open_ids
    if verdict.ok:
        assert report.ok and not any(x.startswith("::error") for x in annotations)
        assert not any(r["level"] == "error" for r in results)
        assert "❌" not in step_summary(report)
    else:
        assert not report.ok  # a failing verdict fails the check
    shown = " ".join(open_items(Item(LEDGER, DOC, None), verdict, d)) if verdict.ok else ""
    for f in verdict.findings:  # a closed finding is shown closed: annotated nowhere, and
        if f.status != "open":  # not among a passing commit's open items
            assert f"cascade {f.id} " not in out.getvalue()
            assert f"{f.id} " not in shown
        elif verdict.ok:
            assert f"  {f.id} {f.severity} " in shown
    assert [x for x in annotations if x.startswith("::error") and "title=cascade F" in x] == [
        x for x in annotations if "title=cascade F" in x
        and verdict.effect(next(f for f in verdict.findings
                                if f"cascade {f.id} " in x)) == "error"]



# ---- the words: each verdict explains itself in one line --------------------------------------

def test_each_kind_says_why_in_its_own_words(tmp_path):
    cases = {
        ("READY", None, None, None, "critical"): (True, "consensus READY (3/3 READY)"),
        (None, None, None, None, "critical"): (
            False, "2/3 READY, but AI-Security has not answered this revision: the review is "
                   "not complete"),
        ("CHANGES", "major", None, None, "major"): (
            False, "2/3 READY, but F1 (major, line 7, AI-Security) is open, and the rule holds "
                   "the commit on a major or worse finding"),
        ("CHANGES", "minor", None, None, "info"): (
            False, "2/3 READY, but F1 (minor, line 7, AI-Security) is open, and the rule holds "
                   "the commit on a info finding"),
        ("REJECT", None, None, None, "critical"): (False, "REJECT from AI-Security"),
        (None, None, None, "READY", "critical"): (
            True, "decided READY by Dana Decider (line 30): We decide."),
        (None, None, None, "REJECT", "critical"): (
            False, f"consensus REJECT: decided against {DOC} (decided REJECT by Dana Decider "
                   "(line 30))"),
    }
    for (security, severity, closing, decision, hold), (ok, reason) in cases.items():
        verdict, _ = judged(ledger(security, severity, closing, decision), hold, tmp_path)
        assert (verdict.ok, verdict.reason) == (ok, reason)
        assert verdict.decided is (decision is not None)
        # a block names its way out (an awaited participant's is to ask it: check's hint)
        assert (verdict.ways_out(DOC) == "") is (ok or decision is not None
                                                 or verdict.kind == "awaited")


def test_two_awaited_participants_are_both_named(tmp_path):
    text = (HEADER + stamped_event(SOURCE_REVISION, f"{REV} path={DOC}") + "\n\n"
            + persona_block("AI-Architect", "READY", None))
    verdict, _ = judged(text, "critical", tmp_path)
    assert verdict.kind == "no-consensus" and verdict.awaited == ("AI-Security", "AI-Pragmatist")


def test_more_than_three_holding_findings_are_counted_not_listed(tmp_path):
    found = [F.Finding("minor", "Keep everything", f"issue {n}", lines=(7, 7)) for n in range(5)]
    block = render_comment("AI-Security", "Hm.", "READY", provenance={
        "model": "test", "revision": REV, "seen": "all", "findings": F.encode(found)})
    text = (HEADER + stamped_event(SOURCE_REVISION, f"{REV} path={DOC}") + "\n\n"
            + persona_block("AI-Architect", "READY", None) + block
            + persona_block("AI-Pragmatist", "READY", None))
    verdict, _ = judged(text, "minor", tmp_path)
    assert verdict.holding == ("F1", "F2", "F3", "F4", "F5")
    assert ", F3 (minor, line 7, AI-Security) and 2 more are open" in verdict.reason
    assert verdict.ways_out(DOC).startswith("answer it in the ledger ('A(F1): ...')")


def test_an_open_critical_finding_on_a_passing_revision_warns(tmp_path):
    """A rule that lets a critical finding through (policy critical: READY, hold: none) still
    shows it, as a warning, never as an error."""
    text = ledger("READY", "critical", None, None)
    d = Discussion(tmp_path / LEDGER, text, setting_of(tmp_path), authority=Authority(
        ("architect", "security", "pragmatist"), "review", VotingConfig(0.67, 0.01),
        (DECIDER,), True, "rule", F.policy_of((("critical", "READY"),), False, "none")))
    verdict = gate(d.state, REV, DOC)
    assert verdict.ok and verdict.effect(verdict.findings[0]) == "warning"


def test_another_revision_or_none_recorded_is_stale(tmp_path):
    text = ledger("READY", None, None, None)
    d = Discussion(tmp_path / LEDGER, text, setting_of(tmp_path), authority=authority("none"))
    stale = gate(d.state, "b" * 40, DOC)
    assert (stale.ok, stale.kind, stale.reason) == (
        False, "stale-revision", f"the ledger reviewed another revision of {DOC} (aaaaaaa; "
                                 "this one is bbbbbbb)")
    bare = HEADER + persona_block("AI-Architect", "READY", None)
    d = Discussion(tmp_path / LEDGER, bare, setting_of(tmp_path), authority=authority("none"))
    none = gate(d.state, "b" * 40, DOC)
    assert (none.ok, none.kind, none.reason) == (
        False, "no-revision", f"the ledger records no revision of {DOC} (this one is bbbbbbb)")
    assert gate(d.state, None, None).kind != "no-revision"  # no document: no revision asked


def test_a_decision_that_does_not_count_is_named_in_the_reason(tmp_path):
    text = ledger("REJECT", None, None, None) + render_comment(
        "Bob Builder", "**Decision: READY** -- Bob decides.\n\nShip it.", None,
        origin="decision", provenance={"vote": "READY", "revision": REV, "by": "Bob Builder"})
    verdict, _ = judged(text, "critical", tmp_path)
    assert not verdict.ok and verdict.reason.startswith("REJECT from AI-Security; Bob Builder's "
                                                        "decision (line ")
    assert verdict.reason.endswith("does not count: Bob Builder is not a decider of rule 'adr' "
                                   "(.ai-rules.yml:1) (deciders: Dana Decider)")


@pytest.mark.parametrize("hold,ok", [("critical", True), ("major", False), ("none", True)])
def test_check_reads_a_concern_where_it_can_hold(hold, ok, tmp_path):
    """A person's CONCERN is a major finding: it holds under hold: major, and check (which
    reads markers only where they bear on the verdict) says what the gate says."""
    text = ledger("READY", None, None, None) + render_comment("Ann Author", "CONCERN: no "
                                                              "backups")
    verdict, _ = judged(text, hold, tmp_path)
    assert verdict.ok is ok and [f.what for f in verdict.findings] == ["no backups"]
    for asked in (False, True):
        state = evaluate(Job(LEDGER, LEDGER, text.encode(), tmp_path, tmp_path,
                             authority(hold), DOC, REV, None, asked))
        assert (state.ok, state.kind) == (verdict.ok, verdict.kind)


# ---- what the table's kinds leave out ---------------------------------------------------------

def test_a_carried_review_holds_only_for_a_text_of_the_same_core(tmp_path):
    """A revision recorded as keeping an earlier one's review (status or spacing changed) is
    verified on the committed text: another core is changed-core, whatever the votes."""
    from cascade.base.docstatus import core
    from cascade.ledger.render import render_event

    later, kept = "b" * 40, core(TEXT.encode())
    text = (HEADER + render_event(SOURCE_REVISION, REV, {"path": DOC, "core": kept},
                                  stamp=True) + "\n\n"
            + "".join(persona_block(p, "READY", None) for p in ("AI-Architect", "AI-Security",
                                                                  "AI-Pragmatist"))
            + render_event(SOURCE_REVISION, later, {"path": DOC, "core": kept, "same-as": REV},
                           stamp=True) + "\n\n")
    d = Discussion(tmp_path / LEDGER, text, setting_of(tmp_path), authority=authority("none"))
    assert d.state.carried_now
    same = gate(d.state, later, DOC, TEXT.encode())
    assert (same.ok, same.kind) == (True, "ok")
    other = gate(d.state, later, DOC, b"# X\n\nSomething else entirely.\n")
    assert (other.ok, other.kind) == (False, "changed-core")
    assert other.reason.startswith(f"the ledger says {DOC} differs from the reviewed text only")
    assert gate(d.state, later, DOC).ok  # no text given: not verified here (check does it)


def test_who_blocks_is_named(tmp_path):
    verdict, _ = judged(ledger("REJECT", "critical", None, None), "critical", tmp_path)
    assert verdict.blocking == ("AI-Security",) and verdict.kind == "no-consensus"
    assert verdict.ways_out(DOC) == ("answer F1 in the ledger ('A(F1): ...'), ask one persona "
                                     f"with @alias, or cascade decide {DOC} READY --reason '...'")
    verdict, _ = judged(ledger("REJECT", "minor", None, None), "critical", tmp_path)
    assert verdict.ways_out(DOC) == ("answer in the ledger, ask one persona with @alias, or "
                                     f"cascade decide {DOC} READY --reason '...'")
    assert verdict.effect(verdict.findings[0]) == "notice"  # a minor point blocks nothing
    verdict, _ = judged(ledger("CHANGES", "major", None, None), "major", tmp_path)
    assert verdict.ways_out(DOC, "Carol decides") == (
        f"answer it in the ledger ('A(F1): ...'), have a decider waive it (cascade comment "
        f"{DOC} --waive F1 'reason'), or Carol decides")


def test_how_each_finding_was_closed_is_kept(tmp_path):
    decision = ledger("CHANGES", "major", None, "READY")
    verdict, _ = judged(decision, "major", tmp_path)
    (f1,) = verdict.findings
    at = next(n for n, x in enumerate(decision.splitlines(), 1) if x == f"Name: {DECIDER}")
    assert f1.closed_by == {"by": DECIDER, "line": at, "how": "decided READY"}
    waived, _ = judged(ledger("CHANGES", "major", "waive", None), "major", tmp_path)
    line = next(n for n, x in enumerate(ledger("CHANGES", "major", "waive", None)
                                        .splitlines(), 1) if x.startswith("WAIVE(F1)"))
    assert waived.findings[0].closed_by == {"by": DECIDER, "line": line,
                                            "reason": "accepted for now."}
    refused, _ = judged(ledger("CHANGES", "major", "waive-by-other", None), "major", tmp_path)
    assert refused.findings[0].closed_by["refused"] == ("Bob Builder is not one of the rule's "
                                                        "deciders")
    assert refused.findings[0].closed_by["by"] == "Bob Builder"


def test_a_finding_raised_after_the_decision_stays_open(tmp_path):
    text = ledger("CHANGES", "major", None, "READY") + persona_block("AI-Architect", "READY",
                                                                      "major")
    verdict, _ = judged(text, "none", tmp_path)
    assert [f.status for f in verdict.findings] == ["overridden", "open"]


def test_a_waiver_counts_only_from_its_author_s_own_commit(tmp_path):
    text = ledger("CHANGES", "major", "waive", None)
    line = next(n for n, x in enumerate(text.splitlines(), 1) if x.startswith("WAIVE(F1)"))
    d = Discussion(tmp_path / LEDGER, text, setting_of(tmp_path), authority=authority("major"))
    mallory = gate(d.with_authors({line: "Mallory <m@example.com>"}).state, REV, DOC)
    assert (mallory.ok, mallory.findings[0].status) == (False, "open")
    assert mallory.findings[0].closed_by["refused"] == ("recorded as Dana Decider's, but added "
                                                        "in a commit by Mallory "
                                                        "<m@example.com>")
    unknown = gate(d.with_authors({}).state, REV, DOC)
    assert unknown.findings[0].closed_by["refused"].endswith("by someone unknown")
    dana = gate(d.with_authors({line: "Dana Decider <dana@example.com>"}).state, REV, DOC)
    assert (dana.ok, dana.findings[0].status) == (True, "waived")
