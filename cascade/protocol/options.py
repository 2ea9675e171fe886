"""A discussion's options among its protocol's -- mode, strategy (or flow), tier, its own
round cap and debate sides -- and the one function that applies them (``specialize``:
discuss, run, plan, explain, the hook and check all come here); the names an option takes,
checked with one line that lists them."""
from __future__ import annotations

from pathlib import Path

import msgspec.structs
from msgspec import Struct

from cascade.base.errors import CascadeError
from cascade.protocol.spec import Steps

OPTIONS = {"mode": "modes", "strategy": "strategies", "flow": "flows", "tier": "tiers"}


class Options(Struct, frozen=True):
    """A discussion's choices among its protocol's options -- its mode, strategy (or flow)
    and tier -- and its own round cap (``--rounds N``, a rule's ``rounds:``)."""

    mode: str | None = None
    strategy: str | None = None  # a strategy or a flow
    tier: str | None = None
    rounds: int | None = None
    sides: tuple[tuple[str, str], ...] = ()  # member alias -> side (a strategy with sides)

    @classmethod
    def of_header(cls, extra: dict[str, str]) -> Options:
        """The options a ledger's header records (Mode, Strategy or Flow, Tier, Rounds,
        Sides: ``pro: a, b; con: c``)."""
        asked = (extra.get("rounds") or "").strip()
        sides = tuple((alias.strip(), side.strip()) for side, _, names in (
            part.partition(":") for part in (extra.get("sides") or "").split(";"))
            for alias in names.split(",") if side.strip() and alias.strip())
        return cls(extra.get("mode") or None,
                   extra.get("strategy") or extra.get("flow") or None,
                   extra.get("tier") or None,
                   int(asked) if asked.isdigit() and int(asked) >= 1 else None, sides)

    @classmethod
    def of_rule(cls, rule) -> Options:
        """The options a rule (cascade.config.rules.Rule) gives its discussions."""
        return cls(rule.mode, rule.strategy or rule.flow, rule.tier, rule.rounds)


def specialize(steps: Steps, options: Options) -> Steps:
    """A protocol's steps as a discussion with ``options`` runs them -- the one place they
    are applied (discuss, run, plan, explain, the hook and check all come here): its mode
    (the default when none is given), strategy or flow, tier, and round cap: at most the
    protocol's; for a flow with its own count, the number run (within the flow's minimum
    and the protocol's maximum); otherwise fewer than the protocol's, never more."""
    top = steps.rounds.max
    steps = steps.for_mode(options.mode) if steps.modes else steps
    steps = steps.for_strategy(options.strategy) if steps.strategies else steps
    steps = steps.for_tier(options.tier) if steps.tiers else steps
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


def describe(ref) -> str:
    """A behaviour as the protocol names it: ``'converged' (field: estimate, within: 0.1)``."""
    params = ", ".join(f"{k}: {v}" for k, v in ref.params)
    return f"{ref.name!r}" + (f" ({params})" if params else "")


def option_names(steps: Steps | None, kind: str) -> list[str]:
    """The names a protocol's option takes (--mode, --strategy, --flow, --tier)."""
    if kind == "mode":
        return [m.name for m in steps.modes]
    if kind == "tier":
        return [name for name, _ in steps.tiers]
    return [x.name for x in steps.strategies if x.kind == kind]


class Where(Struct, frozen=True):
    """Where a value was given, for the error about it: its file and line, and the words
    that name what gave it (``"rule 'adr': "``)."""

    path: Path | None = None
    line: int | None = None
    prefix: str = ""


def check_option(protocol: str, steps: Steps | None, kind: str, value: str | None,
                 where: Where | None = None) -> None:
    """A name given for a protocol's option must be one it has: else one line that lists
    them (or says it has none)."""
    if value is None:
        return
    names = option_names(steps, kind)
    if value not in names:
        at = where or Where()
        raise CascadeError(f"{at.prefix}protocol {protocol!r} has no {kind} {value!r}"
                           + (f" ({OPTIONS[kind]}: {', '.join(names)})" if names else ""),
                           at.path, at.line)
