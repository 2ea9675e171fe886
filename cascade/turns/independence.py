"""Independence you can see: which roles meant to judge independently resolve to the same
model family. Two kinds of roles are meant to: the speakers of one step who answer the same
question without seeing each other's replies (cascade.protocol.visibility.answered_apart: a
review's panel on a revision, a blind step, a peer ranking, a closing vote), and a judge and
the roles it ``weighs`` (a referee and its advisors, an arbiter and its group's freethinker,
a synthesizer and the participants). ``cascade plan``, ``explain`` and the hook say each
clash in one line, with what to do (``Clash.warning``); a rule with ``distinct_models: true``
refuses them. What a model's family is, with examples: docs/protocols.md (``family``).

Pure: the caller says which model each (persona, role, tier) asks first.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from msgspec import Struct

from cascade.protocol.visibility import answered_apart

# a maker's name some model names start with (meta-llama's Meta-Llama-3, Bedrock's
# anthropic.claude-3): not the model's family
MAKERS = frozenset({"meta", "anthropic", "google", "mistralai", "microsoft", "amazon",
                    "openai", "nvidia", "ibm", "cohere", "alibaba"})
_TOKEN = re.compile(r"[-_.:\s]+")
FIX = ("give them models of different families: a persona's model:, or the rule's models: "
       "for a role or a tier")


def family(model: str) -> str:
    """The lineage ``model``'s name starts with, whoever serves it: ``openai/gpt-4o`` ->
    ``gpt``, ``openai/o1-mini`` -> ``o1`` (the rules: docs/protocols.md)."""
    name = model.strip().replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()
    name = name.removesuffix(".gguf")
    tokens = [t for t in _TOKEN.split(name) if t]
    if len(tokens) > 1 and tokens[0] in MAKERS:
        tokens = tokens[1:]
    first = tokens[0] if tokens else name
    letters = re.match(r"[a-z]+", first)
    if letters is None:
        return first or model
    if len(letters.group(0)) == 1:  # o1, o3: the letter alone names no lineage
        return re.match(r"[a-z]\d*", first).group(0)  # type: ignore[union-attr]
    return letters.group(0)


class Clash(Struct, frozen=True):
    """Roles meant to judge independently that share a model family: ``where`` says why they
    are meant to (``step Advice, answered independently``), ``who`` names them
    (``pragmatist (advisor)``)."""

    where: str
    who: tuple[tuple[str, str], ...]  # (alias, role id)
    family: str
    models: tuple[str, ...]

    def line(self) -> str:
        by_role: dict[str, list[str]] = {}
        for alias, role in self.who:
            by_role.setdefault(role, []).append(alias)
        who = _and([f"{_and(_named(aliases))} ({role})" for role, aliases in by_role.items()])
        return (f"{self.where}: {who} share the model family {self.family!r} "
                f"({', '.join(self.models)}): their judgements are not independent")

    def warning(self) -> str:
        """The line, and what to do about it: what ``plan``, ``explain`` and the hook say."""
        return f"{self.line()}; {FIX}"


def _named(aliases: list[str]) -> list[str]:
    """The aliases, those not named yet (``<expert 1>``: ``cascade plan`` before a panel is
    generated or invited) said as how many: ``3 experts not named yet``."""
    named = [a for a in aliases if not a.startswith("<")]
    unnamed = [a for a in aliases if a.startswith("<")]
    if unnamed:
        word = unnamed[0].strip("<>").rsplit(" ", 1)[0]
        named.append(f"{len(unnamed)} {word}{'s' if len(unnamed) > 1 else ''} not named yet")
    return named


def _and(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


ModelOf = Callable[[str, str, str], "str | None"]  # (alias, role id, tier) -> model


def clashes(steps, members: list[str], fixed: dict[str, str], model_of: ModelOf) -> list[Clash]:
    """The clashes of a step protocol's roles (``steps``, specialized for the discussion's
    options), its ``members`` and ``fixed`` roles' personas; ``model_of`` gives the model an
    alias asks in a role and tier (None: unknown, left out)."""
    speaking = {r for s in steps.all_steps if not s.decision for r in s.speaking}

    def who(role_id: str) -> list[str]:
        role = steps.role(role_id)
        if role is None or role_id not in speaking:
            return []
        return [fixed[role.id]] if role.fixed and fixed.get(role.id) else (
            [] if role.fixed else list(members))

    def families(role_ids) -> dict[str, list[tuple[tuple[str, str], str]]]:
        """family -> [((alias, role id), model)] of the roles' speakers."""
        out: dict[str, list[tuple[str, str]]] = {}
        for role_id in role_ids:
            role = steps.role(role_id)
            for alias in who(role_id):
                model = model_of(alias, role_id, steps.tier_of(role))
                if model:
                    out.setdefault(family(model), []).append(((alias, role_id), model))
        return out

    found: dict[tuple, list[str]] = {}
    for step in steps.all_steps:
        if step.decision or not answered_apart(steps, step):
            continue
        for fam, speakers in families(step.speaking).items():
            if len(speakers) > 1:
                key = (tuple(n for n, _ in speakers), fam, tuple(dict.fromkeys(
                    m for _, m in speakers)))
                found.setdefault(key, []).append(step.title)
    out = [Clash(("step " if len(titles) == 1 else "steps ") + _and(titles)
                 + ", answered independently", names, fam, models)
           for (names, fam, models), titles in found.items()]
    for role in steps.roles:
        if not role.weighs or not who(role.id):
            continue
        judge = families([role.id])
        weighed = families(role.weighs)
        for fam, speakers in judge.items():
            if fam in weighed:
                both = speakers + weighed[fam]
                out.append(Clash(f"{role.id} weighs {', '.join(role.weighs)}",
                                 tuple(n for n, _ in both), fam,
                                 tuple(dict.fromkeys(m for _, m in both))))
    return out


def refusal(rule, found: list[Clash]) -> str:
    """Why a rule with ``distinct_models: true`` refuses to run: its first clash, and how to
    fix it, in one line."""
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return (f"rule {rule.name!r} has distinct_models: true, but {found[0].line()}{more}; "
            f"{FIX}")
