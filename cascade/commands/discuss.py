"""``cascade discuss TOPIC ...`` creates a ledger for a topic (or a document) and runs its
protocol; ``cascade run PATH`` continues any ledger where its file ends.

Standalone, as the source designs run: no gate, no commit. A step protocol (``pcs``) runs
round after round to its outcome, or until the run's budget (``CASCADE_MAX_CALLS`` ...)
or a failed persona stops it -- then ``cascade run`` resumes, asking no one twice. A phase
protocol (``review``, ``phased``) runs its pending turns, as ``cascade turn`` does.

Exit codes: 0 consensus (or a phase protocol's turns all answered), 1 impasse, stopped, or a
persona failed, 2 bad input.
"""
from __future__ import annotations

import sys

from cascade.errors import CascadeError, display_path
from cascade.loop.governance import resolve, writing
from cascade.loop.lock import ledger_lock
from cascade.protocol.about import about, answering, roster, sides_line, table_lines
from cascade.protocol.panel import by_topic
from cascade.protocol.result import outcome_text
from cascade.text import printable


def _asks(auto: bool) -> bool:
    """Whether a decision point is asked inline (a terminal, without --auto)."""
    return not auto and sys.stdin.isatty() and sys.stdout.isatty()


def _confirm(question: str, recommended: str, auto: bool) -> str:
    """A decision point: inline on a terminal, else (or with --auto) the recommended answer,
    which the caller records as taken automatically."""
    if not _asks(auto):
        return recommended
    answer = input(f"{question} [{recommended}] ").strip()
    return answer or recommended


def discuss(topic: str, protocol: str, participants: list[str] | None, auto_invite: bool,
            source: str | None, rounds: int | None, auto: bool, output: str | None,
            options: dict[str, str | None]) -> int:
    from cascade.config.personas import load_personas
    from cascade.protocol.discussion import Discussion
    from cascade.protocol.loader import load_protocol
    from cascade.resources import find_root
    from cascade.safepath import refuse_links, refuse_outside
    from cascade.turns.settings import Settings

    root = find_root()
    if output is not None:  # the ledger, and its record and graph beside it
        refuse_outside(root, output, "the ledger")
    Settings.from_env()  # a bad CASCADE_* setting is an error before anything is written
    proto = load_protocol(protocol, root)
    steps = proto.stepped
    given = {k: v for k, v in options.items() if v is not None}
    from cascade.protocol.spec import Options, check_option, most_rounds, option_names, specialize

    chosen: dict[str, str] = {}
    kind = steps.strategies[0].kind if steps is not None and steps.strategies else None
    for key in [k for k in given if option_names(steps, k)]:  # the options it has
        check_option(proto.name, steps, key, given[key])
        chosen[key] = given.pop(key)  # type: ignore[assignment]
    if given:  # an option this protocol does not have
        raise CascadeError(f"protocol {proto.name!r} has no {', '.join('--' + k for k in given)}")
    options = Options(chosen.get("mode"), chosen.get("strategy") or chosen.get("flow"),
                      chosen.get("tier"), rounds)
    if rounds is not None:
        top = most_rounds(proto.stepped, options) if steps else proto.max_rounds
        if not 1 <= rounds <= top:
            raise CascadeError(f"--rounds must be between 1 and {top} for protocol {proto.name!r}")
    if steps is not None:  # as the discussion will run them (the header records the options)
        steps = specialize(steps, options)
    mode = steps.mode if steps is not None else None
    strategy = steps.strategy.name if steps is not None and steps.strategy else None
    tier = steps.tier if steps is not None and options.tier else None
    if source:
        source = refuse_links(root, source, "--source")
        if not (root / source).is_file():
            raise CascadeError("no such file (--source)", root / source)
    registry = load_personas(root)
    fixed = {r.persona for r in steps.fixed_roles} if steps else set()
    count = steps.participants if steps else None
    context = ""
    if steps is not None and steps.generated:
        if participants or auto_invite:
            raise CascadeError(f"protocol {proto.name!r} generates its experts from the topic: "
                               "drop --participants/--auto-invite (change the panel at its "
                               "confirmation: NEXT: modify ...)")
        participants = []
        context = (f"The experts are generated for this topic ({mode} mode: "
                   f"{count.min}{'' if count.min == count.max else f' to {count.max}'}), "
                   "recorded below, and confirmed before round 1.")
    elif count is not None and count.max == 0:  # the mode's fixed roles speak, not members
        if participants or auto_invite:
            raise CascadeError(f"protocol {proto.name!r} in {mode} mode has no participants "
                               "(its roles speak): drop --participants/--auto-invite")
        participants = []
        context = (f"{mode} mode: " + ", ".join(f"@{r.persona}" for r in steps.fixed_roles)
                   + " speak.")
    elif participants:
        for alias in participants:
            registry.require(alias)
        taken = sorted(set(participants) & fixed)
        if taken:
            raise CascadeError(f"{', '.join(taken)} has a fixed role in {proto.name} and never "
                               "also deliberates: choose other participants")
        if count and not count.min <= len(participants) <= count.max:
            raise CascadeError(f"protocol {proto.name!r} takes {count.min} to {count.max} "
                               f"participants, not {len(participants)}")
    else:
        from cascade.protocol.invite import invite

        if count is not None and count.personas and not auto_invite:
            recommended = list(count.personas)  # the protocol's own panel (council's lenses)
            for alias in recommended:
                registry.require(alias)
            how = "the protocol's own panel, which --participants replaces"
        elif steps is not None:
            recommended, how, notes = invite(topic, registry, steps, Settings.from_env(), root)
            for note in notes:
                print(printable(f"note: {note}"))
        else:
            recommended, how = by_topic(topic, registry, 3, fixed), "picked by topic words"
        if not auto_invite:
            if _asks(auto):  # who, in which role, on which model, and why: before it asks
                print(printable(f"Proposed panel ({how}):"))
                for line in table_lines(roster(steps, recommended, registry, {})):
                    print(printable(f"  {line}"))
            answer = _confirm(f"Participants for {proto.name}: {', '.join(recommended)}. "
                              "Enter to start, or type aliases (a,b):",
                              ", ".join(recommended), auto)
            chosen = [a.strip().lstrip("@") for a in answer.split(",") if a.strip()]
            if chosen != recommended:
                return discuss(topic, protocol, chosen, False, source, rounds, auto, output,
                               options)
            how += ("; taken automatically (--auto or no terminal; confirm on a terminal, "
                    "or pass --auto-invite)" if auto or not sys.stdin.isatty() else
                    "; confirmed")
        participants = recommended
        context = f"Participants {', '.join('@' + a for a in recommended)}: {how}."
    extra = {"Mode": mode} if mode else {}
    if strategy:
        extra[kind.title()] = strategy
    if tier:
        extra["Tier"] = tier
    if rounds is not None:
        extra["Rounds"] = str(rounds)
    d = Discussion.create(topic, "topic", context, path=output, source=source,
                          participants=participants, protocol=proto.name, root=root,
                          extra=extra or None)
    with ledger_lock(d.path, holder="cascade discuss"):
        if d.path.exists():
            raise CascadeError("already exists: continue it with cascade run", d.path)
        d.save()
        who = (f"{mode} mode, experts generated for the topic" if steps is not None and
               steps.generated else
               f"{mode} mode: {', '.join(r.persona for r in steps.fixed_roles)}"
               if count is not None and count.max == 0 else
               f"participants: {', '.join(participants)}")
        print(printable(f"Created: {display_path(d.path)} ({proto.name}, {who})"))
        return _run_discussion(d, auto)


def run_(path: str, auto: bool) -> int:
    with writing(path, "cascade run") as d:
        d.current_phase  # an unknown phase is a configuration error, before any call
        return _run_discussion(d, auto, resolve(path)[2])


def _run_discussion(d, auto: bool, rule=None) -> int:
    from cascade.turns.display import closing_table, failure_lines, progress_for, redaction_lines
    from cascade.turns.settings import Settings

    if d.protocol.stepped is None:
        from cascade.commands.wave import ask_wave

        return ask_wave(d, str(d.path))
    from cascade.protocol.run import run

    settings = Settings.from_env()
    shown = display_path(d.path)
    state = d.state
    if state.run.outcome is not None and state.status != "OPEN":
        print(printable(f"{shown}: concluded ({state.run.outcome} in round {state.run.round}): "
                        "nothing to run"))
        return 0 if state.run.outcome == "READY" else 1

    def on_table(step, round_, text) -> None:
        asked = "".join(f"{line}\n" for line in answering(d.state.run, step, round_))
        print(printable(f"\n{asked}{step.title}, round {round_}:\n{text}\n"), flush=True)

    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    print(printable(f"{shown}: {d.protocol.title}, round {state.run.round}"), flush=True)
    sides = sides_line(state.run)
    if sides:
        print(printable(sides), flush=True)
    told = about(state.run, d.personas) if not interactive else None  # a terminal asks
    for line in told.unclear if told is not None else []:
        print(printable(f"note: {line}"), flush=True)
    result = run(d, settings, progress_for(causes=False), on_table=on_table,
                 source_data=_recorded(d), rule_model=rule.model if rule else None,
                 rule_models=rule.models if rule else None,
                 auto=auto or bool(rule and rule.auto) or not interactive,
                 ask=_asker(d) if interactive else None)
    for note in result.notes:
        print(printable(f"note: {note}"))
    for line in redaction_lines(result.outcomes):
        print(line)
    if result.outcomes:
        print()
        print(closing_table(result.outcomes))
    print(printable(f"\n{d.protocol.title}: {outcome_text(result, topic=not d.source)}"
                    + (f"; record: {result.record}" if result.record else "")))
    failures = failure_lines(result.outcomes)
    for line in failures:
        print(line, file=sys.stderr)
    if result.outcome is None and result.stopped:
        import shlex

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
            answer = input(f"{step.title} [{'/'.join(step.choices)}, Enter: "
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


def _recorded(d) -> bytes | None:
    from cascade.loop.governance import recorded_revision

    return recorded_revision(d)
