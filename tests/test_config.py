"""Personas, protocols and templates: bundled data loads; broken data names file and line."""
from __future__ import annotations

from pathlib import Path

import pytest

from cascade import CascadeError
from cascade.config import templates
from cascade.config.personas import load_persona, load_personas
from cascade.config.protocols import load_protocol, load_protocol_file
from cascade.resources import bundled


def test_bundled_personas_are_the_seeds_eight():
    registry = load_personas(None)
    voting = sorted(p.alias for p in registry if p.votes)
    background = sorted(p.alias for p in registry if not p.votes)
    assert voting == ["architect", "designer", "moderator", "perfectionist", "pragmatist",
                      "security"]
    assert background == ["researcher", "visualizer"]
    for p in registry:
        assert p.name.startswith("AI-")
        assert p.personality.strip() and p.role and p.expertise and p.concerns
        assert p.model is None


PERSONA_OK = "name: AI-Reviewer\nalias: reviewer\nrole: Reviewer\npersonality: hi\ntype: voting\n"


@pytest.mark.parametrize("text, message, line", [
    ("name: [x\n", "invalid YAML", 2),
    ("- a\n- b\n", "persona must be a mapping", 1),
    (PERSONA_OK.replace("type: voting", "type: silent"), "persona type must be voting or background", 5),
    (PERSONA_OK.replace("alias: reviewer", "alias: other"), "does not match the file name", 2),
    (PERSONA_OK.replace("alias: reviewer", "alias: Bad Alias"), "must be lower-case", 2),
    (PERSONA_OK.replace("role: Reviewer\n", ""), "persona is missing 'role'", 1),
    (PERSONA_OK + "expertise: nope\n", "must be a list of strings", 6),
    (PERSONA_OK + "name: again\n", "duplicate key 'name'", 6),
    (PERSONA_OK + "model: 3\n", "model string or null", 6),
])
def test_persona_errors(tmp_path, text, message, line):
    path = tmp_path / "reviewer.yml"
    path.write_text(text)
    with pytest.raises(CascadeError) as info:
        load_persona(path)
    assert message in info.value.message
    assert info.value.line == line
    assert str(info.value).startswith(f"{info.value.path}:{line}: ")


def test_persona_name_clash(tmp_path):
    folder = tmp_path / ".cascade" / "personas"
    folder.mkdir(parents=True)
    (folder / "dup.yml").write_text(PERSONA_OK.replace("reviewer", "dup").replace(
        "AI-Reviewer", "AI-Security"))
    with pytest.raises(CascadeError, match="also used by"):
        load_personas(tmp_path)


def test_bundled_protocols():
    phased = load_protocol("phased", None)
    assert phased.phase_ids() == ["initial_feedback", "detailed_review", "consensus_vote"]
    assert [p.voting_mode for p in phased.phases] == [False, False, True]
    assert phased.first.auto_trigger == "all_mentioned_responded"
    assert [p.next for p in phased.phases] == ["detailed_review", "consensus_vote", None]
    review = load_protocol("review", None)
    assert review.phase_ids() == ["review"] and review.first.voting_mode


PROTOCOL_OK = """name: mine
phases:
  - id: one
    voting_mode: false
    next: two
  - id: two
    voting_mode: true
"""


@pytest.mark.parametrize("text, message, line", [
    (PROTOCOL_OK.replace("next: two", "next: three"), "unknown next phase 'three'", 5),
    (PROTOCOL_OK.replace("voting_mode: true", "voting_mode: yes please"), "voting_mode must be", 7),
    (PROTOCOL_OK + "    auto_trigger: whenever\n", "unknown auto_trigger 'whenever'", 8),
    (PROTOCOL_OK + "    colour: red\n", "unknown phase key 'colour'", 8),
    (PROTOCOL_OK.replace("id: two", "id: one"), "duplicate phase id 'one'", 6),
    ("name: x\nphases: []\n", "non-empty list", 2),
    ("name: x\nphases: [{id: a}]\nmax_rounds: 0\n", "max_rounds", 3),
])
def test_protocol_errors(tmp_path, text, message, line):
    path = tmp_path / "mine.yml"
    path.write_text(text)
    with pytest.raises(CascadeError) as info:
        load_protocol_file(path)
    assert message in info.value.message
    assert info.value.line == line


def test_repository_protocol_is_found(tmp_path):
    folder = tmp_path / ".cascade" / "protocols"
    folder.mkdir(parents=True)
    (folder / "mine.yml").write_text(PROTOCOL_OK)
    assert load_protocol("mine", tmp_path).phase_ids() == ["one", "two"]


@pytest.mark.parametrize("name", ["feature", "adr", "code-review"])
@pytest.mark.parametrize("source, context", [(None, ""), ("docs/adr/0007.md", "Why: speed.")])
def test_discussion_templates_render(name, source, context):
    text = templates.render("discussions", name, None, title="Event Store", source=source,
                            context=context, created="2026-11-21",
                            participants=["architect", "security"])
    assert "Event Store" in text
    assert ("docs/adr/0007.md" in text) == bool(source)
    assert ("Why: speed." in text) == bool(context)
    lines = text.rstrip("\n").splitlines()
    assert lines[-3] == "---" and lines[-1].startswith("*")


def test_template_missing_variable_is_an_error(tmp_path):
    folder = tmp_path / ".cascade" / "templates" / "discussions"
    folder.mkdir(parents=True)
    (folder / "mine.md.j2").write_text("# {{ title }} by {{ owner }}\n")
    with pytest.raises(CascadeError, match="'owner' is undefined") as info:
        templates.render("discussions", "mine", tmp_path, title="T", source=None, context="",
                         created="", participants=[])
    assert info.value.path.endswith("mine.md.j2")


def test_template_syntax_error_names_line(tmp_path):
    folder = tmp_path / ".cascade" / "templates" / "discussions"
    folder.mkdir(parents=True)
    (folder / "mine.md.j2").write_text("# {{ title }}\n\n{% if %}\n")
    with pytest.raises(CascadeError) as info:
        templates.render("discussions", "mine", tmp_path, title="T")
    assert info.value.line == 3


def test_available_templates_include_repository_ones(tmp_path):
    folder = tmp_path / ".cascade" / "templates" / "discussions"
    folder.mkdir(parents=True)
    (folder / "rfc.md.j2").write_text("x")
    assert templates.available("discussions", tmp_path) == ["adr", "code-review", "feature", "rfc"]


def test_bundled_folders_exist():
    for kind in ("templates", "rules", "personas", "protocols"):
        assert bundled(kind).is_dir(), kind
    assert isinstance(bundled("templates"), Path)
