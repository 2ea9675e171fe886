"""A discussion's options among its protocol's (cascade.config.protocol_options: a mode, a
strategy or flow, a tier), its own round cap and debate sides, the one function that applies
them (``specialize``) and the checks of the names an option takes."""
from __future__ import annotations

from pathlib import Path

import msgspec.structs
from msgspec import Struct

from cascade.base.errors import CascadeError
from cascade.config.protocol_options import SECTIONS
from cascade.protocol.spec import Steps


class Options(Struct, frozen=True):
    """A discussion's choices among its protocol's options (option -> the name chosen:
    ``(("mode", "deep"),)``) and its own round cap (``--rounds N``, a rule's ``rounds:``)."""

    chosen: tuple[tuple[str, str], ...] = ()
    rounds: int | None = None
    sides: tuple[tuple[str, str], ...] = ()  # member alias -> side (a strategy with sides)

    @classmethod
    def of(cls, rounds: int | None = None, **chosen: str | None) -> Options:
        """``Options.of(mode="deep", rounds=2)``: the options given (None: not given)."""
        return cls(tuple((k, v) for k, v in chosen.items() if v is not None), rounds)

    def get(self, option: str) -> str | None:
        return dict(self.chosen).get(option)

    @classmethod
    def of_header(cls, extra: dict[str, str]) -> Options:
        """The options a ledger's header records (Mode, Strategy or Flow, Tier, Rounds,
        Sides: ``pro: a, b; con: c``)."""
        asked = (extra.get("rounds") or "").strip()
        sides = tuple((alias.strip(), side.strip()) for side, _, names in (
            part.partition(":") for part in (extra.get("sides") or "").split(";"))
            for alias in names.split(",") if side.strip() and alias.strip())
        return cls(tuple((k, extra[k]) for k in SECTIONS if extra.get(k)),
                   int(asked) if asked.isdigit() and int(asked) >= 1 else None, sides)

    @classmethod
    def of_rule(cls, rule) -> Options:
        """The options a rule (cascade.config.rules.Rule) gives its discussions."""
        return cls(rule.options, rule.rounds)

    @classmethod
    def running(cls, steps: Steps, cap: int | None = None, **changed: str) -> Options:
        """The options specialized ``steps`` run with (``changed``: others instead)."""
        now = {"mode": steps.mode, "tier": steps.tier}
        if steps.strategy is not None:
            now[steps.strategy.kind] = steps.strategy.name
        return cls.of(cap, **{**now, **changed})


def offered(steps: Steps | None) -> dict[str, list[str]]:
    """The options a protocol offers, each with the names it takes (``{"mode": [...]}``);
    strategies are offered by the word their section goes by (strategy, flow)."""
    if steps is None:
        return {}
    out: dict[str, list[str]] = {"mode": [m.name for m in steps.modes]}
    for x in steps.strategies:
        out.setdefault(x.kind, []).append(x.name)
    out["tier"] = [name for name, _ in steps.tiers]
    return {option: names for option, names in out.items() if names}


_APPLY = {"mode": Steps.for_mode, "strategy": Steps.for_strategy, "flow": Steps.for_strategy,
          "tier": Steps.for_tier}


def specialize(steps: Steps, options: Options) -> Steps:
    """A protocol's steps as a discussion with ``options`` runs them -- the one place they
    are applied (discuss, run, plan, explain, the hook and check all come here): its mode
    (the default when none is given), strategy or flow, tier, and round cap: at most the
    protocol's; for a flow with its own count, the number run (within the flow's minimum
    and the protocol's maximum); otherwise fewer than the protocol's, never more."""
    top = steps.rounds.max
    for option in offered(steps):
        steps = _APPLY[option](steps, options.get(option))
    if options.sides and steps.strategy is not None and steps.strategy.sides:
        steps = msgspec.structs.replace(steps, strategy=msgspec.structs.replace(
            steps.strategy, assigned=tuple((a, s) for a, s in options.sides
                                           if s in steps.strategy.sides)))
    cap = options.rounds
    if cap is not None and cap >= 1:
        if steps.strategy is not None and steps.strategy.rounds is not None:
            low = steps.strategy.rounds[0]
            steps = msgspec.structs.replace(steps, rounds=msgspec.structs.replace(
                steps.rounds, max=min(max(cap, low), top), min=low))
        elif cap < steps.rounds.max:
            steps = msgspec.structs.replace(steps, rounds=msgspec.structs.replace(
                steps.rounds, max=cap, min=min(steps.rounds.min, cap)))
    return steps


def most_rounds(base: Steps, options: Options) -> int:
    """The most rounds a discussion may ask for (``--rounds N``, a rule's ``rounds:``): its
    mode's and strategy's; for a flow with its own count, the protocol's."""
    steps = specialize(base, msgspec.structs.replace(options, rounds=None))
    if steps.strategy is not None and steps.strategy.rounds is not None:
        return base.rounds.max
    return steps.rounds.max


def check_rounds(proto, options: Options) -> None:
    """``--rounds N`` (``options.rounds``) must be a count protocol ``proto`` can run: from 1
    to its cap (a protocol of phases or rounds: its own; a flow with its own count: the
    protocol's) -- else one line that says the range."""
    if options.rounds is None:
        return
    steps = proto.steps
    top = most_rounds(steps, options) if steps.shape.own_rounds else proto.max_rounds
    if not 1 <= options.rounds <= top:
        raise CascadeError(f"--rounds must be between 1 and {top} for protocol {proto.name!r}")


def describe(ref) -> str:
    """A behaviour as the protocol names it: ``'converged' (field: estimate, within: 0.1)``."""
    params = ", ".join(f"{k}: {v}" for k, v in ref.params)
    return f"{ref.name!r}" + (f" ({params})" if params else "")


def check_option(protocol: str, steps: Steps | None, kind: str, value: str | None,
                 path: Path | None = None, line: int | None = None,
                 prefix: str = "") -> None:  # long: the value, then where it was given
    """A name given for a protocol's option must be one it has: else one line that lists
    them (or says it has none), at the file and line that gave it, after the words that name
    what gave it (``prefix``: ``"rule 'adr': "``)."""
    if value is None:
        return
    names = offered(steps).get(kind, [])
    if value not in names:
        raise CascadeError(f"{prefix}protocol {protocol!r} has no {kind} {value!r}"
                           + (f" ({SECTIONS[kind]}: {', '.join(names)})" if names else ""),
                           path, line)
