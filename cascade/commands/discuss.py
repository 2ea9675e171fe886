"""``cascade discuss TOPIC ...`` creates a ledger for a topic (or a document) and runs its
protocol, standalone (no gate, no commit); ``cascade run PATH`` continues any ledger where its
file ends. A step protocol runs round after round to its outcome, or until the run's budget
(``CASCADE_MAX_CALLS`` ...) or a failed persona stops it -- then ``cascade run`` resumes,
asking no one twice; a protocol whose run is one wave (its planner asks whoever is due) runs
its pending turns, as ``cascade turn`` does (``ask_wave``).

Exit codes: 0 consensus (or a phase protocol's turns all answered), 1 impasse, stopped, or a
persona failed, 2 bad input.
"""
from __future__ import annotations

import shlex
import sys
from typing import Any

from msgspec import Struct

from cascade.base.terminal import ask_line
from cascade.config.personas import load_personas
from cascade.base.errors import CascadeError, display_path
from cascade.check.governance import recorded_revision, resolve
from cascade.ledger.lock import ledger_lock
from cascade.loop.staging import writing_staged
from cascade.protocol.requests import next_wave
from cascade.protocol.about import about, answering, roster, sides_line, table_lines
from cascade.protocol.discussion import Discussion
from cascade.run.auto_invite import invite
from cascade.protocol.lens import pick_by_topic, reasons
from cascade.protocol.loader import load_protocol, role_personas
from cascade.protocol.options import Options, check_option, check_rounds, offered, specialize
from cascade.run.run_result import nothing_to_run, outcome_text
from cascade.run.protocol_run import run
from cascade.protocol.setting import setting_of
from cascade.protocol.variants import by_keyword
from cascade.base.resources import find_root
from cascade.base.safepath import refuse_links, refuse_outside
from cascade.base.text import printable
from cascade.turns.display import closing_table, failure_lines, progress_for, redaction_lines
from cascade.turns.settings import Settings


class _Chosen(Struct, frozen=True):
    """A discussion's protocol as the options given specialize it: its steps (None: a
    protocol of phases), the options, the word its strategies go by (strategy, flow), the
    debate sides given (--pro/--con) and what says the strategy was picked for them or by
    the topic's words ("": none was)."""

    proto: Any
    steps: Any
    options: Options
    kind: str | None
    sides: dict
    picked: str


def _strategy_by_sides(protocol: str, steps, sides: dict[str, list[str]],
                       chosen: dict[str, str]) -> str:
    """--pro/--con: the strategy given must have those sides; with none given, the first
    that has them is taken (put into ``chosen``). Returns what says so, or ""."""
    if not sides:
        return ""
    named = chosen.get("strategy") or chosen.get("flow")
    having = [s for s in steps.strategies if set(sides) <= set(s.sides)]
    if named and not any(s.name == named for s in having) or not having:
        flags = "/".join(f"--{k}" for k in sides)
        where = f"strategy {named!r}" if named else f"protocol {protocol!r}"
        raise CascadeError(f"{where} has no sides for {flags} (strategies with sides: "
                           + (", ".join(s.name for s in having) or "none") + ")")
    if named:
        return ""
    chosen[having[0].kind] = having[0].name
    said = f"Strategy {having[0].name}: picked by cascade for the sides given (--pro/--con)."
    print(printable(said))
    return said


def _sides_header(sides: dict[str, list[str]], participants: list[str]) -> str:
    """The ledger header's ``Sides`` (``pro: a, b; con: c``): every participant on one side."""
    placed = [a for side in sides.values() for a in side]
    twice = sorted({a for a in placed if placed.count(a) > 1})
    strangers = [a for a in placed if a not in participants]
    missing = [a for a in participants if a not in placed]
    if twice or strangers or missing:
        why = (f"{', '.join(twice)} on both sides" if twice else
               f"{', '.join(strangers)} not a participant" if strangers else
               f"no side for {', '.join(missing)}")
        raise CascadeError(f"--pro/--con: name each participant's side once ({why})")
    return "; ".join(f"{side}: {', '.join(names)}" for side, names in sides.items() if names)


def _strategy_by_topic(steps, topic: str, chosen: dict[str, str]) -> str:
    """With no --strategy, the strategy whose keywords the topic says (seed 003's original):
    put into ``chosen``; returns the sentence that says so (printed, and kept in the ledger's
    context), or ""."""
    if not steps.strategies or chosen.get("strategy") or chosen.get("flow"):
        return ""
    found = by_keyword(steps.strategies, topic)
    if found is None:
        return ""
    name, word = found
    chosen[steps.strategies[0].kind] = name
    said = (f"Strategy {name}: picked by cascade from the topic's word {word!r} "
            "(--strategy to choose another).")
    print(printable(said))
    return said


def discuss(topic: str, protocol: str, participants: list[str] | None, auto_invite: bool,
            source: str | None, rounds: int | None, auto: bool, output: str | None,
            options: dict[str, str | None],
            objective: str | None = None) -> int:  # long: the command's own options
    """``objective``: the larger goal the discussion serves, apart from its topic (the
    preset's PROPOSE task: "objective: [The larger goal this discussion serves]")."""
    root = find_root()
    if objective is not None:
        objective = " ".join(objective.split())
        if not objective:
            raise CascadeError("--objective is empty: say the larger goal the discussion "
                               "serves, or leave it out")
    if output is not None:  # the ledger, and its record and graph beside it
        refuse_outside(root, output, "the ledger")
    Settings.from_env(root)  # a bad CASCADE_* setting or providers file: an error before a write
    chosen = _options(load_protocol(protocol, root), options, rounds, topic)
    proto, steps = chosen.proto, chosen.steps
    if chosen.sides and participants is None and not auto_invite:
        participants = [a for side in chosen.sides.values() for a in side]
    if source:
        source = refuse_links(root, source, "--source")
        if not (root / source).is_file():
            raise CascadeError("no such file (--source)", root / source)
    panel = _panel(topic, chosen, participants, auto_invite, auto, root)
    if isinstance(panel, list):  # a person named another panel at the terminal
        return discuss(topic, protocol, panel, False, source, rounds, auto, output, options,
                       objective)
    participants, context = panel
    if chosen.picked:
        context = " ".join(x for x in (context, chosen.picked) if x)
    d = Discussion.create(topic, "topic", context, path=output, source=source,
                          participants=participants, protocol=proto.name,
                          setting=setting_of(root),
                          extra={**_header(chosen, participants),
                                 **({"Objective": objective} if objective else {})} or None)
    with ledger_lock(d.path, holder="cascade discuss"):
        if d.path.exists():
            raise CascadeError("already exists: continue it with cascade run", d.path)
        d.save()
        mode = steps.mode
        who = (f"{mode} mode, experts generated for the topic" if steps.generated else
               f"{mode} mode: {', '.join(r.persona for r in steps.fixed_roles)}"
               if steps.participants.max == 0 else
               f"participants: {', '.join(participants)}")
        print(printable(f"Created: {display_path(d.path)} ({proto.name}, {who})"))
        if objective:
            print(printable(f"Objective: {objective}"))
        return _run_discussion(d, auto)


def _options(proto, options: dict[str, str | None], rounds: int | None, topic: str) -> _Chosen:
    """The options given, each one the protocol has (else one line naming it), a strategy
    picked for the sides given or by the topic's words when none is named, and the
    protocol's steps as they specialize them (the header records the options)."""
    steps = proto.steps
    given = {k: v for k, v in options.items() if v is not None}
    sides = {k: list(given.pop(k)) for k in ("pro", "con") if k in given}  # type: ignore[arg-type]
    chosen: dict[str, str] = {}
    kind = steps.strategies[0].kind if steps.strategies else None
    for key in [k for k in given if k in offered(steps)]:  # the options it has
        check_option(proto.name, steps, key, given[key])
        chosen[key] = given.pop(key)  # type: ignore[assignment]
    if given:  # an option this protocol does not have
        raise CascadeError(f"protocol {proto.name!r} has no {', '.join('--' + k for k in given)}")
    said = _strategy_by_sides(proto.name, steps, sides, chosen) or _strategy_by_topic(
        steps, topic, chosen)
    picked = Options.of(rounds, **chosen)
    check_rounds(proto, picked)
    return _Chosen(proto, specialize(steps, picked), picked, kind, sides, said)


def _header(chosen: _Chosen, participants: list[str]) -> dict[str, str]:
    """The header fields that record the options the discussion runs with."""
    steps, options = chosen.steps, chosen.options
    extra = {"Mode": steps.mode} if steps.mode else {}
    if chosen.sides:
        extra["Sides"] = _sides_header(chosen.sides, participants)
    if steps.strategy and chosen.kind:
        extra[chosen.kind.title()] = steps.strategy.name
    if options.get("tier") and steps.tier:
        extra["Tier"] = steps.tier
    if options.rounds is not None:
        extra["Rounds"] = str(options.rounds)
    return extra


def _panel(topic: str, chosen: _Chosen, participants: list[str] | None, auto_invite: bool,
           auto: bool, root) -> tuple[list[str], str] | list[str]:  # long: discuss's panel
    """Who takes part, and the line the ledger says it with: generated experts (none named
    here), the mode's fixed roles, the participants given, the protocol's own panel, or a
    panel proposed for the topic (confirmed on a terminal). A list alone: a person named
    another panel at the terminal (``discuss`` starts again with it)."""
    proto, steps = chosen.proto, chosen.steps
    mode = steps.mode
    registry = load_personas(root)
    fixed = {r.persona for r in steps.fixed_roles}
    count = None if steps.shape.any_panel else steps.participants
    if steps.generated:
        if participants or auto_invite:
            raise CascadeError(f"protocol {proto.name!r} generates its experts from the topic: "
                               "drop --participants/--auto-invite (change the panel at its "
                               "confirmation: NEXT: modify ...)")
        return [], (f"The experts are generated for this topic ({mode} mode: "
                    f"{count.min}{'' if count.min == count.max else f' to {count.max}'}), "
                    "recorded below, and confirmed before round 1.")
    if count is not None and count.max == 0:  # the mode's fixed roles speak, not members
        if participants or auto_invite:
            raise CascadeError(f"protocol {proto.name!r} in {mode} mode has no participants "
                               "(its roles speak): drop --participants/--auto-invite")
        return [], (f"{mode} mode: " + ", ".join(f"@{r.persona}" for r in steps.fixed_roles)
                    + " speak.")
    if participants:
        for alias in participants:
            registry.require(alias)
        if taken := sorted(set(participants) & fixed):
            raise CascadeError(f"{', '.join(taken)} has a fixed role in {proto.name} and never "
                               "also deliberates: choose other participants")
        if count and not count.min <= len(participants) <= count.max:
            raise CascadeError(f"protocol {proto.name!r} takes {count.min} to {count.max} "
                               f"participants, not {len(participants)}")
        return participants, ""
    return _invited(topic, chosen, registry, fixed, auto_invite, auto, root)


def _invited(topic: str, chosen: _Chosen, registry, fixed: set[str], auto_invite: bool,
             auto: bool, root) -> tuple[list[str], str] | list[str]:  # long: _panel's
    """A panel proposed: the protocol's own where it has one (unless --auto-invite), else
    picked for the topic; shown and confirmed on a terminal (a person may name another:
    returned alone), else taken automatically, said so."""
    proto, steps = chosen.proto, chosen.steps
    count = steps.participants
    if count.personas and not auto_invite:
        recommended = list(count.personas)  # the protocol's own panel (council's lenses)
        for alias in recommended:
            registry.require(alias)
        how = "the protocol's own panel, which --participants replaces"
    elif not steps.shape.any_panel:  # a panel of its own: invited by its roles' lenses
        recommended, how, notes = invite(topic, registry, steps, Settings.from_env(root), root)
        for note in notes:
            print(printable(f"note: {note}"))
    else:
        picks = pick_by_topic(topic, registry, 3, fixed | role_personas(root))
        recommended = [alias for alias, _ in picks]
        how = f"picked by topic words: {reasons(picks)}"
    if not auto_invite:
        asked = not auto and sys.stdin.isatty() and sys.stdout.isatty()  # at the terminal
        if asked:
            print(printable(f"Proposed panel ({how}):"))  # who, which role and model, and why
            for line in table_lines(roster(steps, recommended, registry, {})):
                print(printable(f"  {line}"))
            print("Next time, pass --auto-invite to have the participants picked by topic "
                  "without this question.")
            shown = ", ".join(recommended)
            answer = ask_line(f"Participants for {proto.name}: {shown}. Enter to start, or type "
                              f"aliases (a,b): [{shown}] ").strip()
            named = [a.strip().lstrip("@") for a in answer.split(",") if a.strip()]
            if answer and named != recommended:
                return named
        how += ("; confirmed" if asked else "; taken automatically (--auto or no terminal; "
                "confirm on a terminal, or pass --auto-invite)")
    print(printable(f"Participants: {how}"))
    return recommended, f"Participants {', '.join('@' + a for a in recommended)}: {how}."


def run_(path: str, auto: bool) -> int:
    with writing_staged(path, "cascade run") as (d, written):
        d.current_phase  # an unknown phase is a configuration error, before any call
        code = _run_discussion(d, auto, resolve(path)[2])
    written.say()
    return code


def _run_discussion(d, auto: bool, rule=None) -> int:
    if d.protocol.steps.shape.one_wave:
        return ask_wave(d, str(d.path), rule=rule)
    settings = Settings.from_env(d.root)
    shown = display_path(d.path)
    state = d.state
    if (done := nothing_to_run(state)) is not None:
        print(printable(f"{shown}: {done}: nothing to run"))
        return 0 if state.conclusion.outcome == "READY" else 1

    def on_table(step, round_, text) -> None:
        asked = "".join(f"{line}\n" for line in answering(d.state.run, step, round_))
        print(printable(f"\n{asked}{step.title}, round {round_}:\n{text}\n"), flush=True)

    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    print(printable(f"{shown}: {d.protocol.title}, round {state.run.round}"), flush=True)
    if sides := sides_line(state.run):
        print(printable(sides), flush=True)
    told = about(state.run, d.personas) if not interactive else None  # a terminal asks
    for line in told.unclear if told is not None else []:
        print(printable(f"note: {line}"), flush=True)
    result = run(d, settings, progress_for(causes=False), on_table=on_table,
                 source_data=recorded_revision(d), rule=rule,
                 auto=auto or bool(rule and rule.auto) or not interactive,
                 ask=_asker(d) if interactive else None)
    for note in result.notes:
        print(printable(f"note: {note}"))
    for line in redaction_lines(result.outcomes):
        print(line)
    if result.outcomes:
        print(f"\n{closing_table(result.outcomes)}")
    print(printable(f"\n{d.protocol.title}: {outcome_text(result, topic=not d.source)}"
                    + (f"; record: {result.record}" if result.record else "")
                    + (f"; beside it: {', '.join(result.artifacts)}"
                       if result.record and result.artifacts else "")))
    for line in failure_lines(result.outcomes):
        print(line, file=sys.stderr)
    if result.outcome is None and result.stopped:
        print(printable(f"cascade: {shown}: stopped in round {result.round}; continue with "
                        f"cascade run {shlex.quote(shown)} (no one is asked twice)"),
              file=sys.stderr)
    return 0 if result.outcome == "READY" else 1


def _asker(d):
    """A decision point asked on the terminal: what it is about, then the question, again
    (with one line naming the choices) until the answer is one of them; Enter takes the
    recommended."""
    def ask(step, run_) -> str:
        for line in about(run_, d.personas).lines():  # what the question is about, first
            print(printable(line), flush=True)
        while True:
            answer = ask_line(f"{step.title} [{'/'.join(step.choices)}, Enter: "
                           f"{step.recommended}] ").strip()
            if answer.lower().startswith("next:"):  # as it would be written in the ledger
                answer = answer[5:].strip()
            choice, _, text = answer.partition(" ")  # the choice, and the person's own words
            if not answer:
                return step.recommended
            if choice.lower() in step.choices:
                return f"{choice.lower()} {text.strip()}".strip()
            print(printable(f"not understood: {choice!r} -- answer with one of the choices: "
                            f"{', '.join(step.choices)}"), flush=True)
    return ask


def ask_wave(d, path: str, pending=None, rule=None) -> int:
    """Ask ``pending`` (None: whoever the ledger says is pending) on ``d``, with the models
    its ``rule`` gives, as the hook asks them; 1 on a failure."""
    aliases = [r.alias for r in next_wave(d)] if pending is None else \
        [p.persona.alias for p in pending]
    if not aliases:
        print(f"{display_path(d.path)}: nobody is pending (no new input since the panel last "
              f"spoke); name personas to ask anyway: cascade turn {shlex.quote(path)} @alias")
        return 0
    settings = Settings.from_env(d.root)
    names = ", ".join(d.personas.get(a).name for a in aliases)
    print(printable(f"{display_path(d.path)}: asking {names}"), flush=True)
    done = run(d, settings, progress_for(causes=False), pending=pending,  # causes: once, below
               source_data=recorded_revision(d), rule=rule)
    for line in redaction_lines(done.outcomes):
        print(line)
    print(f"\n{closing_table(done.outcomes)}")
    if done.advanced:
        print(f"\nAdvanced to phase: {done.advanced}")
    result = d.consensus_result
    reached = f"reached, {result.outcome}" if result.reached else "not reached"
    print(printable(f"\nConsensus: {reached} ({result.reason})"))
    failures = failure_lines(done.outcomes)
    for line in failures:
        print(line, file=sys.stderr)
    return 1 if failures else 0
