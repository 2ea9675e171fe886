"""`cascade explain PATH`, in real repositories: the rule (file:line) and its settings, the rule
files consulted and the nearer rules that replace farther ones, the ledger, the protocol, the
participants with the model each would call, the calls the next review makes; a path no rule
governs (exit 1); no model library imported."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, cascade_subprocess, git
from ledgers import stamp
from test_hook import DOC, LEDGER, RULES  # the loop tests' repository

from cascade.turns.independence import FIX

NESTED = """\
rules:
  - name: other
    match: "notes/*.md"
  - name: adr
    match: "adr/0*.md"
    exclude: ["adr/0002-*.md"]
    discussion: "adr/discussions/{stem}.discussion.md"
    participants: [architect, security, researcher]
    protocol: phased
    model: openai/rule-model
    deciders: [lead@example.com]
    consensus: {human_required: true}
    on_consensus: {template: feature-spec, path: "features/{stem}.md"}
"""


@pytest.fixture
def adr(repo, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/env-model")
    (repo / ".ai-rules.yml").write_text(RULES)
    (repo / "docs/adr").mkdir(parents=True)
    (repo / DOC).write_text("# Use SQLite\n\nWe will store events in SQLite.\n")
    (repo / "README.md").write_text("# Project\n")
    return repo


def explain_json(cli, path: str) -> tuple[int, dict]:
    code, out, err = cli("explain", path, "--json")
    assert err == ""
    return code, json.loads(out)


def test_governed_document_without_ledger(adr, cli):
    code, out, err = cli("explain", DOC)
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"Path: {DOC} (a document)",
        "Rule files (top down): .ai-rules.yml",
        "Governed by: rule 'adr' (.ai-rules.yml:2)",
        "  match: docs/adr/*.md",
        "  consensus: threshold_ready=0.67 threshold_reject=0.01",
        "  human_required: false, persona_votes: counted, revote_on_change: true",
        "  deciders: anyone",
        f"Ledger: {LEDGER} (not created yet)",
        "Protocol: review, phases: review",
        "Participants:",
        "  @architect  AI-Architect   openai/env-model (CASCADE_MODEL)",
        "  @security   AI-Security    openai/env-model (CASCADE_MODEL)",
        "  @pragmatist AI-Pragmatist  openai/env-model (CASCADE_MODEL)",
        "Next review: 3 calls (up to 12 with re-asks)",
        "  @architect, @security, @pragmatist: no ledger yet, so the first review asks",
        "    every voting participant",
        # the panel answers the revision at once, none seeing another's reply: three
        # personas on one model are one model answering three times -- said once
        "Independence warning: step Review, answered independently: architect, security",
        "  and pragmatist (participant) share the model family 'env' (openai/env-model):",
        "  their judgements are not independent; give them models of different families:",
        "  a persona's model:, or the rule's models: for a role or a tier",
    ]
    assert all(len(line) <= 80 for line in out.splitlines())
    assert not (adr / LEDGER).exists()  # explaining writes nothing


def test_json_keys(adr, cli):
    code, data = explain_json(cli, DOC)
    assert code == 0
    assert set(data) == {"path", "kind", "governed", "reason", "document", "ledger",
                         "ledger_exists", "rule", "rule_files", "overrides", "also_matched_by",
                         "protocol", "participants", "api_base", "calls", "closest",
                         "decisions", "independence", "findings"}
    assert data["decisions"] == []
    assert data["decisions"] == []  # review asks no person a question of its steps
    # review's panel answers a revision at once, none seeing another's reply: on one model
    assert data["independence"] == {
        "clashes": ["step Review, answered independently: architect, security and pragmatist "
                    "(participant) share the model family 'env' (openai/env-model): their "
                    "judgements are not independent"],
        "fix": FIX, "distinct_models": False, "refused": None}
    assert data["findings"] == []  # no ledger yet: no open finding
    assert data["rule"]["policy"] == {"critical": "REJECT", "major": "CHANGES"}
    assert (data["kind"], data["governed"], data["ledger"], data["ledger_exists"]) == (
        "document", True, LEDGER, False)
    rule = data["rule"]
    assert (rule["name"], rule["where"], rule["line"], rule["match"]) == (
        "adr", ".ai-rules.yml:2", 2, ["docs/adr/*.md"])
    assert rule["consensus"] == {"threshold_ready": 0.67, "threshold_reject": 0.01,
                                 "human_required": False, "persona_votes": "counted"}
    assert (rule["deciders"], rule["revote_on_change"], rule["on_consensus"]) == ([], True, None)
    assert rule["status"] is None  # the test rule leaves the document's status alone
    assert data["protocol"] == {"name": "review", "phases": ["review"], "current": "review"}
    assert data["participants"][0] == {"alias": "architect", "name": "AI-Architect",
                                       "votes": True, "model": "openai/env-model",
                                       "model_from": "CASCADE_MODEL", "provider": None,
                                       "fallbacks": []}
    assert data["calls"]["count"] == 3 and data["calls"]["max"] == 12
    assert data["rule_files"] == [".ai-rules.yml"]


def test_model_resolution_persona_over_rule_over_environment(adr, cli):
    (adr / ".ai-rules.yml").write_text(RULES.replace(
        "    consensus:", "    model: openai/rule-model\n    consensus:"))
    own = adr / ".cascade" / "personas"
    own.mkdir(parents=True)
    text = (REPO / "personas" / "security.yml").read_text()
    (own / "security.yml").write_text(text.replace("model: null", "model: openai/persona-model"))
    _, data = explain_json(cli, DOC)
    models = {p["alias"]: (p["model"], p["model_from"]) for p in data["participants"]}
    assert models == {"architect": ("openai/rule-model", "rule"),
                      "security": ("openai/persona-model", "persona"),
                      "pragmatist": ("openai/rule-model", "rule")}
    _, out, _ = cli("explain", DOC)
    assert "  @security   AI-Security    openai/persona-model (the persona's model:)" in out


def test_ledger_path_and_pending_calls(adr, cli):
    assert cli("new", "Use SQLite", "--template", "adr", "--protocol", "review",
               "--source", DOC, "-o", LEDGER)[0] == 0
    code, out, _ = cli("explain", LEDGER)
    assert code == 0
    lines = out.splitlines()
    assert lines[:2] == [f"Path: {LEDGER} (a ledger)", f"Document: {DOC}"]
    assert "Governed by: rule 'adr' (.ai-rules.yml:2)" in lines
    assert "  @architect, @security, @pragmatist: the ledger records no revision yet" in lines

    # The panel answered the revision in the working tree: nothing is pending.
    git(adr, "add", DOC)
    revision = git(adr, "hash-object", DOC).strip()
    text = Path(LEDGER).read_text() + f"\n<!-- SOURCE-REVISION: {revision} path={DOC} -->\n"
    for name in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
        text += f"\n---\nName: {name}\nFine.\nVOTE: READY\n---\n"
    Path(LEDGER).write_text(stamp(text))
    _, data = explain_json(cli, DOC)
    assert (data["ledger_exists"], data["calls"]["count"]) == (True, 0)
    assert data["calls"]["why"] == "every participant has answered the latest input"
    assert "Next review: no call" in cli("explain", DOC)[1]

    cli("comment", LEDGER, "@security what about backups?", "--author", "Rob")
    _, data = explain_json(cli, DOC)
    assert (data["calls"]["personas"], data["calls"]["why"]) == (["security"], "mentioned by Rob")
    assert "Next review: 1 call (up to 4 with re-asks)" in cli("explain", DOC)[1]

    Path(DOC).write_text("# Use SQLite\n\nA new revision.\n")  # the next commit asks everyone
    before = Path(LEDGER).read_bytes()
    _, data = explain_json(cli, LEDGER)
    assert data["calls"]["count"] == 3
    assert data["calls"]["why"] == "the document changed since the revision the ledger recorded"
    assert Path(LEDGER).read_bytes() == before  # what the hook would append is never written


def test_not_governed_exits_1(adr, cli):
    code, out, err = cli("explain", "README.md")
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "Path: README.md (a document)",
        "Rule files (top down): .ai-rules.yml",
        "Not governed: no rule matches it.",
        "Closest rules:",
        "  'adr' (.ai-rules.yml:2): no match pattern matches",
        "    match: docs/adr/*.md",
    ]
    code, data = explain_json(cli, "README.md")
    assert (code, data["governed"], data["rule"], data["calls"]) == (1, False, None, None)
    assert data["closest"][0]["rule"] == "adr"


def test_no_rule_files(repo, cli):
    Path("x.md").write_text("x\n")
    code, out, _ = cli("explain", "x.md")
    assert code == 1
    assert "Rule files (top down): none" in out
    assert "Not governed: no .ai-rules.yml in the top folder of the repository." in out
    code, out, _ = cli("explain", "docs/adr/x.md")
    assert "Not governed: no .ai-rules.yml from the top of the repository down to docs/adr/." in out


def test_ledger_of_another_rule_or_none_is_not_governed(adr, cli):
    cli("new", "Loose", "--protocol", "review")
    code, data = explain_json(cli, "discussions/loose.discussion.md")
    assert (code, data["governed"]) == (1, False)
    assert "names no Source:" in data["reason"]
    cli("new", "Stray", "--protocol", "review", "--source", DOC, "-o", "stray.discussion.md")
    code, data = explain_json(cli, "stray.discussion.md")
    assert code == 1
    assert data["reason"] == (f"rule 'adr' (.ai-rules.yml:2) gives {DOC} the ledger {LEDGER}, "
                              "not this one")


def test_nested_rule_file_replaces_a_rule_of_the_same_name(adr, cli):
    (adr / "docs" / ".ai-rules.yml").write_text(NESTED)
    code, out, _ = cli("explain", DOC)
    assert code == 0
    lines = out.splitlines()
    assert lines[1:4] == [
        "Rule files (top down): .ai-rules.yml, docs/.ai-rules.yml",
        "  docs/.ai-rules.yml:4 replaces the rule 'adr' of .ai-rules.yml:2",
        "Governed by: rule 'adr' (docs/.ai-rules.yml:4)",
    ]
    assert "  match: adr/0*.md (relative to docs/)" in lines
    assert "  exclude: adr/0002-*.md" in lines
    assert "  human_required: true, persona_votes: counted, revote_on_change: true" in lines
    assert "  deciders: lead@example.com" in lines
    assert "  on_consensus: features/{stem}.md from template 'feature-spec'" in lines
    assert f"Ledger: {LEDGER} (not created yet)" in lines
    assert ("Protocol: phased, phases: initial_feedback -> detailed_review -> consensus_vote"
            in lines)
    assert "  @architect  AI-Architect   openai/rule-model (the rule's model:)" in lines
    assert "  @researcher AI-Researcher  background: speaks only when mentioned" in lines
    assert "Next review: 2 calls (up to 8 with re-asks)" in lines
    (adr / "docs" / ".ai-rules.yml").write_text(NESTED.replace("notes/*.md", "adr/*.md"))
    _, data = explain_json(cli, DOC)
    assert data["also_matched_by"] == [{"rule": "other", "where": "docs/.ai-rules.yml:2"}]
    (adr / "docs" / ".ai-rules.yml").write_text(NESTED)

    # Excluded by the nearer rule, which replaced the farther one that matched: not governed.
    Path("docs/adr/0002-x.md").write_text("x\n")
    code, data = explain_json(cli, "docs/adr/0002-x.md")
    assert (code, data["governed"]) == (1, False)
    assert data["overrides"] == [{"name": "adr", "where": "docs/.ai-rules.yml:4",
                                  "replaces": ".ai-rules.yml:2"}]
    whys = [(c["where"], c["why"]) for c in data["closest"]]
    assert whys[:2] == [
        (".ai-rules.yml:2", "it matches, but docs/.ai-rules.yml:4 replaces it with a rule of "
                            "the same name that does not"),
        ("docs/.ai-rules.yml:4", "excluded by 'adr/0002-*.md'"),
    ]


def test_preset_rule_names_the_preset_and_the_file_that_extends_it(repo, cli):
    Path(".ai-rules.yml").write_text("extends: adr\n")
    Path("docs/adr").mkdir(parents=True)
    Path(DOC).write_text("# x\n")
    code, data = explain_json(cli, DOC)
    assert code == 0
    assert data["rule"]["where"].startswith("preset adr.yml:")
    assert data["rule"]["where"].endswith(" via .ai-rules.yml")


def test_a_document_not_written_yet(adr, cli):
    code, data = explain_json(cli, "docs/adr/0009-later.md")
    assert (code, data["ledger"]) == (0, "docs/adr/discussions/0009-later.discussion.md")


@pytest.mark.parametrize("rules, path, message", [
    (RULES.replace("pragmatist]", "nobody]"), DOC,
     ".ai-rules.yml:6: rule 'adr': unknown persona 'nobody'"),
    ("rules: [", DOC, ".ai-rules.yml"),
    (RULES, "missing.discussion.md", "missing.discussion.md: no such discussion file"),
])
def test_bad_configuration_or_usage_exits_2(adr, cli, rules, path, message):
    Path(".ai-rules.yml").write_text(rules)
    code, out, err = cli("explain", path)
    assert (code, out) == (2, "")
    assert message in err and len(err.strip().splitlines()) == 1


def test_explain_imports_neither_litellm_nor_jinja2(adr):
    proc = cascade_subprocess("explain", DOC, cwd=adr, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert proc.returncode == 0, proc.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    assert "cascade.commands.explain" in imported
    assert not {m for m in imported if m.split(".")[0] in ("litellm", "jinja2")}
    assert "Governed by: rule 'adr' (.ai-rules.yml:2)" in proc.stdout


def test_no_model_configured(adr, cli, monkeypatch):
    import cascade.turns.tiers as model

    monkeypatch.delenv("CASCADE_MODEL")
    monkeypatch.setattr(model, "local_model_available", lambda: False)
    code, out, _ = cli("explain", DOC)
    assert code == 0
    assert "  @architect  AI-Architect   no model: set CASCADE_MODEL" in out.splitlines()
    _, data = explain_json(cli, DOC)
    assert (data["participants"][0]["model"], data["participants"][0]["model_from"]) == (None, None)
