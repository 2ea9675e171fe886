"""``cascade check``: the model-free CI gate, on real git histories built with plain git."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, git

from cascade import Discussion
from cascade.check import ledgers
from cascade.check.formats import _data, _property
from cascade.ledger.records import SOURCE_REVISION, VOTE_RESET
from cascade.ledger.parse import parse

DOC = "docs/adr/0001-use-sqlite.md"
LEDGER = "docs/adr/discussions/0001-use-sqlite.discussion.md"
PANEL = ("AI-Architect", "AI-Security", "AI-Pragmatist")
RULES = """\
rules:
  - name: adr
    match: "docs/adr/*.md"
    discussion: "docs/adr/discussions/{stem}.discussion.md"
    participants: [architect, security, pragmatist]
"""


# ---- building histories ------------------------------------------------------------------------

def write(repo: Path, rel: str, text: str | bytes) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)


def commit(repo: Path, message: str = "change") -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message, "--no-verify")
    return git(repo, "rev-parse", "HEAD").strip()


def header(doc: str = DOC, protocol: str = "review") -> str:
    return (f"<!-- DISCUSSION -->\n<!-- Title: Use SQLite -->\n<!-- Source: {doc} -->\n"
            f"<!-- Protocol: {protocol} -->\n<!-- Participants: architect, security, pragmatist -->\n"
            "<!-- Consensus: threshold_ready=0.67 threshold_reject=0.01 human_required=false -->\n"
            "\n# Use SQLite\n\n---\n\n*Discussion begins below.*\n")


def review(repo: Path, votes=("READY", "READY", "READY"), doc: str = DOC, ledger: str = LEDGER,
           note: str = "looks fine") -> None:
    """Append what the hook would: the document's revision, then the panel's comments."""
    path = repo / ledger
    text = path.read_text() if path.exists() else header(doc)
    d = Discussion.from_text(text, path, root=repo)
    blob = git(repo, "hash-object", doc).strip()
    if d.source_revision != blob:
        earlier = d.source_revision
        d.add_event(SOURCE_REVISION, blob, path=doc)
        if earlier:
            d.add_event(VOTE_RESET, "the document changed")
    for name, vote in zip(PANEL, votes):  # stamped, as a persona's turn writes it
        d.add_comment(name, f"{name}: {note}.", vote,
                      provenance={"model": "test", "revision": blob, "seen": "all"})
    write(repo, ledger, d.text)


def append(repo: Path, author: str, text: str, vote: str | None = None,
           ledger: str = LEDGER) -> None:
    d = Discussion.load(repo / ledger, root=repo)
    stamp = None
    if author in PANEL:  # as a persona's turn writes it
        stamp = {"model": "test", "revision": d.source_revision, "seen": "all"}
    d.add_comment(author, text, vote, provenance=stamp)
    d.save()


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.fixture
def base(repo: Path) -> str:
    """A repository with its rule file committed: the start of every range."""
    write(repo, ".ai-rules.yml", RULES)
    write(repo, "README.md", "# Project\n")
    return commit(repo, "start")


@pytest.fixture
def clean(repo: Path, base: str) -> str:
    """An ADR and its ledger at consensus, committed together (what the hook lets through)."""
    write(repo, DOC, "# Use SQLite\n\nWe will store events in SQLite.\n")
    review(repo)
    return commit(repo, "adr")


def check(cli, *args: str) -> tuple[int, str, str]:
    return cli("check", *args)


# ---- the seven histories of the issue ---------------------------------------------------------

def test_clean_history_passes(repo, cli, base, clean):
    append(repo, "Test Person", "Thanks all, merging.")
    commit(repo, "reply")
    code, out, err = check(cli, "--from-ref", base, "--to-ref", "HEAD")
    assert code == 0, out + err
    assert out.strip() == ("cascade check: ok (1 governed document(s), 1 ledger(s), "
                           "2 commit(s))")


def test_tampered_comment_fails_naming_file_line_and_commit(repo, cli, base, clean):
    text = (repo / LEDGER).read_text()
    write(repo, LEDGER, text.replace("AI-Security: looks fine.", "AI-Security: looks great."))
    sha = commit(repo, "tamper")
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1
    line = line_of(text, "AI-Security: looks fine.")
    assert out.splitlines()[0] == f"{LEDGER}:{line}: ledger text edited in {sha[:7]}"
    assert f"{LEDGER}:{line - 3}: a block under AI-Security's name that cascade did not " \
        "write (edited after cascade wrote it (its digest does not match))" in out
    # its vote does not count: AI-Security has not answered this revision, which holds too
    assert "but AI-Security has not answered this revision: the review is not complete" in out
    assert out.splitlines()[-1].startswith("cascade check: 3 problem(s)")


def test_tampered_vote_fails(repo, cli, base):
    write(repo, DOC, "# Use SQLite\n")
    review(repo, votes=("CHANGES", "READY", "READY"))
    commit(repo, "adr")
    text = (repo / LEDGER).read_text()
    write(repo, LEDGER, text.replace("VOTE: CHANGES", "VOTE: READY"))
    sha = commit(repo, "forge a vote")
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1  # the forged ledger is at consensus, but its history is not append-only
    assert f"{LEDGER}:{line_of(text, 'VOTE: CHANGES')}: ledger text edited in {sha[:7]}" in out


def test_deleted_comment_fails(repo, cli, base, clean):
    text = (repo / LEDGER).read_text()
    lines = text.splitlines(keepends=True)
    start = line_of(text, "Name: AI-Security") - 2  # the block's opening ---
    end = line_of(text, "Name: AI-Pragmatist") - 2
    write(repo, LEDGER, "".join(lines[:start] + lines[end:]))
    sha = commit(repo, "drop a comment")
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1
    assert f"{LEDGER}:{start + 1}: ledger text removed in {sha[:7]}" in out


def test_document_committed_with_no_verify_fails(repo, cli, base):
    write(repo, DOC, "# Use SQLite\n")
    commit(repo, "skip the hook")  # --no-verify: no ledger at all
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1
    assert out.splitlines()[0] == (
        f"{DOC}:1: governed by rule 'adr' (.ai-rules.yml:2) but its ledger {LEDGER} "
        f"is not committed: review its committed revision and commit the ledger: cascade review "
        f"{DOC} && git commit -m 'Review of {DOC}'")


def test_revised_document_with_stale_ledger_fails(repo, cli, base, clean):
    write(repo, DOC, "# Use SQLite\n\nRevised after the review.\n")
    commit(repo, "revise without review")
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1
    line = line_of((repo / LEDGER).read_text(), "SOURCE-REVISION")
    assert out.startswith(f"{LEDGER}:{line}: the ledger reviewed another revision of {DOC}")


def test_ledger_without_consensus_fails(repo, cli, base):
    write(repo, DOC, "# Use SQLite\n")
    review(repo, votes=("CHANGES", "CHANGES", "READY"))
    commit(repo, "adr")
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1
    last = len((repo / LEDGER).read_text().splitlines())
    assert out.startswith(f"{LEDGER}:{last}: no consensus on {DOC}: 1/3 READY, needs 67%")


def test_ledger_that_never_recorded_a_revision_fails(repo, cli, base):
    write(repo, DOC, "# Use SQLite\n")
    write(repo, LEDGER, header() + "".join(
        f"\n---\nName: {name}\n\nFine.\n\nVOTE: READY\n---\n" for name in PANEL))
    commit(repo, "hand-written ledger")
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1
    assert f"{LEDGER}:1: the ledger records no revision of {DOC} (this one is " in out
    for name in PANEL:  # and the votes written by hand under the personas' names are reported
        assert f"a block under {name}'s name that cascade did not write (no stamp" in out


def test_rejected_document_fails(repo, cli, base):
    write(repo, DOC, "# Use SQLite\n")
    review(repo, votes=("REJECT", "REJECT", "READY"))
    commit(repo, "adr")
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1 and f"consensus REJECT: the panel rejects {DOC}" in out


def diverge(repo: Path, clean: str) -> tuple[str, str]:
    """Two branches that each append one comment to the ledger; returns their versions."""
    git(repo, "checkout", "-qb", "side")
    append(repo, "Test Person", "A note from the side branch.")
    commit(repo, "side note")
    side = (repo / LEDGER).read_text()
    git(repo, "checkout", "-q", "main")
    append(repo, "AI-Architect", "A note from main.")
    commit(repo, "main note")
    main = (repo / LEDGER).read_text()
    proc = subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode != 0  # both appended at the end: a conflict to resolve
    return main, side


def test_merge_keeping_both_sides_passes(repo, cli, base, clean):
    main, side = diverge(repo, clean)
    side_block = side[len(git(repo, "show", f"{clean}:{LEDGER}")):]
    assert side_block.startswith("\n---\nName: Test Person")
    write(repo, LEDGER, main + side_block)
    git(repo, "add", LEDGER)
    git(repo, "commit", "-q", "--no-edit", "--no-verify")
    assert len(git(repo, "log", "-1", "--format=%P").split()) == 2
    code, out, err = check(cli, "--from-ref", base)
    assert code == 0, out + err
    assert "4 commit(s)" in out  # the ADR, one commit on each side, the merge


def test_merge_of_a_branch_that_alone_appended_passes(repo, cli, base, clean):
    git(repo, "checkout", "-qb", "side")
    append(repo, "Test Person", "Only the side branch writes here.")
    commit(repo, "side note")
    git(repo, "checkout", "-q", "main")
    write(repo, "notes.txt", "unrelated\n")
    commit(repo, "unrelated")
    git(repo, "merge", "-q", "--no-edit", "side")
    code, out, err = check(cli, "--from-ref", base)
    assert code == 0, out + err
    assert "4 commit(s)" in out


def test_merge_dropping_a_side_fails(repo, cli, base, clean):
    main, side = diverge(repo, clean)
    write(repo, LEDGER, main)  # "ours": the side branch's comment is lost
    git(repo, "add", LEDGER)
    git(repo, "commit", "-q", "--no-edit", "--no-verify")
    merge = git(repo, "rev-parse", "HEAD").strip()
    side_sha = git(repo, "rev-parse", "side").strip()
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1
    line = line_of(side, "Name: Test Person")
    assert out.splitlines()[0] == (f"{LEDGER}:{line}: merge {merge[:7]} drops or changes text "
                                   f"of parent {side_sha[:7]} (its line {line})")


def test_merge_editing_shared_text_fails(repo, cli, base, clean):
    main, side = diverge(repo, clean)
    side_block = side[len(git(repo, "show", f"{clean}:{LEDGER}")):]
    merged = (main + side_block).replace("AI-Architect: looks fine.", "AI-Architect: ok.")
    write(repo, LEDGER, merged)
    git(repo, "add", LEDGER)
    git(repo, "commit", "-q", "--no-edit", "--no-verify")
    merge = git(repo, "rev-parse", "HEAD").strip()
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1
    line = line_of(main, "AI-Architect: looks fine.")
    assert f"{LEDGER}:{line}: merge {merge[:7]} changes text its parents share" in out


def test_renamed_ledger_is_compared_with_its_old_version(repo, cli, base, clean):
    new_doc, new_ledger = DOC.replace("0001", "0002"), LEDGER.replace("0001", "0002")
    git(repo, "mv", DOC, new_doc)
    git(repo, "mv", LEDGER, new_ledger)
    append(repo, "Test Person", "Renumbered.", ledger=new_ledger)
    commit(repo, "renumber")
    code, out, err = check(cli, "--from-ref", base)
    assert code == 0, out + err
    # the same rename, but with earlier text changed on the way
    text = (repo / new_ledger).read_text()
    renamed = new_ledger.replace("0002", "0003")
    git(repo, "mv", new_doc, new_doc.replace("0002", "0003"))
    git(repo, "mv", new_ledger, renamed)
    write(repo, renamed, text.replace("Renumbered.", "Renamed."))
    sha = commit(repo, "rename and edit")
    assert "R0" in git(repo, "show", "-M", "--name-status", "--format=", "HEAD")  # a rename
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1
    assert out.splitlines()[0] == (f"{renamed}:{line_of(text, 'Renumbered.')}: "
                                   f"ledger text edited in {sha[:7]}")


def test_append_after_a_missing_final_newline_is_not_an_edit(repo, cli, base):
    write(repo, DOC, "# Use SQLite\n")
    review(repo)
    write(repo, LEDGER, (repo / LEDGER).read_text().rstrip("\n"))  # ends in "---", no newline
    commit(repo, "adr")
    append(repo, "Test Person", "One more thought.")
    assert (repo / LEDGER).read_text().endswith("One more thought.\n---\n")
    diff = git(repo, "diff", LEDGER)
    assert "-\\ No newline" not in diff and "\\ No newline at end of file" in diff
    commit(repo, "append")
    code, out, err = check(cli, "--from-ref", base)
    assert code == 0, out + err


def test_lengthening_the_last_line_without_newline_is_an_edit(repo, cli, base):
    write(repo, DOC, "# Use SQLite\n")
    review(repo)
    text = (repo / LEDGER).read_text().rstrip("\n")
    write(repo, LEDGER, text)
    commit(repo, "adr")
    write(repo, LEDGER, text + "-\n\nappended to the last line\n")
    sha = commit(repo, "lengthen the last line")
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1
    assert f"{LEDGER}:{len(text.splitlines())}: ledger text edited in {sha[:7]}" in out


def test_inserted_text_is_an_edit(repo, cli, base, clean):
    text = (repo / LEDGER).read_text()
    line = line_of(text, "Name: AI-Security")
    lines = text.splitlines(keepends=True)
    write(repo, LEDGER, "".join(lines[:line] + ["VOTE: REJECT\n"] + lines[line:]))
    sha = commit(repo, "insert")
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1
    assert f"{LEDGER}:{line + 1}: text inserted into the ledger's earlier text in {sha[:7]}" in out


def test_deleted_ledger_of_an_existing_document_fails(repo, cli, base, clean):
    git(repo, "rm", "-q", LEDGER)
    sha = commit(repo, "drop the ledger")
    code, out, _ = check(cli, "--from-ref", clean)
    assert code == 1
    assert out.splitlines()[0] == (f"{LEDGER}:1: ledger deleted in {sha[:7]} while its "
                                   f"document {DOC} still exists")
    git(repo, "rm", "-q", DOC)  # deleting the document as well is fine
    commit(repo, "drop the document")
    git(repo, "reset", "-q", "--soft", "HEAD~2")
    commit(repo, "drop both")
    assert check(cli, "--from-ref", clean)[0] == 0


# ---- refs, modes and formats ------------------------------------------------------------------

@pytest.fixture
def tampered(repo, base, clean) -> str:
    text = (repo / LEDGER).read_text()
    write(repo, LEDGER, text.replace("AI-Security: looks fine.", "AI-Security: looks great."))
    return commit(repo, "tamper")


def test_json_format(repo, cli, base, tampered):
    code, out, _ = check(cli, "--from-ref", base, "--format", "json")
    assert code == 1
    data = json.loads(out)
    assert data["ok"] is False
    assert data["checked"] == {"documents": 1, "legacy": 0, "ledgers": 1, "commits": 2}
    problem, forged, awaited = data["problems"]
    assert problem["file"] == LEDGER and problem["kind"] == "edited"
    assert forged["kind"] == "forged" and "digest does not match" in forged["reason"]
    assert problem["commit"] == tampered and isinstance(problem["line"], int)
    # the edited block no longer counts: AI-Security is awaited, which holds the document
    assert awaited["kind"] == "awaited" and "AI-Security has not answered" in awaited["reason"]
    assert data["warnings"] == []
    assert data["verdicts"][0]["document"] == DOC and data["verdicts"][0]["ok"] is False


def test_github_format_and_step_summary(repo, cli, base, tampered, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out, _ = check(cli, "--from-ref", base, "--format", "github")
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith(f"::error file={LEDGER},line=")
    assert first.endswith(f"::ledger text edited in {tampered[:7]}")
    text = summary.read_text()
    assert text.startswith("earlier step\n")  # appended, not overwritten
    assert "| ledger | document | verdict | votes | open findings |" in text
    # the edited block no longer counts: 2 of 3 READY with AI-Security awaited does not pass
    row = next(line for line in text.splitlines() if line.startswith(f"| {LEDGER} |"))
    assert row.startswith(f"| {LEDGER} | {DOC} | ❌ 2/3 READY (AI-Security's vote (line 26) "
                          "does not count: edited after cascade wrote it (its digest does not "
                          "match)), but AI-Security has not answered this revision: the review "
                          "is not complete")
    assert row.endswith(" | READY:2 | - |")
    assert f"`{LEDGER}:" in text and "ledger text edited" in text


def test_github_escaping():
    assert _data("50% done\r\nnext") == "50%25 done%0Anext"  # a line end is a line end
    assert _data("50% done\rnext") == "50%25 done\\x0dnext"  # a lone CR cannot rewind a line
    assert _property("a,b:c%") == "a%2Cb%3Ac%25"


def test_github_format_without_summary_file(repo, cli, base, clean, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    code, out, _ = check(cli, "--from-ref", base, "--format", "github")
    assert code == 0 and out.strip().endswith("cascade check: ok (1 governed document(s), "
                                              "1 ledger(s), 1 commit(s))")


def test_pre_commit_refs_from_the_environment(repo, cli, base, tampered, monkeypatch):
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", base)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", tampered)
    code, out, _ = check(cli)
    assert code == 1 and "ledger text edited" in out
    before = git(repo, "rev-parse", "HEAD~1").strip()
    monkeypatch.setenv("PRE_COMMIT_TO_REF", before)
    assert check(cli)[0] == 0  # the range ends before the tampering commit
    code, out, _ = check(cli, "--from-ref", before)  # an option beats the environment
    assert code == 0 and "0 commit(s)" in out
    # A to-ref that does not contain the from-ref loses what the from-ref's ledgers hold.
    code, out, _ = check(cli, "--from-ref", tampered)
    assert code == 1 and f"{before[:7]} does not contain {tampered[:7]}" in out


def test_no_refs_checks_every_governed_document_at_head(repo, cli, base, clean):
    assert check(cli)[0] == 0
    other = "docs/adr/0002-no-ledger.md"
    write(repo, other, "# No ledger\n")
    commit(repo, "skip the hook")
    code, out, _ = check(cli)
    assert code == 1
    assert out.splitlines()[0].startswith(f"{other}:1: governed by rule 'adr'")
    assert "2 governed document(s)" in out and "no history checked: give --from-ref" in out
    # --to-ref alone is the same mode, at that ref
    assert check(cli, "--to-ref", "HEAD~1")[0] == 0


def test_no_refs_does_not_walk_history(repo, cli, base, tampered):
    # the final state: the edited block does not count (AI-Security is awaited); only a
    # range sees the edit itself
    code, out, _ = check(cli)
    assert code == 1 and "AI-Security has not answered this revision" in out
    assert "ledger text edited" not in out
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1 and "ledger text edited" in out


def test_everything_is_read_from_git_not_the_working_tree(repo, cli, base, clean):
    write(repo, ".ai-rules.yml", "rules: [unclosed\n")  # a broken, uncommitted rule file
    write(repo, LEDGER, "rewritten in the working tree only\n")
    (repo / DOC).unlink()
    code, out, err = check(cli, "--from-ref", base)
    assert code == 0, out + err


def test_unknown_ref_is_a_usage_error(repo, cli, base):
    code, out, err = check(cli, "--from-ref", "no-such-branch")
    assert code == 2 and out == ""
    assert err == "cascade: unknown git ref 'no-such-branch' (--from-ref)\n"
    code, _, err = check(cli, "--to-ref", "nope")
    assert code == 2 and err.strip().endswith("(--to-ref)")


def test_broken_rule_file_at_the_ref_names_file_and_line(repo, cli, base):
    write(repo, ".ai-rules.yml", RULES + "    colour: red\n")
    write(repo, DOC, "# Use SQLite\n")
    commit(repo, "bad rules")
    write(repo, ".ai-rules.yml", RULES)  # fixed in the working tree, not in the commit
    code, out, err = check(cli, "--from-ref", base)
    assert code == 2, out + err
    assert err.startswith("cascade: .ai-rules.yml:6: unknown rule key 'colour'")
    assert len(err.splitlines()) == 1


def test_nested_rule_file_at_the_ref_overrides(repo, cli, base):
    write(repo, "docs/adr/.ai-rules.yml",
          "rules:\n  - name: adr\n    match: '*.md'\n"
          "    discussion: 'reviews/{stem}.discussion.md'\n    participants: [security]\n")
    write(repo, DOC, "# Use SQLite\n")
    commit(repo, "nested rules, no ledger")
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1
    assert ("(docs/adr/.ai-rules.yml:2) but its ledger docs/adr/reviews/0001-use-sqlite"
            ".discussion.md is not committed") in out


def test_dated_ledger_is_found_by_its_source(repo, cli, base):
    write(repo, ".ai-rules.yml", RULES.replace("{stem}.discussion.md",
                                               "{date}-{stem}.discussion.md"))
    start = commit(repo, "dated rule")
    write(repo, DOC, "# Use SQLite\n")
    decoy = "docs/adr/discussions/2019-12-31-0001-use-sqlite.discussion.md"  # sorts first
    write(repo, decoy, header(doc="docs/adr/other.md"))
    review(repo, ledger="docs/adr/discussions/2020-01-02-0001-use-sqlite.discussion.md")
    commit(repo, "adr")
    code, out, err = check(cli, "--from-ref", start)
    assert code == 0, out + err
    assert "1 governed document(s), 2 ledger(s)" in out


def test_ledger_that_is_not_utf8_fails(repo, cli, base, clean):
    data = (repo / LEDGER).read_bytes() + b"\n---\nName: Test Person\n\ncaf\xe9\n---\n"
    write(repo, LEDGER, data)
    commit(repo, "latin-1")
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1
    line = data.count(b"\n", 0, data.index(b"\xe9")) + 1
    assert out.splitlines()[0].startswith(f"{LEDGER}:{line}: ledger does not parse: not UTF-8")


def test_ledger_header_naming_another_protocol_is_reported_and_the_rule_decides(repo, cli, base):
    write(repo, DOC, "# Use SQLite\n")
    review(repo)
    text = (repo / LEDGER).read_text()
    write(repo, LEDGER, text.replace("<!-- Protocol: review -->", "<!-- Protocol: council -->"))
    commit(repo, "adr")
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1
    assert out.splitlines()[0] == (f"{LEDGER}:1: the header differs from rule 'adr' "
                                   "(.ai-rules.yml:2) in protocol: the rule decides (a commit "
                                   "through the hook records the rule's settings)")
    assert len([ln for ln in out.splitlines() if ln.startswith(LEDGER)]) == 1  # reported once


def test_ledger_with_unknown_protocol_fails(repo, cli, base):
    write(repo, "notes/idea.discussion.md", header(doc="notes/idea.md", protocol="parliament"))
    commit(repo, "a ledger no rule governs")
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1
    assert out.splitlines()[0].startswith("notes/idea.discussion.md:1: ledger does not parse: "
                                          "unknown protocol 'parliament'")


def test_repository_protocol_is_read_at_the_ref(repo, cli, base):
    protocol = (REPO / "protocols" / "review.yml").read_text().replace("name: review",
                                                                      "name: council")
    write(repo, ".cascade/protocols/council.yml", protocol)
    write(repo, ".ai-rules.yml", RULES + "    protocol: council\n")
    write(repo, DOC, "# Use SQLite\n")
    write(repo, LEDGER, header(protocol="council"))
    review(repo)
    commit(repo, "adr with our own protocol")
    (repo / ".cascade/protocols/council.yml").unlink()  # gone from the working tree only
    code, out, err = check(cli, "--from-ref", base)
    assert code == 0, out + err


def test_broken_committed_persona_is_a_configuration_error(repo, cli, base, clean):
    write(repo, ".cascade/personas/architect.yml", "name: [unclosed\n")
    commit(repo, "break a persona")
    code, _, err = check(cli, "--from-ref", base)
    assert code == 2
    assert err.startswith("cascade: .cascade/personas/architect.yml:1: invalid YAML"), err
    assert len(err.splitlines()) == 1


def test_a_configuration_error_is_an_annotation_in_the_github_format(repo, cli, base, clean,
                                                                       monkeypatch):
    """In a workflow's log the error that stops the check is shown on its file and line, as
    the check's problems are; the one line on stderr and the exit code stay."""
    write(repo, ".cascade/personas/architect.yml", "name: [unclosed\n")
    commit(repo, "break a persona")
    code, out, err = check(cli, "--from-ref", base, "--format", "github")
    assert code == 2
    assert err.startswith("cascade: .cascade/personas/architect.yml:1: invalid YAML"), err
    assert out.startswith("::error file=.cascade/personas/architect.yml,line=1,"
                          "title=cascade check::invalid YAML"), out
    assert len(out.splitlines()) == len(err.splitlines()) == 1
    # run from a folder below the top (a workflow's working-directory): still the repository's
    # path (the check reads the committed file), which GitHub places
    monkeypatch.chdir(repo / ".cascade")
    code, out, err = check(cli, "--from-ref", base, "--format", "github")
    assert code == 2
    assert out.startswith("::error file=.cascade/personas/architect.yml,line=1,"), out


def test_parser_warnings_do_not_fail_the_check(repo, cli, base, clean):
    append(repo, "Test Person", "Noted.")
    with open(repo / LEDGER, "a") as fh:
        fh.write("\n---\nName: Test Person\n\nVOTE: MAYBE\n---\n")
    commit(repo, "an unrecognised vote")
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 0, out
    n = len((repo / LEDGER).read_text().splitlines()) - 1
    assert f"{LEDGER}:{n}: warning: unrecognised vote 'MAYBE'" in out
    code, out, _ = check(cli, "--from-ref", base, "--format", "github")
    assert f"::warning file={LEDGER},line={n}," in out


def test_an_unclosed_fence_at_the_end_of_a_ledger_fails_the_check(repo, cli, base, clean):
    """Whatever is appended after an open fence becomes part of the comment before it."""
    append(repo, "Test Person", "Noted.")
    with open(repo / LEDGER, "a") as fh:
        fh.write("\n---\nName: Test Person\n\n```python\nunclosed = True\n")
    commit(repo, "unclosed fence")
    code, out, _ = check(cli, "--from-ref", base)
    assert code == 1, out
    n = len((repo / LEDGER).read_text().splitlines()) - 1  # the line that opens the fence
    assert f"{LEDGER}:{n}: unclosed code fence ```" in out


def test_check_never_imports_litellm_or_jinja2(repo, base, clean):
    probe = ("import sys; from cascade.main import main; "
             f"rc = main(['check', '--from-ref', '{base}']); "
             "print(rc, 'litellm' in sys.modules, 'jinja2' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", probe], cwd=repo, capture_output=True,
                          text=True, env=env)
    assert proc.stdout.split()[-3:] == ["0", "False", "False"], proc.stdout + proc.stderr


def test_the_pre_commit_hook_cascade_check(repo, base, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    write(repo, ".pre-commit-config.yaml", f"""\
repos:
  - repo: local
    hooks:
      - id: cascade-check
        name: cascade check
        entry: {sys.executable} -m cascade check
        language: system
        pass_filenames: false
        always_run: true
        stages: [manual]
""")
    start = commit(repo, "pre-commit config")
    write(repo, DOC, "# Use SQLite\n")
    review(repo)
    good = commit(repo, "adr")
    text = (repo / LEDGER).read_text()
    write(repo, LEDGER, text.replace("AI-Pragmatist: looks fine.", "AI-Pragmatist: fine."))
    bad = commit(repo, "tamper")

    def run(frm: str, to: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", "cascade-check",
                               "--hook-stage", "manual", "--from-ref", frm, "--to-ref", to],
                              cwd=repo, capture_output=True, text=True, timeout=120)

    proc = run(start, good)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Passed" in proc.stdout
    proc = run(start, bad)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = line_of(text, "AI-Pragmatist: looks fine.")
    assert f"{LEDGER}:{line}: ledger text edited in {bad[:7]}" in proc.stdout


# ---- the check's cheaper parse (no markers or mentions) is the same parse ----------------------

STRUCTURE = ("comments", "spans", "phases", "bodies", "provenance", "events", "fields", "order",
             "warnings", "header", "title_line", "open_block", "line_count", "newline",
             "ends_with_newline")


def structure(text: str, details: bool = True) -> dict:
    from test_parse import summarise

    ledger = parse(text, details=details)
    summary = summarise(ledger)
    return {**{key: summary[key] for key in STRUCTURE},
            "stamps": [(c.origin, c.stamps) for c in ledger.comments]}


def test_parse_without_details_keeps_the_structure_of_the_parser_table():
    from test_parse import CASES

    for case in CASES:
        text = case.values[0]
        for variant in (text, text.replace("\n", "\r\n")):
            assert structure(variant, details=False) == structure(variant), case.id


LINES = ["", " ", "---", "----", "--- ", " ---", "***", "Name: AI-Architect", "Name: Rob",
         "Name:", "name: Rob", "VOTE: READY", "vote: changes", "VOTE: maybe", "Vote: REJECT",
         "```", "```python", "````", "~~~", "   ```", "    ```", "`code` span", "```x```",
         "<!-- PHASE-TRANSITION: review → detailed_review -->", "<!-- PHASE-TRANSITION: -->",
         "<!-- VOTE-RESET: the document changed -->", "<!-- SOURCE-REVISION: abc path=d.md -->",
         "<!-- OUTCOME: READY -->", "<!-- cascade:ai model=x -->", "<!-- a comment -->",
         "<!-- DISCUSSION -->", "<!-- DISCUSSION", "<!-- Title: T -->", "Title: Multi",
         "<!-- Participants: architect, security -->", "Participants: security", "-->",
         "text -->", "prose", "Q: why?", "- TODO: this", "**DECISION:** that", "@security see",
         "# Title", "## Section", "* item", "1. step", "> quote", "| a | b |", "\tindented",
         "x", "Name: AI-Security\r", "\u00a0nbsp", "VOTE:READY", "vOtE: reject", "VOTER: x",
         " VOTE: READY", "<!-- cascade:decision by=Rob -->", "<!--cascade:tool -->",
         "<!-- cascade:ai model=x sig=ab --> x", "~~~~", "  ~~~ ", "```` ", "\t```", "\u212aVOTE: x"]


def test_parse_without_details_keeps_the_structure_of_random_ledgers():
    rng = random.Random(5)
    for _ in range(3000):
        lines = [rng.choice(LINES) for _ in range(rng.randrange(0, 30))]
        text = "\n".join(lines) + rng.choice(["", "\n"])
        if rng.random() < 0.2:
            text = text.replace("\n", "\r\n")
        assert structure(text, details=False) == structure(text), text


def test_shared_evaluation_gives_every_result_in_order(monkeypatch):
    monkeypatch.setattr(ledgers, "PARALLEL_BYTES", 0)
    items = list(range(203))  # not a multiple of the chunk: the last take is short
    weights = [(i * 37) % 11 for i in items]
    results = ledgers.split_map(lambda i: i * i, items, weights)
    assert results == [i * i for i in items]


def test_parallel_and_serial_evaluation_agree(repo, base, clean, monkeypatch):
    review(repo, votes=("CHANGES", "READY", "READY"), note="second round")
    raw = (repo / LEDGER).read_bytes()
    jobs = [ledgers.Job(f"l{i}", f"l{i}.discussion.md", raw + b"\n---\nName: Rob\n\nok\n---\n" * i,
                        repo, repo) for i in range(6)]
    jobs.append(ledgers.Job("bad", "bad.discussion.md", b"\xff", repo, repo))
    serial = ledgers.evaluate_all(jobs)
    monkeypatch.setattr(ledgers, "PARALLEL_BYTES", 0)
    assert ledgers.evaluate_all(jobs) == serial
    assert serial["bad"].error[1].startswith("not UTF-8")
    assert serial["l0"].counts["READY"] == 2 and serial["l0"].forged == []
