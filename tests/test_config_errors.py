"""Configuration validated where it lives: a broken persona, protocol, rule preset or rule file
is refused with exit 2 and one line naming that file and line -- through the hook, through
``cascade turn`` and through ``cascade check`` (where the configuration is committed, and the
path shown is the repository's, never the temporary folder it is read from) -- before any
model call."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import cascade_subprocess, git

DOC = "docs/adr/0001-use-sqlite.md"
LEDGER = "docs/adr/discussions/0001-use-sqlite.discussion.md"
PERSONA = ".cascade/personas/architect.yml"
PROTOCOL = ".cascade/protocols/loop.yml"
PRESET = ".cascade/rules/mine.yml"
RULES = ".ai-rules.yml"

RULE = """\
  - name: adr
    match: "docs/adr/*.md"
    discussion: "docs/adr/discussions/{stem}.discussion.md"
    participants: [architect, security]
    protocol: loop
"""
PERSONA_OK = ("name: AI-Architect\nalias: architect\nrole: Architect\npersonality: calm\n"
              "type: voting\n")
# The protocol as the phased discussion design writes it (``phases:``): read as steps; a
# ``next`` that names no phase is refused at its line
PROTOCOL_PHASES = """\
name: loop
phases:
  - id: a
    voting_mode: false
    auto_trigger: all_mentioned_responded
    next: c
  - id: b
    voting_mode: true
    next: null
"""
# The protocol, written as steps (planner: respond): each step a phase, in order
PROTOCOL_OK = """\
name: loop
planner: respond
roles:
  - {id: participant, from: participants}
steps:
  - id: a
    role: participant
    fields: {vote: [READY, CHANGES, REJECT]}
    advance: all_mentioned_responded
  - id: b
    role: participant
    confirm: true
    fields: {vote: [READY, CHANGES, REJECT]}
"""
BASE = {RULES: "rules:\n" + RULE, PROTOCOL: PROTOCOL_OK}
HEADER = ("<!-- DISCUSSION -->\n<!-- Title: Use SQLite -->\n<!-- Source: " + DOC + " -->\n"
          "<!-- Protocol: loop -->\n<!-- Phase: a -->\n"
          "<!-- Participants: architect, security -->\n"
          "<!-- Consensus: threshold_ready=0.67 threshold_reject=0.01 human_required=false -->\n"
          "\n# Use SQLite\n\n---\n\n*Discussion begins below.*\n")
ALL = ("hook", "hook-ledger", "turn", "check")


@dataclass
class Case:
    id: str
    files: dict[str, str]
    path: str
    line: int
    message: str
    modes: tuple[str, ...] = ALL
    extra: dict[str, str] = field(default_factory=dict)


def _preset(text: str, modes: tuple[str, ...] = ALL) -> dict:
    return {"files": {RULES: "extends: [mine]\n", PRESET: text}, "path": PRESET, "modes": modes}


CASES = [
    # personas
    Case("persona-yaml", {PERSONA: "name: [unclosed\n"}, PERSONA, 1, "invalid YAML"),  # where the [ is
    Case("persona-list", {PERSONA: "- a\n- b\n"}, PERSONA, 1, "persona must be a mapping"),
    Case("persona-scalar", {PERSONA: "just words\n"}, PERSONA, 1, "persona must be a mapping"),
    Case("persona-type", {PERSONA: PERSONA_OK.replace("type: voting", "type: silent")}, PERSONA,
         5, "persona type must be voting or background"),
    Case("persona-name-type", {PERSONA: PERSONA_OK.replace("name: AI-Architect", "name: [x]")},
         PERSONA, 1, "persona 'name' must be a string"),
    Case("persona-key", {PERSONA: PERSONA_OK + "colour: red\n"}, PERSONA, 6,
         "unknown persona key 'colour'"),
    Case("persona-alias", {PERSONA: PERSONA_OK.replace("alias: architect", "alias: other")},
         PERSONA, 2, "does not match the file name 'architect.yml'"),
    Case("persona-missing", {PERSONA: PERSONA_OK.replace("role: Architect\n", "")}, PERSONA, 1,
         "persona is missing 'role'"),
    Case("persona-list-type", {PERSONA: PERSONA_OK + "expertise:\n  - x\n  - [y]\n"}, PERSONA, 8,
         "persona 'expertise' must be a list of strings"),
    Case("persona-duplicate-name",
         {".cascade/personas/dup.yml": PERSONA_OK.replace("architect", "dup").replace(
             "AI-Architect", "AI-Security")},
         ".cascade/personas/dup.yml", 1,
         "persona name 'AI-Security' is also used by the bundled persona 'security'"),
    # protocols
    Case("protocol-yaml", {PROTOCOL: "name: loop\nsteps: [unclosed\n"}, PROTOCOL, 2,
         "invalid YAML"),
    Case("protocol-list", {PROTOCOL: "- a\n"}, PROTOCOL, 1, "protocol must be a mapping"),
    Case("protocol-scalar", {PROTOCOL: "loop\n"}, PROTOCOL, 1, "protocol must be a mapping"),
    Case("protocol-key", {PROTOCOL: PROTOCOL_OK + "colour: red\n"}, PROTOCOL, 14,
         "unknown protocol key 'colour'"),
    Case("protocol-phases", {PROTOCOL: PROTOCOL_PHASES}, PROTOCOL, 6,
         "phase 'a': next 'c' is no phase (phases: a, b; null: the last)"),
    Case("protocol-phases-scalar", {PROTOCOL: "name: loop\nphases: many\n"}, PROTOCOL, 2,
         "protocol 'phases' must be a non-empty list"),
    Case("protocol-steps-scalar", {PROTOCOL: PROTOCOL_OK.split("steps:")[0] + "steps: many\n"},
         PROTOCOL, 5, "protocol 'steps' must be a non-empty list"),
    Case("protocol-step-scalar", {PROTOCOL: PROTOCOL_OK + "  - b\n"}, PROTOCOL, 14,
         "step must be a mapping"),
    Case("protocol-confirm-type", {PROTOCOL: PROTOCOL_OK.replace("confirm: true",
                                                                 "confirm: sometimes")},
         PROTOCOL, 12, "step 'b': confirm must be true or false"),
    Case("protocol-last-advances", {PROTOCOL: PROTOCOL_OK + "    advance: consensus\n"},
         PROTOCOL, 5, "step 'b' is the last: there is no step to advance to"),
    Case("protocol-max-rounds", {PROTOCOL: PROTOCOL_OK + "rounds: {max: true}\n"}, PROTOCOL, 14,
         "rounds max must be a positive whole number"),
    Case("protocol-name", {PROTOCOL: PROTOCOL_OK.replace("name: loop", "name: other")},
         PROTOCOL, 1, "protocol name 'other' does not match the file name 'loop.yml'"),
    Case("protocol-step-key", {PROTOCOL: PROTOCOL_OK + "    words: 80\n"}, PROTOCOL, 14,
         "unknown step key 'words'"),
    Case("protocol-step-advance", {PROTOCOL: PROTOCOL_OK.replace(
        "advance: all_mentioned_responded", "advance: soon")}, PROTOCOL, 9,
         "step 'a': unknown advance 'soon'"),
    # rule presets (extends: in .ai-rules.yml)
    Case("preset-yaml", line=1, message="invalid YAML", **_preset("rules: [unclosed\n")),
    Case("preset-list", line=1, message="preset must be a mapping", **_preset("- a\n")),
    Case("preset-scalar", line=1, message="preset must be a mapping", **_preset("adr\n")),
    Case("preset-rules-scalar", line=1, message="preset 'rules' must be a list",
         **_preset("rules: 5\n")),
    Case("preset-rules-mapping", line=1, message="preset 'rules' must be a list",
         **_preset("rules:\n  name: adr\n")),
    Case("preset-rule-scalar", line=2, message="rule must be a mapping",
         **_preset("rules:\n  - adr\n")),
    Case("preset-rule-key", line=7, message="unknown rule key 'colour'",
         **_preset("rules:\n" + RULE + "    colour: red\n")),
    Case("preset-rule-type", line=5, message="rule 'participants' must be a string or a list",
         **_preset("rules:\n" + RULE.replace("[architect, security]", "7"))),
    # a rule naming an unknown persona or protocol: never a smaller panel, also once the
    # ledger exists (the persona used to be dropped, the protocol blamed on the ledger)
    Case("preset-unknown-persona", line=5, message="rule 'adr': unknown persona 'nobody'",
         **_preset("rules:\n" + RULE.replace("architect, security", "architect, nobody"))),
    Case("preset-unknown-protocol", line=6, message="rule 'adr': unknown protocol 'nope'",
         **_preset("rules:\n" + RULE.replace("protocol: loop", "protocol: nope"))),
    Case("rules-unknown-persona", {RULES: "rules:\n" + RULE.replace("security", "nobody")},
         RULES, 5, "rule 'adr': unknown persona 'nobody'"),
    Case("preset-unknown-template", line=7, message="rule 'adr': unknown discussion template",
         **_preset("rules:\n" + RULE + "    template: nope\n", ("hook",))),
    Case("preset-duplicate-rule", line=7, message="duplicate rule name 'adr'",
         **_preset("rules:\n" + RULE + RULE.replace("docs/adr/*.md", "docs/*.md"))),
    # rule files
    Case("rules-consensus-scalar", {RULES: "rules:\n" + RULE + "    consensus: 5\n"}, RULES, 7,
         "consensus must be a mapping"),
    Case("rules-on-consensus-scalar", {RULES: "rules:\n" + RULE + "    on_consensus: x\n"},
         RULES, 7, "on_consensus must be a mapping"),
    Case("rules-drift-review-persona", {RULES: "rules:\n" + RULE + "    drift_review: nobody\n"},
         RULES, 7, "rule 'adr': drift_review names an unknown persona 'nobody'"),
    Case("rules-drift-scalar", {RULES: "rules:\n" + RULE + "    drift: loud\n"}, RULES, 7,
         "rule 'drift' must be warn or off"),
    Case("rules-governs-mapping", {RULES: "rules:\n" + RULE + "    governs: {a: b}\n"},
         RULES, 7, "rule 'governs' must be a path pattern"),
    Case("rules-list", {RULES: "- a\n"}, RULES, 1, "rule file must be a mapping"),
    Case("rules-rules-scalar", {RULES: "rules: 5\n"}, RULES, 1, "'rules' must be a list"),
    Case("rules-rule-scalar", {RULES: "rules:\n  - adr\n"}, RULES, 2, "rule must be a mapping"),
    Case("rules-extends-type", {RULES: "extends: {a: 1}\n"}, RULES, 1,
         "rule 'extends' must be a string or a list"),
]
# Every case through the hook (where the wrong file used to be named); one or more of each
# file kind also through a ledger that exists, ``cascade turn`` and ``cascade check``.
EVERYWHERE = {"persona-yaml", "persona-list", "persona-key", "persona-alias",
              "persona-duplicate-name", "protocol-yaml", "protocol-scalar", "protocol-next-type",
              "protocol-cycle", "protocol-self", "protocol-name", "preset-yaml",
              "preset-rules-scalar", "preset-rule-key", "rules-list", "rules-rule-scalar",
              "preset-unknown-persona", "preset-unknown-protocol", "rules-unknown-persona"}
CASES = [c if c.id in EVERYWHERE or c.modes != ALL else
         Case(c.id, c.files, c.path, c.line, c.message, ("hook",)) for c in CASES]


def write(repo: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def env(repo, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    write(repo, {**BASE, "README.md": "# Project\n",
                 DOC: "# Use SQLite\n\nWe will store events in SQLite.\n"})
    return repo


def commit_all(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "change", "--no-verify")


def run_mode(repo: Path, cli, mode: str, files: dict[str, str]) -> tuple[int, str, str]:
    if mode == "hook":
        write(repo, files)
        git(repo, "add", DOC)
        return cli("hook", DOC)
    if mode == "hook-ledger":  # the ledger exists: a new revision of the document
        write(repo, {LEDGER: HEADER})
        commit_all(repo)
        write(repo, files)
        write(repo, {DOC: "# Use SQLite\n\nWe will store events in SQLite, in WAL mode.\n"})
        git(repo, "add", DOC)
        return cli("hook", DOC)
    if mode == "turn":
        write(repo, {**files, LEDGER: HEADER})
        return cli("turn", LEDGER)
    assert mode == "check"
    write(repo, {**files, LEDGER: HEADER})
    commit_all(repo)
    return cli("check")


@pytest.mark.parametrize("mode, case", [
    pytest.param(mode, case, id=f"{mode}-{case.id}") for case in CASES for mode in case.modes])
def test_config_error_names_its_file_and_line(env, cli, fake_llm, mode, case):
    code, out, err = run_mode(env, cli, mode, case.files)
    assert code == 2, out + err
    assert err.startswith(f"cascade: {case.path}:{case.line}: "), err
    assert case.message in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and "cascade-check-" not in err
    assert fake_llm.calls() == 0
    assert not (env / LEDGER).exists() or mode != "hook"


@pytest.mark.parametrize("text, line, message", [
    (PROTOCOL_PHASES, 6, "phase 'a': next 'c' is no phase"),
    (PROTOCOL_OK + "    advance: consensus\n", 5,
     "step 'b' is the last: there is no step to advance to"),
])
def test_a_protocol_that_cannot_run_is_refused_by_the_real_hook(env, fake_llm, text, line,
                                                                 message):
    repo = env
    write(repo, {PROTOCOL: text})
    git(repo, "add", DOC)
    proc = cascade_subprocess("hook", DOC, cwd=repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith(f"cascade: {PROTOCOL}:{line}: {message}"), proc.stderr
    assert "Traceback" not in proc.stderr
    assert fake_llm.calls() == 0
    assert not (repo / LEDGER).exists()


def test_check_names_the_repository_file_from_a_subfolder(env, cli, monkeypatch):
    repo = env
    write(repo, {PERSONA: PERSONA_OK + "colour: red\n", LEDGER: HEADER})
    commit_all(repo)
    monkeypatch.chdir(repo / "docs")
    code, _, err = cli("check")
    assert code == 2
    # check reads the committed file: named by its repository path, as check's problems are
    assert err.startswith(f"cascade: {PERSONA}:6: unknown persona key"), err
    assert str(repo) not in err and "cascade-check-" not in err


def test_check_names_both_files_of_a_duplicate_persona_name(env, cli):
    repo = env
    write(repo, {".cascade/personas/dup.yml": PERSONA_OK.replace("architect", "dup"),
                 LEDGER: HEADER})
    commit_all(repo)
    code, _, err = cli("check")
    assert code == 2
    assert err.strip() == ("cascade: .cascade/personas/dup.yml:1: persona name 'AI-Architect' is "
                           "also used by the bundled persona 'architect'"), err
