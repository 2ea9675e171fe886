"""The design's provider files load as they are written: its providers list (name, command,
description -- the SmartTools providers.yaml form), its configuration's ``providers: {default,
fallback}`` and its full AI-Architect persona (``provider_hint: claude-sonnet``, expertise,
concerns, ``type: voting``), copied verbatim into tests/data/seed_providers/. What they
declare is shown by ``personas show``, ``explain`` and ``plan``; a bad providers file stops
every command with its file and line (exit 2)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO, git
from test_hook import DOC, hook, loop_repo  # noqa: F401

from cascade.config.personas import load_personas
from cascade.turns import providers
from cascade.turns.providers.command import split
from cascade.turns.settings import Settings
from cascade.turns.tiers import models_for

SEED = REPO / "tests/data/seed_providers"
SONNET = "claude -p --model sonnet"
DEEPSEEK = "$HOME/.opencode/bin/opencode run --model deepseek/deepseek-chat"


@pytest.fixture
def seeded(loop_repo, tmp_path, monkeypatch) -> Path:
    """The loop's repository with the design's files: its providers list as the team's
    .cascade/providers.yml, its architect as the team's persona, and its configuration's
    provider choice as the user's own providers.yml."""
    repo = loop_repo
    monkeypatch.delenv("CASCADE_MODEL", raising=False)
    (repo / ".cascade/personas").mkdir(parents=True)
    shutil.copy(SEED / "providers.yaml", repo / ".cascade/providers.yml")
    shutil.copy(SEED / "architect.yaml", repo / ".cascade/personas/architect.yml")
    user = tmp_path / "xdg"
    (user / "cascade").mkdir(parents=True)
    shutil.copy(SEED / "config-providers.yaml", user / "cascade/providers.yml")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user))
    git(repo, "add", ".cascade")
    git(repo, "commit", "-qm", "the design's providers and architect", "--no-verify")
    return repo


def test_the_design_s_files_load_unchanged(seeded):
    table = Settings.from_env(seeded).providers
    assert [(e.name, e.command, e.model, dict(e.options)) for e in table.entries] == [
        ("claude-sonnet", SONNET, None, {"description": "Balanced quality/speed"}),
        ("claude-haiku", "claude -p --model haiku", None,
         {"description": "Fast, good for simple responses"}),
        ("opencode-deepseek", DEEPSEEK, None, {"description": "Best value, cheap and accurate"}),
    ]
    assert (table.default, table.fallback) == ("claude-sonnet",
                                               ("opencode-deepseek", "claude-haiku"))
    architect = load_personas(seeded).get("architect")
    assert (architect.name, architect.type, architect.votes, architect.provider_hint) == (
        "AI-Architect", "voting", True, "claude-sonnet")
    assert architect.expertise[-1] == "Data modeling" and len(architect.expertise) == 6
    assert architect.concerns[1] == "Will this scale to 10x current load?"
    assert len(architect.concerns) == 5
    assert "respond with: {\"sentinel\": \"NO_RESPONSE\"}" in architect.personality


def test_the_design_s_providers_are_asked_as_commands(seeded):
    """Its architect asks claude-sonnet (the hint), the rest the default, each then the
    fallback chain; each name runs its command, ``$HOME`` expanded."""
    settings = Settings.from_env(seeded)
    registry = load_personas(seeded)
    assert models_for(registry.get("architect"), None, "fast", None, None, settings) == (
        "claude-sonnet",)
    assert models_for(registry.get("security"), None, "fast", None, None, settings) == (
        "claude-sonnet",)
    target = providers.target("opencode-deepseek", settings)
    assert (target.provider, target.model) == ("command", DEEPSEEK)
    assert split(target.model)[0] == f"{Path.home()}/.opencode/bin/opencode"


def test_personas_show_explain_and_plan_name_the_provider(seeded, cli):
    code, out, _ = cli("personas", "show", "architect")
    assert code == 0
    assert ("Provider: claude-sonnet (provider_hint): a command: claude -p --model sonnet "
            "(.cascade/providers.yml:3)") in out.splitlines()
    assert "Concerns:\n  - How does this fit the overall architecture?" in out

    (seeded / "docs/adr").mkdir(parents=True, exist_ok=True)
    code, out, _ = cli("explain", DOC)
    assert code == 0
    lines = out.splitlines()
    assert "  @architect  AI-Architect   claude-sonnet (the persona's provider_hint)" in lines
    assert "  @security   AI-Security    claude-sonnet (the providers' default:)" in lines
    assert "  claude-sonnet is a command: claude -p --model sonnet" in lines
    assert "  after a failure: opencode-deepseek, claude-haiku" in lines
    code, out, _ = cli("explain", DOC, "--json")
    first = json.loads(out)["participants"][0]
    assert (first["model"], first["model_from"], first["provider"], first["fallbacks"]) == (
        "claude-sonnet", "provider_hint", f"a command: {SONNET}",
        ["opencode-deepseek", "claude-haiku"])

    code, out, _ = cli("plan", "--protocol", "review", "--participants", "architect,security")
    assert code == 0
    lines = out.splitlines()
    chain = "claude-sonnet (then opencode-deepseek, claude-haiku)"
    assert f"  participant (fast): architect -> {chain}, security -> {chain}" in lines
    assert lines[lines.index("Providers:") + 1:lines.index("Providers:") + 4] == [
        f"  claude-sonnet is a command: {SONNET} (.cascade/providers.yml:3)",
        f"  opencode-deepseek is a command: {DEEPSEEK} (.cascade/providers.yml:9)",
        "  claude-haiku is a command: claude -p --model haiku (.cascade/providers.yml:6)"]


BAD = [
    ("providers:\n  - name: a\n    command: claude -p\n    timeout: 30\n",
     "unknown provider key 'timeout'", 4),
    ("providers:\n  - name: a\n    command: claude -p\n    model: openai/gpt-4o\n",
     "provider 'a' must give either 'command' or 'model'", 2),
    ("providers:\n  - name: a\n    command: [claude, -p\n", "invalid YAML", 3),
    ("providers:\n  - name: a\n    command: \"claude -p 'sonnet\"\n",
     "provider 'a': 'command' must be a command line whose quotes close", 3),
    ("providers:\n  - name: a\n    command: claude -p\n    system: system-prompt\n",
     "provider 'a': 'system' must be a flag such as --system-prompt, or stdin", 4),
]


@pytest.mark.parametrize("text, message, line", BAD)
def test_a_bad_providers_file_stops_explain_with_its_file_and_line(seeded, cli, text,
                                                                   message, line):
    (seeded / ".cascade/providers.yml").write_text(text)
    code, out, err = cli("explain", DOC)
    assert code == 2, out + err
    assert err.startswith(f"cascade: .cascade/providers.yml:{line}: "), err
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("text, message, line", [BAD[0], BAD[2]])
def test_a_bad_providers_file_stops_the_hook_with_its_file_and_line(seeded, text, message,
                                                                    line):
    (seeded / ".cascade/providers.yml").write_text(text)
    git(seeded, "add", DOC)
    proc = hook(seeded, DOC)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith(f"cascade: .cascade/providers.yml:{line}: "), proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert not (seeded / "docs/adr/discussions").exists()  # nothing asked, nothing written


def test_the_user_s_bad_providers_file_is_named_too(seeded, cli, tmp_path):
    user = tmp_path / "xdg/cascade/providers.yml"
    user.write_text("providers:\n  default: claude-sonnet\n  fallbak: [claude-haiku]\n")
    code, _, err = cli("explain", DOC)
    assert code == 2
    assert err.startswith(f"cascade: {user}:3: ") and "fallbak" in err, err
