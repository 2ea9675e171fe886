"""Behaviours registered with parameters (cascade.protocol.behaviours): a protocol names one
as ``name`` or ``{name: {param: value}}``, its parameters checked when it loads (one line
naming file and line); an installed package adds its own through the ``cascade.behaviours``
entry point group -- a real distribution on the import path, read by importlib.metadata --
and the outcome it gives is explained by that rule alone. A distribution inside the
repository under review is never loaded."""
from __future__ import annotations

import json
import sys

import pytest

from cascade import Discussion
from cascade.protocol import behaviours, registry
from cascade.protocol.runstate import Draft, Turn

TOPIC = "Ship the new importer this week?"
LEDGER = "discussions/ship-the-new-importer-this-week.discussion.md"
POLL = """\
name: poll
title: Poll
participants: {min: 2, max: 3, default: 2}
roles:
  - {id: member, title: Member, from: participants}
rounds: {max: 1, exit: all_accept}
outcome: {quorum: {field: stance, value: go, share: 0.5}}
steps:
  - id: stance
    title: Stance
    role: member
    visibility: blind
    words: 40
    fields: {stance: [go, wait]}
    instructions: Say go or wait in "stance", and why in "comment".
"""
PLUGIN = '''\
"""A package's outcome rule: READY when enough members gave a field one value."""
from cascade.protocol.behaviours import Param, Ruling
from cascade.protocol.registry import OUTCOMES


def _share(value):
    return None if 0 < value <= 1 else "must be above 0 and at most 1"


@OUTCOMES.register("quorum", params={"field": Param((str,)), "value": Param((str,)),
                                     "share": Param((int, float), 0.5, check=_share)})
def quorum(run, round_, exit, field, value, share=0.5):
    said = [t.alias for t in run.turns if t.round == round_ and t.alias in run.members
            and t.fields.get(field) == value]
    n = len(run.members)
    enough = bool(n) and len(said) / n >= share
    why = f"{len(said)} of {n} members said {field} {value} in round {round_}"
    return Ruling("READY" if enough else "CHANGES", why if enough else "only " + why)
'''


def distribution(where, name: str = "cascade-quorum", module: str = "cascade_quorum"):
    """A tiny installed distribution in ``where``: its module and its dist-info with an
    entry point in the group."""
    where.mkdir(parents=True, exist_ok=True)
    (where / f"{module}.py").write_text(PLUGIN)
    info = where / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[cascade.behaviours]\nquorum = {module}\n")
    return where


@pytest.fixture
def plugins(monkeypatch):
    """Read the entry points afresh; forget what a test's package registered."""
    behaviours.reload_plugins()
    yield
    registry.OUTCOMES.unregister("quorum")
    sys.modules.pop("cascade_quorum", None)
    behaviours.reload_plugins()


@pytest.fixture
def endpoint(fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    stances = {"AI-Architect": "go", "AI-Security": "wait"}

    def reply(request) -> str:
        name = next(n for n in stances if f"Reply as {n} " in request.text)
        return json.dumps({"comment": f"{name} weighs the risk.", "stance": stances[name]})

    fake_llm.default(reply)
    return stances


def protocol(repo, text: str = POLL, name: str = "poll") -> None:
    (repo / ".cascade/protocols").mkdir(parents=True, exist_ok=True)
    (repo / f".cascade/protocols/{name}.yml").write_text(text)


def test_a_package_s_outcome_rule_runs_and_explains_itself(repo, cli, plugins, endpoint,
                                                             tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(distribution(tmp_path / "site")))
    protocol(repo)
    code, out, err = cli("discuss", TOPIC, "--protocol", "poll", "--participants",
                         "architect,security")
    assert code == 0, out + err
    why = "1 of 2 members said stance go in round 1"
    assert f"Poll: answered -- {why}" in out
    assert "closing vote" not in out  # no closing vote was held: none is claimed
    d = Discussion.load(repo / LEDGER)
    assert d.state.result.reason == why
    code, out, _ = cli("status", LEDGER)
    assert f"Consensus: reached, READY ({why})" in out and "closing vote" not in out
    record = (repo / LEDGER.replace(".discussion.md", ".record.md")).read_text()
    assert f"**Outcome**: READY: {why}" in record
    # its parameters are checked like any other
    protocol(repo, POLL.replace("share: 0.5", "share: 2").replace("name: poll", "name: poll2"),
             "poll2")
    code, _, err = cli("plan", "--protocol", "poll2", "--participants", "architect,security")
    assert code == 2 and err.strip().endswith(
        ".cascade/protocols/poll2.yml:7: outcome rule 'quorum': parameter 'share' must be "
        "above 0 and at most 1")


def test_a_package_inside_the_repository_is_never_loaded(repo, cli, plugins, endpoint,
                                                         monkeypatch):
    monkeypatch.syspath_prepend(str(distribution(repo / "vendor")))
    monkeypatch.syspath_prepend(str(repo))
    protocol(repo)
    code, out, err = cli("discuss", TOPIC, "--protocol", "poll", "--participants",
                         "architect,security")
    assert code == 2
    assert ".cascade/protocols/poll.yml:7: unknown outcome rule 'quorum' (known: " in err
    assert "Traceback" not in err
    assert "cascade_quorum" not in sys.modules  # its code never ran


@pytest.mark.parametrize("exit_, line, message", [
    ("{converged: {field: estimate}}", 2,
     "exit rule 'converged': parameter 'within' is required (the largest spread"),
    ("\n    converged:\n      field: estimate\n      within: -1", 5,
     "exit rule 'converged': parameter 'within' must be a number of at least 0"),
    ("{converged: {field: estimate, within: 1, spread: 2}}", 2,
     "exit rule 'converged': unknown parameter 'spread' (it takes: field, within, relative, "
     "quorum)"),
    ("{converged: {field: 3, within: 1}}", 2,
     "exit rule 'converged': parameter 'field' must be a word"),
    ("{converged: {field: estimate, within: true}}", 2,
     "exit rule 'converged': parameter 'within' must be a number"),
    ("{converged: 3}", 2, "exit rule 'converged': its parameters are a mapping"),
    ("{converged: {}, all_accept: {}}", 2, "rounds exit: name one exit rule"),
    ("nope", 2, "unknown exit rule 'nope' (known: all_accept, converged, facilitated, "),
])
def test_parameters_are_checked_when_the_protocol_loads(repo, cli, exit_, line, message):
    text = POLL.replace("rounds: {max: 1, exit: all_accept}", "rounds:\n  exit: " + exit_)
    text = text.replace("outcome: {quorum: {field: stance, value: go, share: 0.5}}\n", "")
    text = "description: one field\n" + text.replace("name: poll\n", "")
    protocol(repo, "name: bad\n" + text, "bad")
    code, out, err = cli("plan", "--protocol", "bad", "--participants", "architect,security")
    assert code == 2, out
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f".cascade/protocols/bad.yml:{line + 6}: {message}" in err


def test_a_rule_s_parameters_reach_it():
    ref = registry.EXITS.ref({"converged": {"field": "estimate", "within": 0.1,
                                            "relative": True}}, None, None)
    assert (ref.name, str(ref)) == ("converged", "converged")
    assert dict(ref.params) == {"field": "estimate", "within": 0.1, "relative": True}
    run = Draft(None, ["a", "b"], {})  # type: ignore[arg-type]
    run.turns = [Turn(alias, alias, "estimate", 1, f"r1-msg-00{n}", n, "", {"estimate": v}, [],
                      n, None) for n, (alias, v) in enumerate((("a", "10"), ("b", "10.5")), 1)]
    assert registry.EXITS.call(ref, run, 1).ends  # 5% of the median: within 10%
    strict = registry.EXITS.ref({"converged": {"field": "estimate", "within": 0.01,
                                               "relative": True}}, None, None)
    exit_ = registry.EXITS.call(strict, run, 1)
    assert not exit_.ends and "spread 5%, more than 1%" in exit_.why


@pytest.mark.parametrize("reads, message", [
    ("{position: opinion}", "step 'stance': reads names 'opinion', not one of its fields "
                            "(stance)"),
    ("{mood: stance}", "step 'stance': reads maps what the engine reads (position, diverged, "),
])
def test_a_step_names_the_fields_the_engine_reads(repo, cli, reads, message):
    text = POLL.replace("outcome: {quorum: {field: stance, value: go, share: 0.5}}\n", "")
    protocol(repo, text.replace("    instructions:", f"    reads: {reads}\n    instructions:"))
    code, _, err = cli("plan", "--protocol", "poll", "--participants", "architect,security")
    assert code == 2 and f".cascade/protocols/poll.yml:14: {message}" in err
