"""Configuration as its users write it, read back to them: a YAML slip in a persona file is
named at its own line (not the line after, where the parser noticed it), and every error in
a rule file is reported in one run -- each its own line ``file:line: message``, exit 2 --
with "did you mean" for a key, a persona alias, a protocol, a template, a preset or a path
placeholder that reads like a known one. Real repositories; the hook in this process."""
from __future__ import annotations

import pytest
from conftest import git
from inproc import cascade

DOC = "docs/adr/0001-use-sqlite.md"


@pytest.fixture
def adr_repo(repo):
    (repo / "docs/adr").mkdir(parents=True)
    (repo / DOC).write_text("# Use SQLite\n\nWe will store events in SQLite.\n")
    return repo


def _files(repo) -> list[str]:
    return sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*")
                  if ".git" not in p.parts)


@pytest.mark.parametrize("text, line, hint", [
    ("name: AI-Reviewer\nalias: reviewer\nrole Reviewer\npersonality: hi\ntype: voting\n", 3,
     "a line that is not 'key: value'"),
    ("name: AI-Reviewer\nalias: reviewer\nrole: Reviewer\npersonality: hi\ntype: voting\n"
     "expertise: [design, apis\n", 6, "a [ list that starts here is not closed"),
    ("name: AI-Reviewer\nalias: 'reviewer\nrole: Reviewer\npersonality: hi\ntype: voting\n", 2,
     "a quoted string that starts here is not closed"),
])
def test_a_persona_yaml_error_is_named_at_its_own_line(repo, text, line, hint):
    (repo / ".cascade/personas").mkdir(parents=True)
    (repo / ".cascade/personas/reviewer.yml").write_text(text)
    ran = cascade(repo, "personas", "list")
    assert ran.returncode == 2, ran.out
    assert ran.stderr.splitlines() == [
        f"cascade: .cascade/personas/reviewer.yml:{line}: invalid YAML: "
        + ran.stderr.split(": invalid YAML: ", 1)[1].strip()], ran.stderr
    assert hint in ran.stderr


RULES = """\
extends: [adrs]
rules:
  - name: adr
    match: "docs/adr/*.md"
    partcipants: [architect, security]
    consensus: {threshold_ready: 2}
    discussion: "docs/adr/discussions/{stm}.discussion.md"
  - name: specs
    match: "docs/specs/*.md"
    revote_on_change: maybe
  - name: adr
    match: "docs/other/*.md"
"""


def test_every_error_of_a_rule_file_in_one_run(adr_repo):
    repo = adr_repo
    (repo / ".ai-rules.yml").write_text(RULES)
    git(repo, "add", ".")
    before = _files(repo)
    ran = cascade(repo, "hook", DOC)
    assert ran.returncode == 2, ran.out
    lines = ran.stderr.splitlines()
    assert [line.split(": ", 2)[1] for line in lines] == [
        f".ai-rules.yml:{n}" for n in (1, 5, 6, 7, 10, 11)], ran.stderr
    assert lines[0] == ("cascade: .ai-rules.yml:1: unknown rule preset 'adrs' (known: adr, "
                        "feature-spec); did you mean 'adr'?")
    assert lines[1].startswith("cascade: .ai-rules.yml:5: unknown rule key 'partcipants' "
                               "(allowed: ")
    assert lines[1].endswith("; did you mean 'participants'?")
    assert lines[2] == ("cascade: .ai-rules.yml:6: consensus threshold_ready must be a number "
                        "between 0 and 1")
    assert lines[3].endswith("(use {date}, {dir}, {name}, {slug}, {stem}); did you mean 'stem'?")
    assert lines[4] == "cascade: .ai-rules.yml:10: revote_on_change must be true or false"
    assert lines[5] == "cascade: .ai-rules.yml:11: duplicate rule name 'adr'"
    assert _files(repo) == before  # nothing written


def test_every_unknown_name_of_a_rule_in_one_run(adr_repo):
    repo = adr_repo
    (repo / ".ai-rules.yml").write_text(
        "rules:\n  - name: adr\n    match: \"docs/adr/*.md\"\n"
        "    participants: [architekt, securty]\n    template: ard\n    protocol: phasd\n"
        "    drift_review: pragmatst\n")
    git(repo, "add", ".")
    before = _files(repo)
    ran = cascade(repo, "hook", DOC)
    assert ran.returncode == 2, ran.out
    lines = ran.stderr.splitlines()
    assert len(lines) == 5, ran.stderr
    assert lines[0].startswith("cascade: .ai-rules.yml:4: rule 'adr': unknown persona "
                               "'architekt' (known: ")
    assert lines[0].endswith("; did you mean 'architect'?")
    assert lines[1].endswith("; did you mean 'security'?") and ":4: " in lines[1]
    assert lines[2] == (
        "cascade: .ai-rules.yml:5: rule 'adr': unknown discussion template 'ard' (available: "
        "adr, code-review, feature, topic, architecture-decision (adr)); did you mean 'adr'?")
    assert lines[3] == (
        "cascade: .ai-rules.yml:6: rule 'adr': unknown protocol 'phasd' (known: council, pcs, "
        "phased, review, roundtable, swarm); did you mean 'phased'?")
    assert lines[4] == ("cascade: .ai-rules.yml:7: rule 'adr': drift_review names an unknown "
                        "persona 'pragmatst'; did you mean 'pragmatist'?")
    assert _files(repo) == before


def test_a_single_error_keeps_its_one_line(adr_repo):
    repo = adr_repo
    (repo / ".ai-rules.yml").write_text(
        "rules:\n  - name: adr\n    match: \"docs/adr/*.md\"\n    colour: red\n")
    ran = cascade(repo, "status", DOC)
    assert ran.returncode == 2
    assert ran.stderr.startswith("cascade: .ai-rules.yml:4: unknown rule key 'colour' (allowed: ")
    assert len(ran.stderr.splitlines()) == 1


def test_the_other_rules_of_the_file_are_said_with_the_one_in_use(adr_repo):
    """The rule in use names an unknown persona: the file's other rule, which names an unknown
    protocol, is said in the same run (a rule not in use, alone, blocks nothing)."""
    repo = adr_repo
    (repo / ".ai-rules.yml").write_text(
        "rules:\n  - name: adr\n    match: \"docs/adr/*.md\"\n    participants: [architekt]\n"
        "  - name: specs\n    match: \"docs/specs/*.md\"\n    protocol: revew\n")
    git(repo, "add", ".")
    ran = cascade(repo, "hook", DOC)
    assert ran.returncode == 2, ran.out
    lines = ran.stderr.splitlines()
    assert len(lines) == 2, ran.stderr
    assert lines[0].startswith("cascade: .ai-rules.yml:4: rule 'adr': unknown persona "
                               "'architekt'")
    assert lines[1] == ("cascade: .ai-rules.yml:7: rule 'specs': unknown protocol 'revew' "
                        "(known: council, pcs, phased, review, roundtable, swarm); did you mean "
                        "'review'?")
