"""``cascade plan (PATH | --protocol P [--participants a,b])``: the dry run, with no model
call -- roles and the personas and models that fill them, the steps of a round, the most
calls a run can make and the prompt budget; for a ledger, also where it stands and what the
next wave asks."""
from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from msgspec import Struct

from cascade.commands.explain import asks_per_turn
from cascade.config.personas import load_personas
from cascade.base.errors import CascadeError, display_path
from cascade.check.governance import open_discussion, resolve
from cascade.protocol.about import offers
from cascade.protocol.registry import on_topic
from cascade.run.reply_blocks import reply_budget
from cascade.protocol.engine import call_counts, members_of
from cascade.protocol.loader import load_protocol
from cascade.protocol.options import Options, check_option, check_rounds, describe, specialize
from cascade.protocol.visibility import VISIBILITIES
from cascade.protocol.requests import plan as next_wave
from cascade.base.resources import find_root
from cascade.base.text import printable
from cascade.turns.independence import clashes, refusal
from cascade.turns.settings import Settings
from cascade.turns.tiers import fallback_chain, first_model


# a member not named yet: the model comes from the rule and the environment
_NO_OWN_MODEL = SimpleNamespace(model=None, provider_hint=None)


class _Subject(Struct, frozen=True):
    """What is planned: a protocol, the personas that can fill it, and the ledger that runs
    it (with its rule's models) when a PATH was given."""
    proto: Any
    registry: Any
    participants: list[str] | None
    discussion: Any = None
    rule_model: str | None = None
    rule_models: Any = None
    rule: Any = None


def plan(path: str | None, protocol: str | None, participants: list[str] | None,
         options: dict[str, str | None] | None = None, rounds: int | None = None) -> int:
    """The plan of a ledger (PATH) or of a protocol (``protocol``), for the ``options`` given
    (option -> name: ``{"mode": "deep"}``) and at most ``rounds`` rounds (``--rounds N``, as
    ``discuss`` takes it; a ledger runs the rounds its header records)."""
    if (path is None) == (protocol is None):
        raise CascadeError("give a ledger PATH or --protocol P (not both)")
    if path is not None and rounds is not None:
        raise CascadeError("--rounds goes with --protocol P: a ledger runs the rounds its "
                           "header records")
    subject = _subject(path, protocol, participants)
    settings = Settings.from_env(find_root())
    proto = subject.proto
    out = [f"Protocol {proto.name} ({proto.title})"]
    steps = _specialize(subject, options or {}, out, rounds)
    rule = subject.rule
    forbidden = rule is not None and rule.distinct_models
    members, fixed = _members(subject, steps)
    found = clashes(steps, members, fixed, _first_model(subject, settings))
    # roles meant to judge independently on one model family (cascade.turns.independence): a
    # warning says what to do; an error is followed by the refusal, which says it
    clash_lines = [f"  error: {c.line()}" if forbidden else f"  warning: {c.warning()}"
                   for c in found]
    if steps.shape.one_wave:  # one wave of whoever is due, per run
        out.append(f"  phases: {' -> '.join(proto.phase_ids())}; one wave of pending turns "
                   "per run (cascade turn)")
        given = subject.participants or []
        out.append(f"  participants: {', '.join(given) or '(the rule decides)'}")
        named: list[str] = []
        if given:
            out += _roles(steps, members, fixed, "", _namer(subject, settings, named))
        out += clash_lines + _declared(named, settings)
    else:
        out += _stepped(subject, steps, settings, (members, fixed), clash_lines)
    print(printable("\n".join(out)))
    if forbidden and found:  # the hook refuses to run it: a configuration error
        raise CascadeError(refusal(rule, found), rule.file, rule.line_of("distinct_models"))
    return 0


def _subject(path: str | None, protocol: str | None,
             participants: list[str] | None) -> _Subject:
    """The ledger at PATH (read under its rule), or the protocol named with --protocol."""
    if path is None:
        root = find_root()
        proto = load_protocol(protocol, root)  # type: ignore[arg-type]
        return _Subject(proto, load_personas(root), participants)
    d = open_discussion(path)
    rule = resolve(path)[2]
    return _Subject(d.protocol, d.personas, list(d.participants), d,
                    rule.model if rule is not None else None,
                    rule.models if rule is not None else None, rule)


def _specialize(subject: _Subject, options: dict[str, str | None], out: list[str],
                rounds: int | None = None):
    """Check the options given (and the rounds asked for), describe the ones the protocol
    offers (into ``out``), and return its steps for the options chosen -- a ledger's own, as
    the discussion runs them."""
    proto, base = subject.proto, subject.proto.steps
    given = {k: v for k, v in options.items() if v is not None}
    for option, name in given.items():
        check_option(proto.name, base, option, name)
    d = subject.discussion
    run = d.state.run if d is not None else None
    # a ledger: the options it records (a tier given: the models that tier would take)
    picked = (Options.of(rounds, **given) if run is None else
              Options.running(run.steps, **{k: v for k, v in given.items() if k == "tier"}))
    check_rounds(proto, picked)
    steps = specialize(base, picked)
    out += _options(base, steps)
    return run.steps if run is not None else steps  # a ledger's rounds too


def _options(base, steps) -> list[str]:
    """The modes, strategies (or flows) and tiers the protocol offers, then one line for the
    ones this plan is for (none for a protocol without any)."""
    out: list[str] = []
    chosen: list[str] = []  # mode, flow or strategy, tier
    tiers = ""
    if base.modes:
        word = "experts" if base.generated else "participants"
        for m in base.modes:
            c = m.experts or base.participants
            count = ("no members" if c.max == 0 else f"{c.min} {word}" if c.min == c.max
                     else f"{c.min}-{c.max} {word}")
            out.append(f"  mode {m.name}{' (default)' if m.name == base.default_mode else ''}: "
                       f"{count}; fixed roles {', '.join(m.roles)}; rounds "
                       f"{m.rounds[0]} to {m.rounds[1]}"
                       + "".join(f"; {a} spoken by {b}" for a, b in m.stand_in))
        chosen.append(f"mode {steps.mode}")
    if base.strategies:
        for x in base.strategies:
            default = " (default)" if x.name == base.default_strategy else ""
            out.append(f"  {x.kind} {x.name}{default}: {' -> '.join(p.title for p in x.phases)}"
                       + ("; sequential" if x.participation == "sequential" else "")
                       + (f"; sides {', '.join(x.sides)}" if x.sides else "")
                       + (f"; outcome {x.outcome}" if x.outcome else ""))
        if any(s.role == steps.member_role.id for s in steps.round_steps):
            chosen.append(f"{steps.strategy.kind} {steps.strategy.name}")  # members speak
    if base.tiers:
        strong = [r for r in steps.strong_roles() or ()
                  if any(r in s.speaking for s in steps.all_steps)]  # of the roles that speak
        chosen.append(f"tier {steps.tier}")
        tiers = (f" the strong model for {', '.join(strong) or 'no role'} (tiers: "
                 + "; ".join(f"{n}: {', '.join(r) or 'none'}" for n, r in steps.tiers) + ")")
    if chosen:
        line = ", ".join(chosen) + ":" + tiers
        out.append(line[:1].upper() + line[1:])
    return out


def _stepped(subject: _Subject, steps, settings: Settings, panel: tuple[list[str], dict],
             clash_lines: list[str]) -> list[str]:
    """The plan of a step protocol (``panel``: its members and fixed roles' personas): rounds
    and outcome, roles and their models, the steps, the calls it can make, the prompt budget,
    and where a ledger stands."""
    members, fixed = panel
    unnamed = _panel(subject, steps)[1]
    r = steps.rounds
    out = [(f"  rounds: {r.min} to {r.max}; a round ends the discussion by rule "
            f"{describe(r.exit)}; the next round starts from a summary of at most {r.carry} "
            "characters"),
           f"  outcome: by rule {describe(steps.outcome)}"
           + (f"; not READY: step {r.on_impasse!r} first" if r.on_impasse else ""),
           "Roles:"]
    named: list[str] = []
    out += _roles(steps, members, fixed, unnamed, _namer(subject, settings, named))
    out += _declared(named, settings) + clash_lines
    if steps.strategy is not None and any(p.words for p in steps.strategy.phases) and any(
            s.role == steps.member_role.id for s in steps.round_steps):
        out.append("Word budgets (and max tokens) by phase: " + "; ".join(
            f"{p.title} {p.words[0]}-{p.words[1]} ({reply_budget(p.words[1])})"
            for p in steps.strategy.phases if p.words))
    out += _listing("Setup (once, before round 1):", steps.setup)
    out += _listing("Steps of a round:", steps.round_steps)
    out += _listing("After the rounds:", steps.after)
    if on_topic(steps) is not steps:  # the closing vote: a document's discussion only
        out.append("  (a topic's discussion has no document to vote on: no closing vote, "
                   "its synthesis is the outcome)")
    out += _listing("When a person pauses (then the run stops):", steps.pause)
    out += _listing("On resuming after a pause (first in the next round):", steps.resume)
    if r.on_impasse:
        last = steps.step(r.on_impasse)
        out.append(f"  after the last round without consensus: {last.title} ({last.role})")
    out += _calls(subject.proto, steps, len(members))
    prompt = settings.source_tokens + settings.context_tokens
    out.append(f"Prompt budget: about {prompt:,} tokens a call (document "
               f"{settings.source_tokens:,} + discussion {settings.context_tokens:,}), replies "
               f"{settings.reply_tokens:,} tokens")
    if subject.discussion is not None:
        out += _now(subject.discussion)
    return out


def _panel(subject: _Subject, steps) -> tuple[list[str], str]:
    """The members' aliases, and, when no one knows their names yet, who they will be."""
    d, participants = subject.discussion, subject.participants
    if d is not None and steps.generated and d.state.run.setup.panel is not None:
        return d.state.run.setup.panel.aliases, ""
    if not steps.generated and not participants and steps.participants.personas:
        return list(steps.participants.personas), ""  # the protocol's own panel
    if steps.generated or not participants:
        word = "expert" if steps.generated else "participant"
        names = [f"<{word} {i + 1}>" for i in range(steps.participants.default)]
        return names, (f"{len(names)} {word}s, "
                       + ("generated from the topic" if steps.generated else
                          "invited by topic (or --participants)"))
    return participants, ""


def _members(subject: _Subject, steps) -> tuple[list[str], dict[str, str]]:
    """The members (named, or placeholders) and the fixed roles' personas."""
    return members_of(steps, _panel(subject, steps)[0])


def _first_model(subject: _Subject, settings: Settings) -> Callable[[str, str, str], str | None]:
    """The model a member asks first (None: no persona, or no model configured); a member
    not named yet (``<expert 1>``) asks the rule's."""
    members = SimpleNamespace(get=lambda alias: _NO_OWN_MODEL if alias.startswith("<")
                              else subject.registry.get(alias))
    return first_model(members, subject.rule_model, subject.rule_models, settings)


def _namer(subject: _Subject, settings: Settings,
           named: list[str]) -> Callable[[str, str, str], str]:
    """How a persona's models are shown: the model, then the fallbacks tried after it (the
    role's, then the global ones, then the declared providers' ``fallback:``); ``-`` for an
    alias no persona has. Each name shown is added to ``named``."""
    def model_of(alias: str, role: str, tier: str) -> str:
        persona = subject.registry.get(alias) if alias else _NO_OWN_MODEL
        if persona is None:
            return "-"
        try:
            model, *rest = fallback_chain(persona, role, tier, subject.rule_model,
                                          subject.rule_models, settings)
        except CascadeError:
            return "(no model configured)"
        named.extend([model, *rest])
        return model + (f" (then {', '.join(rest)})" if rest else "")
    return model_of


def _declared(named: list[str], settings: Settings) -> list[str]:
    """A line for each declared provider among ``named``: what it asks, where it is declared."""
    out = []
    for name in dict.fromkeys(named):
        entry = settings.providers.entry(name)
        if entry is not None:
            out.append(f"  {name} is {entry.describe()} ({display_path(entry.source)})")
    return (["Providers:"] + out) if out else []


def _roles(steps, members: list[str], fixed: dict, unnamed: str,
           model_of: Callable[[str, str, str], str]) -> list[str]:
    """One line per role that speaks: its tier, and who fills it with which model."""
    out = []
    for role in steps.roles:
        if not any(role.id in s.speaking for s in steps.all_steps):
            continue  # a role this mode does not ask
        who = [fixed[role.id]] if role.fixed else members
        tier = steps.tier_of(role)
        shown = ", ".join(f"{a} -> {model_of(a, role.id, tier)}" for a in who)
        if unnamed and not role.fixed:
            shown = f"{unnamed} -> {model_of('', role.id, tier)}"
        out.append(f"  {role.id} ({tier}): {shown}")
    return out


def _listing(title: str, group) -> list[str]:
    """A group of steps, numbered, under its title (nothing for an empty group)."""
    if not group:
        return []
    out = [title]
    for i, step in enumerate(group, 1):
        if step.decision:
            out.append(f"  {i}. {step.title}: a person answers {step.question!r}"
                       + (" -- not after the last round" if step.when == "not_last" else
                          f" -- only when {step.when}" if step.when else ""))
            out += [f"       {line}" for line in offers(step)]  # what each choice does
            continue
        extra = [f"answers the {str(step.target).replace('_', ' ')} view"] if step.target else []
        extra += [f"table {step.table}"] if step.table else []
        extra += ["confirmation"] if step.confirm else []
        extra += [f"cites at least {step.min_refs}"] if step.min_refs else []
        extra += [f"sees {', '.join(step.sees)} only"] if step.sees else []
        extra += [f"also shown: {', '.join(map(str, step.shows))}"] if step.shows else []
        words = (f"{step.range[0]}-{step.range[1]}" if step.range else f"{step.words}")
        if step.range:
            extra.append(f"max tokens {reply_budget(step.range[1])}")
        out.append(f"  {i}. {step.title:<12} {', '.join(step.speaking):<12} "
                   f"{step.visibility:<10} {words:>4} words" + (
                       f"  ({'; '.join(extra)})" if extra else ""))
    return out


def _calls(proto, steps, members: int) -> list[str]:
    """The calls a round makes, and the most a run can make (with repairs)."""
    r = steps.rounds
    per_round, once, most = call_counts(steps, members)
    # a step whose speakers see the earlier ones asks them one at a time: a wave each
    waves = sum((len(s.speaking) if steps.role(s.role).fixed else members)
                if VISIBILITIES.has(s.visibility, "one_at_a_time") else 1
                for s in steps.round_steps if not s.decision)
    out = [f"Calls: {per_round} per round in {waves} wave{'s' if waves != 1 else ''}"
           + (f", {once} once (setup and after the rounds)" if once else "")
           + f"; at most {most} in {r.max} round{'s' if r.max > 1 else ''} "
           f"({asks_per_turn(steps) * most} with every re-ask)"]
    mode = next((m for m in steps.modes if m.name == steps.mode), None)
    if mode is not None and mode.seed_calls is not None:
        low, high = mode.seed_calls
        out.append(f"  the seed counts {low}-{high} calls a round in {mode.name} mode; here "
                   f"{per_round}: {mode.seed_why}")
    top = proto.steps.rounds.max
    if steps.strategy is not None and steps.strategy.rounds is not None and top > r.max:
        out.append(f"  with --rounds N (up to {top}): {per_round}N"
                   + (f" + {once}" if once else ""))
    return out


def _now(d) -> list[str]:
    """Where a ledger stands, and who the next wave asks."""
    run, said = d.state.run, d.state.conclusion
    out = [f"Now: {display_path(d.path)}, round {run.round}: " + (
        f"concluded, {said.said}" if said.outcome else
        f"step {run.step.title}, waiting for {', '.join(run.waiting)}")]
    wave = next_wave(run) if said.decision is None else []  # decided: no more rounds
    if wave:
        out.append(f"  the next wave asks {len(wave)}: "
                   + ", ".join(f"{q.alias} ({q.step.title})" for q in wave))
    return out
