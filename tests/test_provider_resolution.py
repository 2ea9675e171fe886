"""Which provider asks which name: declared providers (the repository's file, the user's over
it), the default and the fallback chain, a persona's provider_hint, and the registry's choice
for a model string."""
from __future__ import annotations

import asyncio

import pytest
from fakellm import http_error

from cascade.config.personas import Persona
from cascade.config.providers import load_providers
from cascade.turns import providers
from cascade.turns.chain import complete
from cascade.turns.settings import Settings
from cascade.turns.tiers import models_for

REPO_FILE = """\
providers:
  - name: claude-sonnet
    command: "claude -p --model sonnet"
    description: "Balanced quality/speed"
  - name: local
    model: cascade-local/smollm2
  - name: team-gpt
    model: openai/gpt-4o-mini
    api_base: http://gateway.internal/v1
default: claude-sonnet
fallback: [team-gpt]
"""


@pytest.fixture
def user_config(tmp_path, monkeypatch):
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    (home / "cascade").mkdir(parents=True)
    return home / "cascade" / "providers.yml"


def persona(hint: str | None = None, model: str | None = None) -> Persona:
    return Persona("AI-Test", "test", "role", "p", (), (), "voting", model, None,
                   provider_hint=hint)


def test_the_repository_s_providers_and_the_user_s_over_them(tmp_path, user_config):
    (tmp_path / ".cascade").mkdir()
    (tmp_path / ".cascade/providers.yml").write_text(REPO_FILE)
    table = load_providers(tmp_path)
    assert table.names() == ("claude-sonnet", "local", "team-gpt")
    assert (table.default, table.fallback) == ("claude-sonnet", ("team-gpt",))
    user_config.write_text("providers:\n  - name: claude-sonnet\n"
                           "    command: \"$HOME/bin/claude -p\"\ndefault: team-gpt\n")
    table = load_providers(tmp_path)
    assert table.entry("claude-sonnet").command == "$HOME/bin/claude -p"  # the user's, by name
    assert table.entry("local").model == "cascade-local/smollm2"  # the repository's kept
    assert (table.default, table.fallback) == ("team-gpt", ("team-gpt",))


def test_the_seed_s_choice_form_loads(tmp_path, user_config):
    user_config.write_text("providers:\n  default: claude-sonnet\n  fallback:\n"
                           "    - opencode-deepseek\n    - claude-haiku\n")
    table = load_providers(None)
    assert (table.entries, table.default) == ((), "claude-sonnet")
    assert table.fallback == ("opencode-deepseek", "claude-haiku")


@pytest.mark.parametrize("text, where, words", [
    ("providers:\n  - name: x\n    command: a\n    model: b\n", 2, "either 'command' or"),
    ("providers:\n  - name: x\n    comand: a\n", 3, "comand"),
    ("providers:\n  - name: x\n    model: a\n  - name: x\n    model: b\n", 4,
     "declared twice"),
    ("providers: 3\n", 1, "'providers' must be"),
    ("providers:\n  - name: x\n    command: a\n    system: yes-please\n", 4, "--system-prompt"),
])
def test_a_bad_providers_file_is_one_line_at_its_line(tmp_path, user_config, text, where,
                                                       words):
    from cascade.base.errors import CascadeError

    (tmp_path / ".cascade").mkdir()
    (tmp_path / ".cascade/providers.yml").write_text(text)
    with pytest.raises(CascadeError) as caught:
        load_providers(tmp_path)
    message = str(caught.value)
    assert f"providers.yml:{where}:" in message and words in message, message


def test_a_name_goes_to_its_provider(tmp_path, user_config):
    (tmp_path / ".cascade").mkdir()
    (tmp_path / ".cascade/providers.yml").write_text(REPO_FILE)
    settings = Settings(providers=load_providers(tmp_path))
    cases = {"claude-sonnet": ("command", "claude -p --model sonnet"),
             "local": ("cascade-local", "cascade-local/smollm2"),
             "team-gpt": ("openai", "openai/gpt-4o-mini"),
             "anthropic/claude-haiku-4-5": ("anthropic", "anthropic/claude-haiku-4-5"),
             "ollama/llama3.2": ("ollama", "ollama/llama3.2"),
             "gemini/gemini-2.5-flash": ("litellm", "gemini/gemini-2.5-flash"),
             "gpt-4o": ("litellm", "gpt-4o")}
    for name, (which, model) in cases.items():
        target = providers.target(name, settings)
        assert (target.provider, target.model) == (which, model), name
    assert providers.target("team-gpt", settings).option("api_base") == \
        "http://gateway.internal/v1"
    through = Settings(providers=settings.providers, http="litellm")
    assert providers.target("team-gpt", through).provider == "litellm"
    assert providers.target("local", through).provider == "cascade-local"
    assert providers.target("claude-sonnet", through).provider == "command"
    # what a declared name's replies are cached by, and whether it is the embedded model
    assert settings.model_string("claude-sonnet") == "claude -p --model sonnet"
    assert settings.for_model("local").concurrency == 1
    assert settings.for_model("team-gpt").concurrency == settings.concurrency


def test_a_hint_and_the_default_pick_the_model(tmp_path, user_config):
    (tmp_path / ".cascade").mkdir()
    (tmp_path / ".cascade/providers.yml").write_text(REPO_FILE)
    table = load_providers(tmp_path)
    settings = Settings(providers=table)
    assert models_for(persona("claude-sonnet"), None, "fast", None, None, settings)[0] == \
        "claude-sonnet"
    assert models_for(persona("claude-sonnet", "openai/own"), None, "fast", None, None,
                      settings)[0] == "openai/own"  # the persona's model first
    assert models_for(persona("nobody-declared"), None, "fast", "openai/rule", None,
                      settings)[0] == "openai/rule"  # a hint nothing serves: a preference
    assert models_for(persona(), None, "fast", None, None, settings)[0] == "claude-sonnet"
    with_env = Settings(model="openai/env", providers=table)
    assert models_for(persona(), None, "fast", None, None, with_env)[0] == "openai/env"
    assert models_for(persona("strong"), None, "fast", None, {"strong": "openai/big"},
                      settings)[0] == "openai/big"


def test_the_declared_fallback_ends_the_chain(fake_llm, tmp_path, user_config):
    """The chain: the model, then CASCADE_FALLBACK_MODELS, then the declared fallback."""
    (tmp_path / ".cascade").mkdir()
    (tmp_path / ".cascade/providers.yml").write_text(
        "providers:\n  - name: backup\n    model: openai/backup\nfallback: [backup]\n")
    asked: list[str] = []

    def answer(request):
        asked.append(request.body["model"])
        return "from backup" if request.body["model"] == "backup" else http_error(404, "gone")

    fake_llm.default(answer)
    settings = Settings(api_base=fake_llm.url, retries=0, fallbacks=["openai/second"],
                        providers=load_providers(tmp_path))
    done = asyncio.run(complete("openai/first", [{"role": "user", "content": "hi"}], settings))
    assert asked == ["first", "second", "backup"]
    assert (done.text, done.model) == ("from backup", "backup")
