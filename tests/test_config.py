"""Personas, protocols and templates: bundled data loads; broken data names file and line."""
from __future__ import annotations

from pathlib import Path

import pytest

from cascade import CascadeError
from cascade.config import templates
from cascade.config.personas import load_persona, load_personas
from cascade.protocol.loader import load_protocol, load_protocol_file
from cascade.base.resources import bundled


def test_bundled_personas_are_the_seeds_eight_and_the_fixed_roles():
    registry = load_personas(None)
    voting = sorted(p.alias for p in registry if p.votes)
    background = sorted(p.alias for p in registry if not p.votes)
    assert voting == ["architect", "designer", "moderator", "perfectionist", "pragmatist",
                      "security", "skeptic", "visionary"]  # council's lenses among them
    # pcs's synthesizer; swarm's historian, contrarian and cross-domain (its moderator is
    # seed 002's); the roundtable's facilitator; the council's referee and its D/P groups
    assert background == ["contrarian", "cross-domain", "d-arbiter", "d-freethinker",
                          "facilitator", "historian", "meta-arbiter", "p-arbiter",
                          "p-freethinker", "referee", "researcher", "synthesizer",
                          "visualizer"]
    for p in registry:
        assert p.name.startswith("AI-")
        assert p.personality.strip() and p.role and p.expertise and p.concerns
        assert p.model is None


PERSONA_OK = "name: AI-Reviewer\nalias: reviewer\nrole: Reviewer\npersonality: hi\ntype: voting\n"


@pytest.mark.parametrize("text, message, line", [
    ("name: [x\n", "invalid YAML", 1),
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


@pytest.mark.parametrize("text, message, line", [
    (PERSONA_OK.replace("name: AI-Reviewer", "name: '  '"), "persona 'name' must not be blank", 1),
    (PERSONA_OK.replace("alias: reviewer", "alias: [reviewer]"), "persona 'alias' must be a string",
     2),
    (PERSONA_OK.replace("alias: reviewer", "alias: Reviewer"),
     "persona alias 'Reviewer' must be lower-case letters, digits, - or _", 2),
    (PERSONA_OK.replace("role: Reviewer", "role: 3"), "persona 'role' must be a string", 3),
    (PERSONA_OK.replace("personality: hi", "personality: {a: b}"),
     "persona 'personality' must be a string", 4),
    (PERSONA_OK.replace("type: voting", "type: 3"), "persona 'type' must be a string", 5),
    (PERSONA_OK.replace("type: voting", "type: silent"),
     "persona type must be voting or background, not 'silent'", 5),
    (PERSONA_OK + "concerns: {a: b}\n", "persona 'concerns' must be a list of strings", 6),
    (PERSONA_OK + "concerns:\n  - fine\n  - 7\n", "persona 'concerns' must be a list of strings",
     8),
    (PERSONA_OK + "model: [a]\n", "persona 'model' must be a model string or null", 6),
    (PERSONA_OK.replace("alias: reviewer", "alias: other"),
     "persona alias 'other' does not match the file name 'reviewer.yml'", 2),
])
def test_persona_error_messages(tmp_path, text, message, line):
    """Each check of a persona file, its whole message and its line."""
    path = tmp_path / "reviewer.yml"
    path.write_text(text)
    with pytest.raises(CascadeError) as info:
        load_persona(path)
    assert (info.value.message, info.value.line) == (message, line)


def test_persona_values(tmp_path):
    """What a persona file's values become: the name's spacing collapsed, empty lists and
    an empty model as none."""
    path = tmp_path / "reviewer.yml"
    path.write_text(PERSONA_OK.replace("AI-Reviewer", "AI-  Re viewer") + "expertise:\n"
                    "concerns: [a, b]\nmodel: ''\n")
    p = load_persona(path)
    assert (p.name, p.alias, p.role, p.personality, p.type) == (
        "AI- Re viewer", "reviewer", "Reviewer", "hi", "voting")
    assert (p.expertise, p.concerns, p.model, p.line, p.votes) == ((), ("a", "b"), None, 1, True)
    path.write_text(PERSONA_OK.replace("voting", "background") + "model: openai/x\n")
    p = load_persona(path)
    assert (p.model, p.votes) == ("openai/x", False)


def test_persona_name_clash(tmp_path):
    folder = tmp_path / ".cascade" / "personas"
    folder.mkdir(parents=True)
    (folder / "dup.yml").write_text(PERSONA_OK.replace("reviewer", "dup").replace(
        "AI-Reviewer", "AI-Security"))
    with pytest.raises(CascadeError, match="also used by"):
        load_personas(tmp_path)


def test_bundled_protocols():
    phased = load_protocol("phased", None)
    ids = ["initial_feedback", "detailed_review", "consensus_vote"]
    assert phased.phase_ids() == ids and phased.first_phase == "initial_feedback"
    assert [phased.votes_count_in(p) for p in ids] == [False, False, True]
    assert [s.advance for s in phased.steps.steps] == ["all_mentioned_responded", None, None]
    assert [phased.next_phase(p) for p in ids] == ["detailed_review", "consensus_vote", None]
    review = load_protocol("review", None)
    assert review.phase_ids() == ["review"] and review.votes_count_in("review")
    assert review.next_phase("review") is None


PROTOCOL_OK = """name: mine
planner: respond
roles:
  - {id: participant, from: participants}
steps:
  - id: one
    role: participant
    fields: {vote: [READY, CHANGES, REJECT]}
  - id: two
    role: participant
    confirm: true
    fields: {vote: [READY, CHANGES, REJECT]}
"""
# the phased discussion design's form: read as the steps above (the last phase listed, with
# no next: the last)
PHASES = """name: mine
phases:
  - id: one
    voting_mode: false
    next: two
  - id: two
    voting_mode: true
"""


def test_phases_as_the_design_writes_them_are_read_as_steps(tmp_path):
    (tmp_path / "mine.yml").write_text(PHASES)
    (tmp_path / "ours.yml").write_text(PROTOCOL_OK.replace("name: mine", "name: ours"))
    seed, ours = (load_protocol_file(tmp_path / f"{n}.yml") for n in ("mine", "ours"))
    assert seed.phase_ids() == ours.phase_ids() == ["one", "two"]
    assert [seed.votes_count_in(p) for p in ("one", "two")] == [False, True]
    assert seed.steps.planner == ours.steps.planner == "respond"
    assert [s.fields[0] for s in seed.steps.steps] == [s.fields[0] for s in ours.steps.steps]


@pytest.mark.parametrize("text, message, line", [
    ("name: x\nphases: []\n", "protocol 'phases' must be a non-empty list", 2),
    ("# notes\nname: x\nsteps: []\nphases: [{id: a}]\n",
     "a protocol has 'phases:' (each a phase) or 'steps:', not both", 4),
    (PHASES.replace("name: mine", "name: theirs"), "does not match the file name", 1),
    (PROTOCOL_OK.replace("name: mine", "name: theirs"), "does not match the file name", 1),
    (PROTOCOL_OK.replace("name: mine", "name: [mine]"), "protocol 'name' must be a string", 1),
    (PROTOCOL_OK + "max_rounds: 2\n", "unknown protocol key 'max_rounds'", 13),
    (PROTOCOL_OK + "  - two\n", "step must be a mapping", 13),
    (PROTOCOL_OK.replace("id: one", "id: [one]"), "step 'id' must be a string", 6),
    (PROTOCOL_OK.replace("  - id: one\n", "  - title: One\n"), "step is missing 'id'", 6),
    (PROTOCOL_OK.replace("name: mine\n", ""), "protocol is missing 'name'", 1),
    (PROTOCOL_OK.split("steps:")[0], "protocol is missing 'steps'", 1),
    ("[name, phases]\n", "protocol must be a mapping", 1),
    ("", "protocol must be a mapping", 1),
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


RESPOND_OK = """name: mine
planner: respond
roles:
  - {id: participant, from: participants}
rounds: {max: 2}
steps:
  - id: one
    role: participant
    fields: {vote: [READY, CHANGES, REJECT]}
    advance: all_mentioned_responded
  - id: two
    title: Two
    role: participant
    confirm: true
    fields: {vote: [READY, CHANGES, REJECT]}
    instructions: Vote.
"""


def test_a_respond_protocol_is_read_as_steps_that_are_its_phases(tmp_path):
    """Each step a phase, in order; confirm -- its votes count; advance -- its trigger; the
    last step: no next. One role, from the rule's participants; each step asks a vote; the
    outcome counts thresholds."""
    path = tmp_path / "mine.yml"
    path.write_text(RESPOND_OK)
    protocol = load_protocol_file(path)
    steps = protocol.steps
    assert (protocol.max_rounds, protocol.planner, steps.phased) == (2, "respond", True)
    assert protocol.phase_ids() == ["one", "two"] and steps.phased
    assert [(s.id, s.title, s.instructions, s.confirm, s.advance) for s in steps.steps] == [
        ("one", "one", "", False, "all_mentioned_responded"), ("two", "Two", "Vote.", True, None)]
    assert [protocol.next_phase(p) for p in ("one", "two")] == ["two", None]
    assert [protocol.votes_count_in(p) for p in ("one", "two")] == [False, True]
    assert [(r.id, r.source, r.fixed) for r in steps.roles] == [("participant", "participants",
                                                                 False)]
    assert {(f.name, f.choices) for s in steps.steps for f in s.fields} == {
        ("vote", ("READY", "CHANGES", "REJECT"))}
    assert steps.outcome.name == "thresholds"


def test_the_bundled_respond_protocols_are_written_as_steps():
    for name in ("review", "phased"):
        text = (Path(__file__).resolve().parent.parent / "protocols" / f"{name}.yml").read_text()
        assert "planner: respond" in text and "\nsteps:" in text and "phases:" not in text


# The bundled protocols as they were written before they were steps: a ledger the phase
# engine wrote under them must keep its meaning (its phases, their order, which take votes,
# what moves them on), so the step form must read as exactly these.
FORMER = {"review": """# One voting round per revision: what the pre-commit gate uses unless a rule names another.
name: review
title: Review
description: |
  Every participant reviews the document and votes at once. A new revision of the document
  (or a person's reply) asks the panel again.
max_rounds: 3
phases:
  - id: review
    title: Review
    instructions: |   # what each vote means is said by the step's vote (its ballot)
      Review the document from your area of expertise: what works, and what must change
      before it can be accepted.
    voting_mode: true
    auto_trigger: null
    next: null
""", "phased": """# Seed 002's phased discussion: feedback, review, then a vote.
name: phased
title: Phased discussion
description: |
  Initial feedback from every participant, a detailed review, then a consensus vote.
  Votes cast before the consensus_vote phase are advisory: they show where each participant
  stands but cannot close the discussion.
max_rounds: 3
phases:
  - id: initial_feedback
    title: Initial Feedback
    instructions: |
      Share your initial thoughts on the proposal. Focus on:
      - Overall feasibility
      - Major concerns or risks
      - Questions that need answering
    voting_mode: false
    auto_trigger: all_mentioned_responded
    next: detailed_review

  - id: detailed_review
    title: Detailed Review
    instructions: |
      Provide detailed feedback from your area of expertise.
      Raise specific concerns and suggest alternatives.
    voting_mode: false
    auto_trigger: null   # a person advances: cascade advance PATH
    next: consensus_vote

  - id: consensus_vote
    title: Consensus Vote
    instructions: |
      Cast your final vote based on the discussion.
      - READY: Approve to proceed
      - CHANGES: Needs modifications (specify what)
      - REJECT: Fundamental issues (explain why)
    voting_mode: true
    auto_trigger: null
    next: null
"""}


@pytest.mark.parametrize("name", sorted(FORMER))
def test_the_bundled_respond_protocols_read_as_they_did(tmp_path, name):
    """The former form (``phases:``, ``max_rounds``) is read as written: its phases are the
    bundled protocol's steps, meaning what they meant."""
    import yaml

    path = tmp_path / f"{name}.yml"
    path.write_text(FORMER[name])
    read_back, now = load_protocol_file(path), load_protocol(name, None)
    former = yaml.safe_load(FORMER[name])
    assert [(p["id"], p["title"], p["instructions"].strip(), p["voting_mode"], p["auto_trigger"],
             p["next"]) for p in former["phases"]] == [
        (s.id, s.title, s.instructions, now.votes_count_in(s.id), s.advance,
         now.next_phase(s.id)) for s in now.steps.steps]
    assert (now.name, now.title, now.description, now.max_rounds, now.planner) == (
        former["name"], former["title"], former["description"].strip(), former["max_rounds"],
        "respond")
    assert read_back.steps == now.steps  # one engine: the same steps, field for field
    assert (read_back.name, read_back.title, read_back.description) == (
        now.name, now.title, now.description)


@pytest.mark.parametrize("old, new, message, line", [
    ("    advance: all_mentioned_responded\n", "    advance: whenever\n",
     "step 'one': unknown advance 'whenever'", 10),
    ("    instructions: Vote.\n", "    instructions: Vote.\n    advance: consensus\n",
     "step 'two' is the last: there is no step to advance to", 6),
    ("    confirm: true\n", "    confirm: yes please\n", "step 'two': confirm must be true or false",
     14),
    ("    confirm: true\n", "    words: 80\n", "unknown step key 'words'", 14),
    ("  - id: two\n", "  - id: one\n", "duplicate step id 'one'", 11),
    ("    title: Two\n    role: participant\n", "    role: expert\n", "unknown role 'expert'",
     12),
    ("fields: {vote: [READY, CHANGES, REJECT]}\n    instructions",
     "fields: {vote: [ACCEPT, REJECT]}\n    instructions", "asks a vote: fields", 15),
    ("    fields: {vote: [READY, CHANGES, REJECT]}\n    advance",
     "    advance", "step 'one': a respond protocol's step asks a vote", 7),
    ("rounds: {max: 2}\n", "rounds: {max: 2, exit: all_accept}\n", "unknown rounds key 'exit'",
     5),
    ("rounds: {max: 2}\n", "rounds: {max: 0}\n", "rounds max must be", 5),
    ("rounds: {max: 2}\n", "rounds: {max: 2}\noutcome: all_accept\n",
     "its outcome is thresholds, not 'all_accept'", 6),
    ("rounds: {max: 2}\n", "rounds: {max: 2}\nartifacts: [synthesis]\n",
     "unknown protocol key 'artifacts'", 6),
    ("  - {id: participant, from: participants}\n", "  - {id: participant, persona: moderator}\n",
     "unknown role key 'persona'", 4),
    ("  - {id: participant, from: participants}\n",
     "  - {id: participant, from: participants}\n  - {id: judge, from: participants}\n",
     "has one role", 3),
])
def test_respond_protocol_errors(tmp_path, old, new, message, line):
    assert old in RESPOND_OK
    path = tmp_path / "mine.yml"
    path.write_text(RESPOND_OK.replace(old, new, 1))
    with pytest.raises(CascadeError) as info:
        load_protocol_file(path)
    assert message in info.value.message
    assert info.value.line == line


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
    assert templates.available("discussions", tmp_path) == ["adr", "code-review", "feature", "rfc", "topic"]


def test_bundled_folders_exist():
    for kind in ("templates", "rules", "personas", "protocols"):
        assert bundled(kind).is_dir(), kind
    assert isinstance(bundled("templates"), Path)


def _ends(protocol) -> bool:
    """Whether a loaded protocol can conclude: it has steps, rounds within 1 <= min <= max,
    and a registered exit rule and outcome rule; a protocol whose steps are phases reaches
    its last phase, and the last does not advance."""
    from cascade.protocol import registry

    steps = protocol.steps
    if steps.phased and (not steps.steps or steps.steps[-1].advance is not None
                         or steps.planner not in registry.PLANNERS):
        return False
    return (bool(steps.steps) and 1 <= steps.rounds.min <= steps.rounds.max
            and steps.rounds.exit in registry.EXITS
            and steps.outcome in registry.OUTCOMES)


BUNDLED = {"council": "steps", "pcs": "steps", "phased": "phases", "review": "phases",
           "roundtable": "steps", "swarm": "steps"}


def test_every_bundled_protocol_loads():
    found = sorted(bundled("protocols").glob("*.yml"))
    assert {p.stem for p in found} == set(BUNDLED)
    for path in found:
        protocol = load_protocol_file(path)
        assert protocol.name == path.stem
        assert ("phases" if protocol.steps.phased else "steps") == BUNDLED[path.stem]
        assert _ends(protocol), path.name


def _last_advances(protocol):
    import msgspec.structs

    *first, last = protocol.steps.steps
    return msgspec.structs.replace(protocol, steps=msgspec.structs.replace(protocol.steps, steps=(
        *first, msgspec.structs.replace(last, advance="consensus"))))


def _steps(name: str, **change):
    import msgspec.structs

    protocol = load_protocol(name, None)
    rounds = {k: v for k, v in change.items() if k in ("min", "max", "exit")}
    steps = msgspec.structs.replace(protocol.steps, rounds=msgspec.structs.replace(
        protocol.steps.rounds, **rounds), **{k: v for k, v in change.items() if k not in rounds})
    return msgspec.structs.replace(protocol, steps=steps)


@pytest.mark.parametrize("make", [
    lambda: _last_advances(load_protocol("phased", None)),  # past consensus_vote: nowhere
    lambda: _steps("pcs", exit="whenever"),
    lambda: _steps("council", outcome="coin"),
    lambda: _steps("roundtable", min=4, max=3),
    lambda: _steps("swarm", steps=()),
])
def test_a_protocol_that_cannot_end_is_told_apart(make):
    assert not _ends(make())  # the check above can fail


def test_persona_look_alike_name_is_refused_at_the_repository_file(tmp_path):
    folder = tmp_path / ".cascade" / "personas"
    folder.mkdir(parents=True)
    (folder / "dup.yml").write_text(PERSONA_OK.replace("reviewer", "dup").replace(
        "AI-Reviewer", "ai-security\u00a0"))
    with pytest.raises(CascadeError) as info:
        load_personas(tmp_path)
    assert info.value.message == ("persona name 'ai-security' is too like 'AI-Security', the "
                                  "name of the bundled persona 'security'")
    assert info.value.path.endswith("dup.yml") and info.value.line == 1


def test_persona_name_clash_between_two_repository_files_names_the_later(tmp_path):
    folder = tmp_path / ".cascade" / "personas"
    folder.mkdir(parents=True)
    for alias in ("bbb", "aaa"):
        (folder / f"{alias}.yml").write_text("\n" + PERSONA_OK.replace("reviewer", alias))
    with pytest.raises(CascadeError) as info:
        load_personas(tmp_path)
    assert info.value.message == ("persona name 'AI-Reviewer' is also used by "
                                  ".cascade/personas/aaa.yml")
    assert info.value.path.endswith("bbb.yml") and info.value.line == 2


def test_persona_in_two_files_of_one_folder(tmp_path):
    folder = tmp_path / ".cascade" / "personas"
    folder.mkdir(parents=True)
    (folder / "reviewer.yml").write_text(PERSONA_OK)
    (folder / "reviewer.yaml").write_text(PERSONA_OK.replace("AI-Reviewer", "AI-Other"))
    with pytest.raises(CascadeError) as info:
        load_personas(tmp_path)
    assert info.value.message == "persona 'reviewer' is also defined in .cascade/personas/reviewer.yaml"
    assert info.value.path.endswith("reviewer.yml")


@pytest.mark.parametrize("text, line", [
    (PERSONA_OK + "concerns:\n  - fine\n  - 3\n", 8),
    (PERSONA_OK + "concerns: [fine, {a: 1}]\n", 6),
    (PERSONA_OK.replace("name: AI-Reviewer", "name: '  '"), 1),
])
def test_persona_value_errors_name_their_line(tmp_path, text, line):
    path = tmp_path / "reviewer.yml"
    path.write_text(text)
    with pytest.raises(CascadeError) as info:
        load_persona(path)
    assert info.value.line == line


def test_yaml_lists_know_their_lines(tmp_path):
    from cascade.config.yamlio import load_yaml

    path = tmp_path / "x.yml"
    path.write_text("a:\n  - one\n  -\n    b: 2\n  - [3]\n")
    data = load_yaml(path)
    assert data == {"a": ["one", {"b": 2}, [3]]}
    assert data["a"].line == 2 and data["a"].item_lines == [2, 4, 5]
    assert data["a"][1].line == 4


def test_unknown_template_names_no_file(tmp_path):
    with pytest.raises(CascadeError) as info:
        templates.render("discussions", "nope", tmp_path, title="T")
    assert info.value.path is None
    assert info.value.message.startswith("unknown discussion template 'nope' (available: ")


def test_template_including_a_missing_one_names_the_template(tmp_path):
    folder = tmp_path / ".cascade" / "templates" / "discussions"
    folder.mkdir(parents=True)
    (folder / "mine.md.j2").write_text("# {{ title }}\n{% include 'discussions/gone.md.j2' %}\n")
    with pytest.raises(CascadeError) as info:
        templates.render("discussions", "mine", tmp_path, title="T")
    assert info.value.path.endswith("mine.md.j2")
    assert "no template 'discussions/gone.md.j2'" in info.value.message
