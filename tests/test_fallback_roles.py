"""Per-role fallback models (issue 14): a rule's ``models:`` names a tier (fast, strong) or a
role of its protocol, with a model or a list -- the model, then that role's fallbacks, tried
after it fails and before CASCADE_FALLBACK_MODELS. A council in the gate (real repositories,
the real hook) over HTTP to the fake endpoint, which fails the models a test takes down."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest
from conftest import REPO, git
from council_script import Council
from fakellm import http_error
from inproc import cascade, commit
from scripted import ASK
from test_council import COUNCIL_RULES
from test_hook import DOC, LEDGER, install_plain, loop_repo  # noqa: F401

from cascade import Discussion, Runner

# These tests follow the hook's hints step by step (git add by git add): staging off.
pytestmark = pytest.mark.usefixtures("hook_stages_nothing")

ADVISORS = ("AI-Pragmatist", "AI-Visionary", "AI-Skeptic")


class Down(Council):
    """The council's replies; a request for a model that is down gets HTTP 404 (never
    retried: the next model of the chain is asked). Records (persona, model) in order."""

    def __init__(self, fake, *down: str) -> None:
        self.down = set(down)
        self.models: list[tuple[str, str]] = []
        super().__init__(fake)

    def __call__(self, request):
        model = request.body["model"]
        self.models.append((ASK.search(request.text).group(1), model))
        if model in self.down:
            return http_error(404, f"The model `{model}` does not exist")
        return super().__call__(request)

    def asked_with(self, name: str) -> list[str]:
        return [m for n, m in self.models if n == name]


@pytest.fixture
def gate(loop_repo, monkeypatch):
    """A repository whose ADRs go to a council under a rule with the given ``models:``."""
    for var in ("CASCADE_MODEL_STRONG", "CASCADE_FALLBACK_MODELS"):
        monkeypatch.delenv(var, raising=False)

    def setup(models: str) -> None:
        repo = loop_repo
        (repo / ".ai-rules.yml").write_text(COUNCIL_RULES + f"    models: {models}\n")
        git(repo, "add", ".ai-rules.yml", *([".cascade/personas"] if (
            repo / ".cascade/personas").is_dir() else []))
        git(repo, "commit", "-qm", "a council with models per role", "--no-verify")
        install_plain(repo)
        git(repo, "add", DOC)
    return setup


def stamps(repo) -> dict[str, str]:
    """Each speaker's ``model=`` in the ledger's stamps."""
    d = Discussion.load(repo / LEDGER, root=repo)
    return {c.author: c.provenance["model"] for c in d.comments if c.origin == "ai"}


def test_the_referee_s_own_fallback_answers_when_its_model_is_down(loop_repo, fake_llm, gate):
    repo = loop_repo
    gate("{referee: [openai/big, openai/backup]}")
    script = Down(fake_llm, "big")
    blocked = commit(repo)
    assert blocked.returncode == 1, blocked.out  # the ledger to add: a READY verdict
    assert script.asked_with("AI-Referee") == ["big", "backup"]  # no retry of a 404
    assert sorted(n for n, m in script.models if m == "fake") == sorted(ADVISORS)
    assert stamps(repo) == {**{n: "openai/fake" for n in ADVISORS},
                            "AI-Referee": "openai/backup"}
    d = Discussion.load(repo / LEDGER, root=repo)
    assert d.state.run.outcome == "READY"
    assert "model=openai/backup" in (repo / LEDGER).read_text()
    git(repo, "add", LEDGER)
    assert commit(repo).returncode == 0 and fake_llm.calls() == 5  # nobody asked again


def test_a_role_beats_its_tier_and_a_persona_s_model_beats_both(loop_repo, fake_llm, gate):
    repo = loop_repo
    own = (REPO / "personas/skeptic.yml").read_text().replace("model: null", "model: openai/own")
    assert "model: openai/own" in own
    (repo / ".cascade/personas").mkdir(parents=True)
    (repo / ".cascade/personas/skeptic.yml").write_text(own)
    gate("{fast: openai/small, strong: [openai/large, openai/large-2], "
         "advisor: [openai/adv, openai/adv-2]}")
    script = Down(fake_llm, "own")
    assert commit(repo).returncode == 1
    assert script.asked_with("AI-Pragmatist") == script.asked_with("AI-Visionary") == ["adv"]
    assert script.asked_with("AI-Skeptic") == ["own", "adv-2"]  # its own, then the role's
    assert script.asked_with("AI-Referee") == ["large"]  # the tier's (no role key)
    assert stamps(repo) == {"AI-Pragmatist": "openai/adv", "AI-Visionary": "openai/adv",
                            "AI-Skeptic": "openai/adv-2", "AI-Referee": "openai/large"}
    calls = fake_llm.calls()
    plan = cascade(repo, "plan", DOC)  # the chains the run asked, with no call
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert ("advisor (fast): pragmatist -> openai/adv (then openai/adv-2), visionary -> "
            "openai/adv (then openai/adv-2), skeptic -> openai/own (then openai/adv-2)"
            in plan.stdout)
    assert "referee (strong): referee -> openai/large (then openai/large-2)" in plan.stdout
    assert fake_llm.calls() == calls


def test_the_global_fallbacks_come_after_the_role_s(loop_repo, fake_llm, gate, monkeypatch):
    repo = loop_repo
    monkeypatch.setenv("CASCADE_FALLBACK_MODELS", "openai/backup,openai/global")
    gate("{referee: [openai/big, openai/backup]}")
    script = Down(fake_llm, "big", "backup")
    assert commit(repo).returncode == 1
    assert script.asked_with("AI-Referee") == ["big", "backup", "global"]  # backup once
    assert stamps(repo)["AI-Referee"] == "openai/global"
    assert all(script.asked_with(n) == ["fake"] for n in ADVISORS)
    plan = cascade(repo, "plan", LEDGER)
    assert "referee (strong): referee -> openai/big (then openai/backup, openai/global)" \
        in plan.stdout
    assert "pragmatist -> openai/fake (then openai/backup, openai/global)" in plan.stdout


def test_a_role_whose_chain_is_all_down_fails_naming_each_model(loop_repo, fake_llm, gate,
                                                               monkeypatch):
    repo = loop_repo
    monkeypatch.setenv("CASCADE_FALLBACK_MODELS", "openai/global")
    gate("{referee: [openai/big, openai/backup]}")
    script = Down(fake_llm, "big", "backup", "global")
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert script.asked_with("AI-Referee") == ["big", "backup", "global"]
    line = next(x for x in blocked.out.splitlines() if "does not exist" in x)
    assert line.index("`big`") < line.index("openai/backup:") < line.index("openai/global:")
    assert "AI-Referee" not in stamps(repo)


def test_plan_of_a_protocol_shows_the_global_fallbacks_with_no_model_import(repo):
    env = {**os.environ, "CASCADE_MODEL": "openai/fast", "CASCADE_MODEL_STRONG": "openai/strong",
           "CASCADE_FALLBACK_MODELS": "openai/global, openai/strong", "PYTHONPATH": str(REPO)}
    probe = ("import sys\n"
             "from cascade.main import main\n"
             "code = main(['plan', '--protocol', 'council', '--participants', 'pragmatist'])\n"
             "print('IMPORTED', code, [m for m in ('litellm', 'jinja2') if m in sys.modules])\n")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=repo, capture_output=True,
                          text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "referee (strong): referee -> openai/strong (then openai/global)" in proc.stdout
    assert "pragmatist -> openai/fast (then openai/global, openai/strong)" in proc.stdout
    assert "IMPORTED 0 []" in proc.stdout


COUNCIL_LINES = len(COUNCIL_RULES.splitlines())


@pytest.mark.parametrize("models, line, message", [
    ("{referee: []}", 1, "models referee is an empty list"),
    ("{referee: [openai/big, 3]}", 1, "models referee must be a model name or a list of them"),
    ("{strong: {model: openai/big}}", 1, "models strong must be a model name or a list"),
    ("openai/big", 1, "models must be a mapping"),
    ("\n      advisor: openai/a\n      umpire: [openai/b]", 3,
     "rule 'adr': models: protocol 'council' has no role 'umpire' (roles: advisor, referee, "
     "d-freethinker"),
    ("{referee: openai/big}\n    protocol: review", 1,
     "rule 'adr': models: protocol 'review' has no role 'referee'"),
])
def test_bad_models_are_one_line_naming_the_rule_s_file_and_line(loop_repo, fake_llm, gate,
                                                                 models, line, message):
    repo = loop_repo
    rules = COUNCIL_RULES + f"    models: {models}\n"
    if "protocol: review" in models:
        rules = rules.replace("    protocol: council\n    flow: parallel\n", "")
    (repo / ".ai-rules.yml").write_text(rules)
    git(repo, "commit", "-qam", "a bad models:", "--no-verify")
    where = f".ai-rules.yml:{COUNCIL_LINES + line - (2 if 'review' in models else 0)}: "
    explain = cascade(repo, "explain", DOC)  # the rule that governs it, checked
    assert explain.returncode == 2, explain.stdout + explain.stderr
    lines = explain.stderr.strip().splitlines()
    assert len(lines) == 1 and where in lines[0] and message in lines[0], lines
    install_plain(repo)
    git(repo, "add", DOC)
    blocked = commit(repo)  # the gate refuses the rule the same way, asking no one
    assert blocked.returncode == 1 and where in blocked.out and message in blocked.out
    assert "Traceback" not in blocked.out and fake_llm.calls() == 0


def test_complete_tries_the_role_s_fallbacks_then_the_global_ones(fake_llm):
    """The seam itself: ``fallbacks`` first, then CASCADE_FALLBACK_MODELS, each model once."""
    from cascade.turns.chain import complete
    from cascade.turns.settings import Settings

    seen = []

    def answer(request):
        seen.append(request.body["model"])
        return "ok" if request.body["model"] == "c" else http_error(404, "no such model")

    fake_llm.default(answer)
    settings = Settings(model="openai/a", api_base=fake_llm.url, retries=0,
                        fallbacks=["openai/b", "openai/c"])
    done = asyncio.run(complete("openai/a", [{"role": "user", "content": "hi"}], settings,
                                fallbacks=["openai/b", "openai/a"]))
    assert done.model == "openai/c" and seen == ["a", "b", "c"]


def test_a_persona_s_provider_hint_picks_the_tier_the_rule_s_models_resolve(loop_repo, fake_llm,
                                                                           gate):
    """Seed 002's persona: "provider_hint: claude-sonnet # Preferred AI provider" -- a
    preference the rule's ``models:`` resolves: ``provider_hint: strong`` asks the rule's
    strong model for that persona, whose role is of the fast tier."""
    repo = loop_repo
    own = (REPO / "personas/skeptic.yml").read_text().replace(
        "model: null", "model: null\nprovider_hint: strong")
    (repo / ".cascade/personas").mkdir(parents=True)
    (repo / ".cascade/personas/skeptic.yml").write_text(own)
    gate("{fast: openai/small, strong: openai/big}")
    script = Down(fake_llm)
    assert commit(repo).returncode == 1
    assert script.asked_with("AI-Pragmatist") == script.asked_with("AI-Visionary") == ["small"]
    assert script.asked_with("AI-Skeptic") == ["big"]  # its hint's tier, not its role's
    assert script.asked_with("AI-Referee") == ["big"]
    assert stamps(repo)["AI-Skeptic"] == "openai/big"
    plan = cascade(repo, "plan", DOC)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert ("advisor (fast): pragmatist -> openai/small, visionary -> openai/small, "
            "skeptic -> openai/big" in plan.stdout)
    shown = cascade(repo, "personas", "show", "skeptic")
    assert "Tier: strong (provider_hint" in shown.stdout


def test_a_provider_hint_nothing_resolves_is_a_preference_only(loop_repo, fake_llm, gate):
    """``provider_hint: claude-sonnet`` (a provider's name, as design documents write it) in
    a repository that declares no such provider and whose rule's ``models:`` does not name
    it: the persona file loads, and the persona asks what its role would ask without it."""
    repo = loop_repo
    own = (REPO / "personas/skeptic.yml").read_text().replace(
        "model: null", "model: null\nprovider_hint: claude-sonnet")
    (repo / ".cascade/personas").mkdir(parents=True)
    (repo / ".cascade/personas/skeptic.yml").write_text(own)
    gate("{fast: openai/small, strong: openai/big}")
    listed = cascade(repo, "personas", "show", "skeptic")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "Provider: claude-sonnet (provider_hint" in listed.stdout
    script = Down(fake_llm)
    assert commit(repo).returncode == 1
    assert script.asked_with("AI-Skeptic") == ["small"]  # its role's tier, as without a hint


def test_a_review_reads_the_rule_s_models_and_a_persona_s_provider_hint(loop_repo, fake_llm):
    """Seed 002's ``provider_hint`` in the protocol it comes from: a review in the gate asks
    each participant the tier model the rule's ``models:`` gives (``fast``: a participant's),
    and ``provider_hint: strong`` the strong one, as every protocol's turns do."""
    from test_hook import RULES, script

    repo = loop_repo
    own = (REPO / "personas/security.yml").read_text().replace(
        "model: null", "model: null\nprovider_hint: strong")
    (repo / ".cascade/personas").mkdir(parents=True)
    (repo / ".cascade/personas/security.yml").write_text(own)
    (repo / ".ai-rules.yml").write_text(RULES + "    models: {fast: openai/small, strong: "
                                        "openai/big}\n")
    git(repo, "add", ".ai-rules.yml", ".cascade/personas")
    git(repo, "commit", "-qm", "a review with tiers", "--no-verify")
    install_plain(repo)
    script(fake_llm, ("READY", "CHANGES", "READY"))
    git(repo, "add", DOC)
    commit(repo)
    asked = {ASK.search(r.text).group(1): r.body["model"] for r in fake_llm.chat_requests}
    assert asked == {"AI-Architect": "small", "AI-Security": "big", "AI-Pragmatist": "small"}
    assert stamps(repo)["AI-Security"] == "openai/big"
    # a person asking by name outside the gate: the rule's models too
    before = len(fake_llm.chat_requests)
    done = cascade(repo, "turn", LEDGER, "@security", "@architect")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    again = {ASK.search(r.text).group(1): r.body["model"] for r in fake_llm.chat_requests[before:]}
    assert again == {"AI-Architect": "small", "AI-Security": "big"}
    # and through the Python API, as the command asks
    before = len(fake_llm.chat_requests)
    Runner().run_turn(repo / LEDGER, ["security", "architect"])
    again = {ASK.search(r.text).group(1): r.body["model"] for r in fake_llm.chat_requests[before:]}
    assert again == {"AI-Architect": "small", "AI-Security": "big"}
