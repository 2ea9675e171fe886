"""Independence you can see: roles meant to judge independently -- the speakers of a step
who answer apart (a blind step, the review's panel on a revision, a closing vote), a judge
and the roles it weighs -- that resolve to one model family are named by ``plan``,
``explain`` and the hook, a line each, saying what to do; a rule with ``distinct_models: true``
refuses them (the hook before any model call, exit 2 as any configuration error)."""
from __future__ import annotations

import json
from pathlib import Path

import inproc
import pytest
import test_hook
from conftest import REPO, git
from council_script import Council
from fakellm import http_error
from inproc import commit
from test_hook import DOC, LEDGER, RULES, install_plain, run

from cascade.config.personas import forget_loaded
from cascade.turns.independence import FIX, family

loop_repo = test_hook.loop_repo  # the fixture: a repository with a rule and a document
COUNCIL_RULES = RULES.replace("participants: [architect, security, pragmatist]",
                              "protocol: council\n    flow: parallel")
STRICT = COUNCIL_RULES.replace("flow: parallel", "flow: parallel\n    distinct_models: true")


@pytest.mark.parametrize("model, expected", [
    ("openai/gpt-4o-mini", "gpt"), ("gpt-4o", "gpt"), ("azure/gpt-35-turbo", "gpt"),
    ("openrouter/openai/gpt-4o", "gpt"),
    ("anthropic/claude-3-5-sonnet-20241022", "claude"),
    ("bedrock/anthropic.claude-3-haiku-20240307-v1:0", "claude"),
    ("ollama/llama3", "llama"), ("meta-llama/Meta-Llama-3-8B-Instruct", "llama"),
    ("together_ai/meta-llama/Llama-3.1-70B", "llama"),
    ("/models/qwen2.5-0.5b-instruct-q4_k_m.gguf", "qwen"), ("Qwen/Qwen2.5-7B", "qwen"),
    ("openai/o1-mini", "o1"), ("o3", "o3"), ("gemini/gemini-1.5-pro", "gemini"),
    ("mistral/mistral-large-latest", "mistral"), ("cascade-local/smollm2", "smollm"),
])
def test_a_model_s_family_is_the_lineage_its_name_starts_with(model, expected):
    assert family(model) == expected


def _persona(repo: Path, alias: str, model: str) -> None:
    """A repository persona: the bundled one with its own model."""
    text = (REPO / "personas" / f"{alias}.yml").read_text().replace("model: null",
                                                                    f"model: {model}")
    (repo / ".cascade" / "personas").mkdir(parents=True, exist_ok=True)
    (repo / ".cascade" / "personas" / f"{alias}.yml").write_text(text)
    forget_loaded()  # an in-process cli reads the folder again


@pytest.fixture
def models(monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/gpt-4o-mini")
    monkeypatch.setenv("CASCADE_MODEL_STRONG", "openai/gpt-4o")


def test_plan_warns_a_line_each_naming_the_roles_and_the_family(repo, cli, models):
    code, out, err = cli("plan", "--protocol", "council")
    assert code == 0, err
    warnings = [line.strip() for line in out.splitlines() if "warning:" in line]
    assert warnings == [
        ("warning: step Advice, answered independently: pragmatist, visionary and skeptic "
         "(advisor) share the model family 'gpt' (openai/gpt-4o-mini): their judgements are "
         f"not independent; {FIX}"),
        ("warning: referee weighs advisor: referee (referee) and pragmatist, visionary and "
         "skeptic (advisor) share the model family 'gpt' (openai/gpt-4o, openai/gpt-4o-mini): "
         f"their judgements are not independent; {FIX}")]
    # D/P mode: each arbiter and the freethinker it weighs, the meta-arbiter and the arbiters
    out = cli("plan", "--protocol", "council", "--mode", "dp")[1]
    assert [line.split(":")[1].strip() for line in out.splitlines() if "warning:" in line] == [
        "d-arbiter weighs d-freethinker", "p-arbiter weighs p-freethinker",
        "meta weighs d-arbiter, p-arbiter"]


def test_models_of_different_families_quiet_the_warning(repo, cli, models, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL_STRONG", "anthropic/claude-3-5-sonnet")
    _persona(repo, "visionary", "ollama/llama3")
    _persona(repo, "skeptic", "gemini/gemini-1.5-pro")
    out = cli("plan", "--protocol", "council")[1]
    assert "warning" not in out, out
    _persona(repo, "skeptic", "openai/gpt-4o")  # the same family as the pragmatist's
    out = cli("plan", "--protocol", "council")[1]
    warnings = [line.strip() for line in out.splitlines() if "warning:" in line]
    assert warnings == [("warning: step Advice, answered independently: pragmatist and "
                         "skeptic (advisor) share the model family 'gpt' (openai/gpt-4o-mini, "
                         f"openai/gpt-4o): their judgements are not independent; {FIX}")]


def cascade(repo, *args: str):
    """``cascade ARGS`` in ``repo``, in this process (tests/inproc.py)."""
    return inproc.cascade(repo, *args)


def council_gate(repo: Path, monkeypatch, rules: str, message: str) -> Path:
    """``repo`` with a council rule committed, the hook installed and the ADR staged; the
    advisors on one model family (``openai/fast``), the referee on another."""
    monkeypatch.setenv("CASCADE_MODEL", "openai/fast")
    monkeypatch.setenv("CASCADE_MODEL_STRONG", "openai/strong")
    (repo / ".ai-rules.yml").write_text(rules)
    git(repo, "commit", "-qam", message)
    install_plain(repo)
    git(repo, "add", DOC)
    return repo


def test_the_hook_warns_and_runs(loop_repo, fake_llm, monkeypatch):
    repo = council_gate(loop_repo, monkeypatch, COUNCIL_RULES, "ADRs go to a council")
    council = Council(fake_llm)
    monkeypatch.setenv("CASCADE_RETRIES", "0")
    council.replies[("AI-Referee", "Verdict", 1)] = http_error(500)  # the run stops there
    blocked = commit(repo)
    assert fake_llm.calls() == 4, blocked.out  # it runs: a warning, not a refusal
    assert (f"cascade: {LEDGER}: warning: step Advice, answered independently: pragmatist, "
            "visionary and skeptic (advisor) share the model family 'fast' (openai/fast): "
            "their judgements are not independent") in blocked.out
    assert "referee weighs" not in blocked.out  # the referee is on another family
    del council.replies[("AI-Referee", "Verdict", 1)]
    git(repo, "add", "-A")
    again = commit(repo)  # said once, when the revision's run began: not on every attempt
    assert fake_llm.calls() == 5 and "warning:" not in again.out, again.out
    explain = cascade(repo, "explain", DOC)
    assert explain.returncode == 0, explain.stderr
    assert "Independence warning: step Advice, answered independently:" in explain.stdout


def test_distinct_models_refuses_before_any_call_in_one_line(loop_repo, fake_llm, monkeypatch):
    repo = council_gate(loop_repo, monkeypatch, STRICT, "ADRs go to a council of distinct models")
    line = STRICT.splitlines().index("    distinct_models: true") + 1
    Council(fake_llm)
    hook = cascade(repo, "hook", DOC)
    assert hook.returncode == 2 and fake_llm.calls() == 0, hook.stdout + hook.stderr
    said = [x for x in hook.stderr.splitlines() if x.strip()]
    assert said == [(f"cascade: .ai-rules.yml:{line}: rule 'adr' has distinct_models: true, "
                     "but step Advice, answered independently: pragmatist, visionary and "
                     "skeptic (advisor) share the model family 'fast' (openai/fast): their "
                     "judgements are not independent; give them models of different families: "
                     "a persona's model:, or the rule's models: for a role or a tier")], hook.stderr
    assert commit(repo).returncode == 1 and fake_llm.calls() == 0  # the commit is refused
    explain = cascade(repo, "explain", DOC)
    assert explain.returncode == 2
    assert explain.stderr.strip() == said[0]
    assert "Independence error: step Advice" in explain.stdout
    as_json = cascade(repo, "explain", "--json", DOC)
    assert as_json.returncode == 2 and as_json.stderr.strip() == said[0]
    data = json.loads(as_json.stdout)["independence"]
    assert data["distinct_models"] is True and len(data["clashes"]) == 1
    assert data["refused"]["file"] == ".ai-rules.yml" and data["refused"]["line"] == line
    # the fix: each advisor on a family of its own; the referee too
    _persona(repo, "visionary", "ollama/llama3")
    _persona(repo, "skeptic", "gemini/gemini-1.5-pro")
    git(repo, "add", ".cascade")
    git(repo, "commit", "-qm", "distinct advisors", "--no-verify")
    git(repo, "add", DOC)
    fixed = commit(repo)
    assert "distinct_models" not in fixed.out and "warning" not in fixed.out, fixed.out


def test_plan_of_a_ledger_under_distinct_models_is_an_error(loop_repo, fake_llm, monkeypatch):
    repo = council_gate(loop_repo, monkeypatch, COUNCIL_RULES, "ADRs go to a council")
    Council(fake_llm)
    commit(repo)
    assert cascade(repo, "plan", LEDGER).returncode == 0
    (repo / ".ai-rules.yml").write_text(STRICT)
    plan = cascade(repo, "plan", LEDGER)
    assert plan.returncode == 2, plan.stdout + plan.stderr
    assert "referee weighs" not in plan.stdout  # the referee is on another family
    assert "  error: step Advice, answered independently" in plan.stdout
    assert "rule 'adr' has distinct_models: true, but step Advice" in plan.stderr


@pytest.mark.parametrize("value", ["yes-please", "1", "[a]"])
def test_a_bad_distinct_models_is_one_line_at_its_line(loop_repo, fake_llm, value):
    repo = loop_repo
    (repo / ".ai-rules.yml").write_text(STRICT.replace("distinct_models: true",
                                                       f"distinct_models: {value}"))
    line = STRICT.splitlines().index("    distinct_models: true") + 1
    explain = cascade(repo, "explain", DOC)
    assert explain.returncode == 2
    assert explain.stderr.strip() == (f"cascade: .ai-rules.yml:{line}: rule 'distinct_models' "
                                      "must be true or false"), explain.stderr


def test_members_not_named_yet_are_said_as_how_many(repo, cli, models):
    """Before a panel is generated, plan names no placeholder: how many, in which role."""
    out = cli("plan", "--protocol", "swarm")[1]
    assert ("warning: steps Position declarations and Closing vote, answered independently: "
            "3 experts not named yet (expert) share the model family 'gpt' (openai/gpt-4o-mini)") in out, out
    assert "<expert" not in out


# The common panel: the review protocol asks every persona about one revision at once, none
# seeing another's reply -- three personas on one model are one model voting three times.
REVIEW_WARNING = ("warning: step Review, answered independently: architect, security and "
                  "pragmatist (participant) share the model family 'gpt' (openai/gpt-4o-mini): "
                  f"their judgements are not independent; {FIX}")
PANEL_ARGS = ("--participants", "architect,security,pragmatist")


def _warnings(out: str) -> list[str]:
    return [line.strip() for line in out.splitlines() if "warning" in line.lower()]


def test_plan_of_the_review_panel_on_one_model_warns_once(repo, cli, models):
    code, out, err = cli("plan", "--protocol", "review", *PANEL_ARGS)
    assert code == 0, err
    assert _warnings(out) == [REVIEW_WARNING], out
    # phased: three phases, each answered at once by the panel -- still one line
    out = cli("plan", "--protocol", "phased", *PANEL_ARGS)[1]
    assert _warnings(out) == [REVIEW_WARNING.replace(
        "step Review", "steps Initial Feedback, Detailed Review and Consensus Vote")], out


def test_plan_of_the_review_panel_on_different_models_is_quiet(repo, cli, models):
    _persona(repo, "security", "anthropic/claude-3-5-sonnet")
    _persona(repo, "pragmatist", "ollama/llama3")
    out = cli("plan", "--protocol", "review", *PANEL_ARGS)[1]
    assert _warnings(out) == [], out
    # one persona alone on a model is no clash: the two still on gpt are named, not the third
    _persona(repo, "pragmatist", "openai/gpt-4o")
    out = cli("plan", "--protocol", "review", *PANEL_ARGS)[1]
    assert _warnings(out) == [(
        "warning: step Review, answered independently: architect and pragmatist "
        "(participant) share the model family 'gpt' (openai/gpt-4o-mini, openai/gpt-4o): "
        f"their judgements are not independent; {FIX}")], out


def test_sequential_steps_are_not_answered_apart(repo, cli, models):
    """Each speaker sees the earlier ones': no step clash (a judge and whom it weighs still)."""
    out = cli("plan", "--protocol", "council", "--flow", "sequential")[1]
    assert [w.split(":")[1].strip() for w in _warnings(out)] == ["referee weighs advisor"], out
    # six-hats: the answers are sequential; the closing vote on the synthesis is still apart
    out = cli("plan", "--protocol", "roundtable", "--strategy", "six-hats")[1]
    assert [w.split(":")[1].strip() for w in _warnings(out)] == [
        "step Closing vote, answered independently"], out


def _review_repo(repo: Path) -> Path:
    (repo / ".ai-rules.yml").write_text(RULES)
    (repo / "docs/adr").mkdir(parents=True)
    (repo / DOC).write_text("# Use SQLite\n\nWe will store events in SQLite.\n")
    return repo


def test_explain_of_the_review_panel_warns_once_and_not_on_different_models(repo, cli, models):
    _review_repo(repo)
    code, out, err = cli("explain", DOC)
    assert (code, err) == (0, "")
    said = " ".join(line.strip() for line in out.splitlines())
    assert said.count("Independence warning:") == 1, out
    assert ("Independence warning: " + REVIEW_WARNING.removeprefix("warning: ")) in said, out
    _persona(repo, "security", "anthropic/claude-3-5-sonnet")
    _persona(repo, "pragmatist", "ollama/llama3")
    code, out, err = cli("explain", DOC)
    assert code == 0 and "Independence" not in out, out


def test_the_hook_warns_once_of_a_review_panel_on_one_model(loop_repo, fake_llm):
    repo = loop_repo
    install_plain(repo)
    test_hook.script(fake_llm, ("CHANGES", "CHANGES", "READY"))
    git(repo, "add", DOC)
    first = commit(repo)  # 1 of 3 READY: blocked
    assert first.returncode == 1 and fake_llm.calls() == 3, first.out
    assert [x for x in first.out.splitlines() if "warning" in x] == [
        f"cascade: {LEDGER}: warning: step Review, answered independently: architect, "
        "security and pragmatist (participant) share the model family 'fake' (openai/fake): "
        f"their judgements are not independent; {FIX}"], first.out
    plan = cascade(repo, "plan", LEDGER)  # the ledger's plan says it too, once
    assert plan.returncode == 0, plan.stderr
    assert [x.strip() for x in plan.stdout.splitlines() if "warning" in x] == [
        first.out.split(f"cascade: {LEDGER}: ", 1)[1].splitlines()[0]], plan.stdout
    # a person asks security alone, on the same revision: said when the revision's run
    # began, not again
    assert cascade(repo, "comment", LEDGER, "Backups added. @security better?").returncode == 0
    test_hook.script(fake_llm, ("READY", "READY", "READY"), "better")
    git(repo, "add", LEDGER)
    second = commit(repo)
    assert second.returncode == 0 and fake_llm.calls() == 4, second.out
    assert "warning" not in second.out, second.out


def test_the_hook_is_quiet_when_the_panel_is_on_different_models(loop_repo, fake_llm):
    repo = loop_repo
    _persona(repo, "security", "openai/claude-fake")  # served by the same fake endpoint
    _persona(repo, "pragmatist", "openai/llama-fake")
    git(repo, "add", ".cascade")
    git(repo, "commit", "-qm", "each persona on a model of its own", "--no-verify")
    install_plain(repo)
    test_hook.script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    landed = commit(repo)
    assert landed.returncode == 0 and fake_llm.calls() == 3, landed.out
    assert "warning" not in landed.out, landed.out
