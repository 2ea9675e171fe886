"""What a decision point is about, derived from the run alone, so that a person never answers
blind: the panel proposed (who speaks, in which role, on which model or tier, and why), the
turns the question shows, who argues which side, what each choice does, and each answer given
since the question was asked that is not one of its choices. The terminal, the hook's blocked
message and the UI render this and nothing else. Pure: no model, no file, no git.
"""
from __future__ import annotations

import re

from msgspec import Struct, field

from cascade.base.markdown import sentence
from cascade.protocol.engine import question
from cascade.protocol.fields import item_line, items_of, shift_field, split_list
from cascade.protocol.panel import persona_name
from cascade.protocol.runstate import Run, Turn
from cascade.protocol.spec import Step, Steps

_ARG = re.compile(r"\A([<\[][^>\]]*[>\]])\s*(?:--\s*)?(.*)\Z", re.DOTALL)
WIDTH = 160  # the longest line the hook prints of it
WHY = 90  # the longest reason a table gives for a persona


class Choice(Struct, frozen=True):
    word: str  # what the person writes after NEXT:
    arg: str  # what follows it, if anything ("<what to change>", "[N]"), else ""
    does: str  # what it does ("" when the protocol does not say)

    @property
    def answer(self) -> str:
        """How it is written: ``NEXT: modify <what to change>``."""
        return f"NEXT: {self.word}" + (f" {self.arg}" if self.arg else "")


class About(Struct):
    step: Step
    question: str  # the question in one line, with when and how to answer it
    context: list[str] = field(default_factory=list)  # what it is about, one line an item
    table: list[list[str]] = field(default_factory=list)  # a panel: the header, then rows
    choices: list[Choice] = field(default_factory=list)
    recommended: str = ""
    unclear: list[str] = field(default_factory=list)  # answers not understood, a line each

    def told(self) -> list[str]:
        """What it is about: the panel's table and the turns it shows, a line an item."""
        return table_lines(self.table) + self.context

    def offer(self, choice: Choice) -> str:
        """A choice as offered: ``modify <what to change> -- what it does (recommended)``."""
        return (choice.answer[len("NEXT: "):] + (f" -- {choice.does}" if choice.does else "")
                + (" (recommended)" if choice.word == self.recommended else ""))

    def lines(self, width: int | None = None) -> list[str]:
        """The question, what it is about, the choices and the answers not understood, a
        line an item (``width``: each cut to it, as the hook prints them)."""
        out = [self.question] + [f"  {line}" for line in self.told()]
        out += [f"  NEXT: {self.offer(c)}" for c in self.choices]
        out += [f"  {line}" for line in self.unclear]
        if width is None:
            return out
        return [line if len(line) <= width else line[:width - 3] + "..." for line in out]


def about(run: Run, personas=None) -> About | None:
    """What the open decision point of ``run`` is about; None when none is open.
    ``personas``: the discussion's (a persona's own model is shown), or None."""
    if not run.deciding:
        return None
    step = run.step
    assert step is not None
    out = About(step, question(run), recommended=step.recommended or "")
    if not run.setup.done and run.setup.panel is not None:
        out.table = panel_table(run, personas)
        panel = run.setup.panel
        out.context.append("; ".join(f"{k}: {v}" for k, v in (
            ("Problem", panel.problem), ("scope", panel.scope), ("success", panel.success)) if v))
    for turn in _shown(run, step):
        out.context += turn_lines(run, turn)
    shifts = shifts_line(run) if run.setup.done else ""
    out.context += [line for line in (shifts, sides_line(run)) if line]
    rec = run.recommendation(run.round) if run.setup.done else None
    out.choices = choices(step, rec or "(none given)")
    out.unclear = unclear(run)
    return out


def choices(step: Step, rec: str | None = None) -> list[Choice]:
    """A decision point's choices with what each does (its protocol's words); ``{recommendation}``
    in them is ``rec``, the round's; with none (before any run: ``cascade plan``), left out."""
    does = dict(step.does)
    out = []
    for word in step.choices:
        said = does.get(word, "")
        m = _ARG.match(said)
        arg, text = (m.group(1), m.group(2).strip()) if m else ("", said)
        if rec is None:
            text = re.sub(r":?\s*\{recommendation\}", "", text)
        out.append(Choice(word, arg, text.replace("{recommendation}", rec or "")))
    return out


def offers(step: Step, rec: str | None = None) -> list[str]:
    """Each choice as offered, a line each: ``NEXT: modify <what to change> -- what it does``,
    the recommended one marked."""
    return [f"NEXT: {About(step, '', recommended=step.recommended or '').offer(c)}"
            for c in choices(step, rec)]


def impasse(run: Run) -> list[str]:
    """At an impasse (a person decides with ``cascade decide``), what the protocol recommends:
    the turn of its ``on_impasse`` step, a line an item; [] otherwise."""
    step_id = run.steps.rounds.on_impasse
    if run.outcome != "IMPASSE" or not step_id:
        return []
    turns = [t for t in run.turns if t.step == step_id]
    return turn_lines(run, turns[-1]) if turns else []


def _shown(run: Run, step: Step) -> list[Turn]:
    """The turns the question shows: of the steps it names (``sees``), else of the step just
    before it -- this round's (the setup's latest, for a setup decision)."""
    if not run.setup.done:
        ids = step.sees or _before(run.steps.setup, step)
        return [t for t in run.setup.turns[::-1] if t.step in ids][:1]
    ids = step.sees or _before(run.steps.round_steps, step)
    return [t for t in run.turns if t.round == run.round and t.step in ids]


def _before(order, step: Step) -> tuple[str, ...]:
    index = next((i for i, s in enumerate(order) if s.id == step.id), 0)
    return (order[index - 1].id,) if index > 0 else ()


def turn_lines(run: Run, turn: Turn) -> list[str]:
    """A shown turn: its step and speaker with what it said (its first sentences), then its
    fields, one a line (scores spelled out; a panel is the table instead)."""
    step = run.step_of(turn.step)
    title = step.title if step is not None else turn.step
    out = [f"{title} ({turn.name}, {turn.msg}): {sentence(_prose(turn.body), 300)}"]
    for f in step.fields if step is not None else ():
        value = turn.fields.get(f.name, "")
        if f.refs or f.kind == "panel" or not value:
            continue
        if f.kind == "scores":
            scores = ", ".join(f"{_words(k)} {v}" for k, _, v in
                               (p.partition(":") for p in value.split(",")))
            flagged = turn.fields.get("flagged") == "yes"
            out.append(f"  {_words(f.name)} ({int(f.low)}-{int(f.high)}): {scores}"
                       + (f" -- flagged: overall below {f.flag_below:g}" if flagged else ""))
        elif f.kind == "list":
            out.append(f"  {_words(f.name)}: {'; '.join(split_list(value))}")
        elif f.kind == "items":
            out.append(f"  {_words(f.name)}: "
                       + "; ".join(item_line(f, r)[2:] for r in items_of(f, value)))
        else:
            out.append(f"  {_words(f.name)}: {value}")
    return out


def _prose(body: str) -> str:
    """A block's own words: before any table or section the tool added below them."""
    return re.split(r"\n\s*(?:\||\*\*)", body.strip(), maxsplit=1)[0]


def _words(name: str) -> str:
    """A field's name as words: ``genuineDisagreement`` -> ``genuine disagreement``."""
    return " ".join(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ")
                    .split()).lower()


def answering(run: Run, step: Step, round_: int) -> list[str]:
    """What the members answered in ``step`` of ``round_``: the turn of the step before it,
    when a fixed role spoke it (a facilitator's question, a contrarian's stress test)."""
    before = _before(run.steps.round_steps, step)
    prior = run.steps.step(before[0]) if before else None
    if prior is None or prior.decision or not all(run.steps.role(r).fixed
                                                  for r in prior.speaking):
        return []
    return [line for t in run.of(round_, prior.id) for line in turn_lines(run, t)]


def shifts_line(run: Run) -> str:
    """How many positions moved this round, who and what moved them (the steps with a
    shift field: a swarm's responses), or "" when the round has none of those steps."""
    stepped = [t for t in run.turns if t.round == run.round]
    said = [(t, t.fields.get(name)) for t in stepped
            for name in [shift_field(run.step_of(t.step))] if name is not None]
    if not said:
        return ""
    moved = [(t, shift) for t, shift in said if shift not in (None, "none")]
    who = "; ".join(f"{t.name} {shift}" + (
        f" (triggered by {', '.join(m for k, m in t.refs if k == 'responds_to')})"
        if any(k == "responds_to" for k, _ in t.refs) else "") for t, shift in moved)
    return f"Position shifts: {len(moved)}" + (f" -- {who}" if who else "")


def sides_line(run: Run) -> str:
    """Who argues which side (a strategy with sides: debate's pro and con), or ""."""
    strategy = run.steps.strategy
    if strategy is None or not strategy.sides or not run.members:
        return ""
    by_side: dict[str, list[str]] = {s: [] for s in strategy.sides}
    for index, alias in enumerate(run.members):
        by_side[strategy.side(index, alias)].append(run.name_of(alias))
    return "Sides: " + "; ".join(f"{side}: {', '.join(names)}" for side, names in by_side.items())


def roster(steps: Steps, members: list[str], personas, why: dict[str, str],
           names: dict[str, str] | None = None) -> list[list[str]]:
    """Who speaks, as a table: persona, role, model (a persona's own) or tier, and why it is
    there (``why``: by alias, else the persona's role and expertise; or the protocol's role)."""
    rows = [["Persona", "Role", "Model", "Why"]]
    member = steps.member_role

    def row(alias: str, role, title: str, said: str | None) -> list[str]:
        """A persona's row; ``said`` None: why a member is there (by ``why``, else its own)."""
        persona = personas.get(alias) if personas is not None else None
        hint = persona.provider_hint if persona is not None else None
        if persona is not None and persona.model:
            model = persona.model
        elif hint and hint not in ("fast", "strong"):
            model = hint  # a provider's name
        else:
            model = f"{hint or steps.tier_of(role)} tier" if role is not None else "-"
        if said is None:  # a member: why it is there, else its own role and expertise
            own = "" if persona is None else "; ".join(
                x for x in (persona.role, ", ".join(persona.expertise)) if x)
            said = _cut(why.get(alias, own), WHY)
        name = (names or {}).get(alias) or (persona.name if persona is not None else alias)
        return [f"{name} (@{alias})", title, model, said]

    for alias in members:
        rows.append(row(alias, member, member.title if member else "Participant", None))
    mode = steps.get_mode(steps.mode)
    stands_in = dict(mode.stand_in) if mode is not None else {}
    for role in steps.fixed_roles:
        said = "the protocol's fixed role"
        if role.id in stands_in:  # one persona, two rows: say why
            said = (f"the {steps.role(stands_in[role.id]).title.lower()} speaks for the "
                    f"{role.title.lower()} too: {steps.mode} mode has no {role.title.lower()} "
                    "of its own")
        rows.append(row(role.persona, role, role.title, said))
    return rows


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3].rstrip() + "..."


def panel_table(run: Run, personas=None) -> list[list[str]]:
    """The proposed panel: each expert with its expertise and the tensions it is in, then the
    protocol's fixed roles."""
    panel = run.setup.panel
    why = {}
    for e in panel.experts:
        tensions = [f"vs @{t.b if t.a == e.id else t.a}: {t.axis}" for t in panel.tensions_of(e.id)]
        why[e.id] = "; ".join([", ".join(e.expertise)] + tensions)
    names = {e.id: persona_name(e.id) for e in panel.experts}
    return roster(run.steps, panel.aliases, personas, why, {**run.terms.names, **names})


def table_lines(rows: list[list[str]]) -> list[str]:
    """A table as aligned text, a row a line (the last column as long as it is)."""
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    out = []
    for n, row in enumerate(rows):
        cells = [c.ljust(w) for c, w in zip(row, widths)] + [row[-1]]
        out.append("  ".join(cells).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths + [len(row[-1])]))
    return out


def unclear(run: Run) -> list[str]:
    """Each person's answer written since the open decision point was reached that is not
    one of its choices: one line naming them."""
    step = run.step
    if step is None or not step.decision:
        return []
    if not run.setup.done:
        pool, after = run.setup.answers, max((t.line for t in run.setup.turns), default=0)
    else:
        pool = run.decisions.answers
        after = max([t.line for t in run.turns if t.round <= run.round]
                    + [a.line for a in run.decisions.answers if a.used], default=0)
    choices = ", ".join(step.choices)
    out = []
    for a in pool:
        if a.used or a.step is not None or a.line <= after or a.choice in step.choices:
            continue
        said = a.choice if "next:" in a.choice.lower() else f"NEXT: {a.choice} {a.text}".strip()
        out.append(f"not understood: {said!r} ({a.by}, line {a.line}) -- answer with one of "
                   f"the choices: {choices}")
    return out
