"""A panel generated for one discussion (seed 001): experts with designed tensions and a
problem definition, proposed by a fixed role in a setup step, recorded in the ledger as events
so that a rerun, ``check`` and ``status`` see the same panel without a model::

    <!-- PROBLEM: statement="Which database for the event store?" scope="..." success="..." -->
    <!-- PERSONA: database-expert name="Database Expert" expertise="RDB; NoSQL" style=pragmatic
         bias="..." tendency="..." stakes="..." blind="..." -->
    <!-- TENSION: database-expert api-designer axis="..." description="..." -->

The events follow the turn that proposed them, together, each with the tool's stamp (others
are no panel's); a later proposal supersedes them. Each expert becomes a voting persona of
that discussion only (``AI-Database-Expert``, alias ``database-expert``).

A proposal is checked, never trusted (``parse_panel``): ids become aliases, a taken one is
renamed, a panel larger than the mode allows keeps its first experts, a tension naming an
unknown expert is dropped, an expert in no pair is paired; too few usable experts: the
registry's voting personas picked by topic words stand in -- every change said in a note.
"""
from __future__ import annotations

import re
from pathlib import Path

from msgspec import Struct, field

from cascade.config.personas import Persona
from cascade.ledger.records import PERSONA, PROBLEM, TENSION, Comment
from cascade.ledger.provenance import Replays, verify, verify_event
from cascade.protocol.lens import by_topic

_SLUG = re.compile(r"[^a-z0-9]+")
_LIST_SEP = "; "
_MAX_TEXT = 300


class Expert(Struct, frozen=True):
    id: str
    name: str
    expertise: tuple[str, ...]
    thinking: str = ""
    bias: str = ""
    tendency: str = ""
    stakes: str = ""
    blind: tuple[str, ...] = ()


class Tension(Struct, frozen=True):
    a: str
    b: str
    axis: str
    description: str = ""


class Panel(Struct):
    experts: list[Expert]
    tensions: list[Tension]
    problem: str
    scope: str = ""
    success: str = ""
    line: int = 0  # the proposing turn's line (0: not in a ledger yet)
    msg: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def aliases(self) -> list[str]:
        return [e.id for e in self.experts]

    def tensions_of(self, alias: str) -> list[Tension]:
        return [t for t in self.tensions if alias in (t.a, t.b)]


def slug(text: str) -> str:
    return _SLUG.sub("-", str(text).lower()).strip("-")[:40].strip("-")


def persona_name(expert_id: str) -> str:
    return "AI-" + "-".join(w.capitalize() for w in expert_id.split("-") if w)


def _clean(value: object, limit: int = _MAX_TEXT) -> str:
    text = " ".join(str(value).split()) if isinstance(value, (str, int, float)) else ""
    return text[:limit]


def _strings(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        value = re.split(r"[;,]", value)
    if not isinstance(value, list):
        return ()
    return tuple(t for t in (_clean(v, 80) for v in value) if t)[:8]


def _get(data: dict, *names: str) -> object:
    lowered = {str(k).lower().replace("_", ""): v for k, v in data.items()}
    for name in names:
        value = lowered.get(name.lower().replace("_", ""))
        if value is not None:
            return value
    return None


def parse_panel(value: object, low: int, high: int, taken: set[str],
                topic: str) -> tuple[Panel | None, list[str]]:
    """A reply's panel (its ``experts``, ``tensionMap`` and ``problemDefinition``), checked;
    None when fewer than ``low`` usable experts remain. Notes say what was changed."""
    notes: list[str] = []
    if not isinstance(value, dict):
        return None, ["no panel object in the reply"]
    raw = _get(value, "experts")
    if not isinstance(raw, list):
        return None, ["the panel has no list of experts"]
    experts = _experts(raw, taken, notes)
    if len(experts) > high:
        notes.append(f"{len(experts)} experts proposed, the mode takes at most {high}: kept the "
                     f"first {high}")
        experts = experts[:high]
    if len(experts) < low:
        return None, notes + [f"{len(experts)} usable experts, the mode needs at least {low}"]
    tensions = _tensions(_get(value, "tensionMap", "tensions"), experts, _renamed(raw, experts),
                         notes)
    _pair_everyone(experts, tensions, notes)
    statement, scope, success = _problem(_get(value, "problemDefinition", "problem"))
    if not statement:
        statement = _clean(topic, 500)
        notes.append("no problem statement: the topic stands for it")
    return Panel(experts, tensions, statement, scope, success, notes=notes), notes


def _experts(raw: list, taken: set[str], notes: list[str]) -> list[Expert]:
    """The usable experts of a reply, each with an id of its own (one already taken, by a
    persona or an earlier expert, is renamed)."""
    experts: list[Expert] = []
    used = set(taken)
    for item in raw:
        if not isinstance(item, dict):
            notes.append("an expert that is not an object was dropped")
            continue
        name = _clean(_get(item, "name"), 60)
        alias = slug(_get(item, "id") or name or "")
        if not alias or not alias[0].isalpha():
            notes.append(f"expert {name or alias!r} dropped: no usable id")
            continue
        wanted = alias
        if alias in used:
            alias = f"{alias}-expert"
            n = 2
            while alias in used:
                alias, n = f"{wanted}-{n}", n + 1
            notes.append(f"expert id {wanted!r} is taken: renamed {alias!r}")
        used.add(alias)
        experts.append(Expert(  # _get ignores case and "_": thinkingStyle is thinking_style
            alias, name or alias.replace("-", " ").title(), _strings(_get(item, "expertise")),
            _clean(_get(item, "thinkingStyle", "thinking")), _clean(_get(item, "bias")),
            _clean(_get(item, "replyTendency", "tendency")), _clean(_get(item, "stakes")),
            _strings(_get(item, "blindSpots", "blind"))))
    return experts


def _renamed(raw: list, experts: list[Expert]) -> dict[str, str]:
    """The id each proposed expert was given (its own, or the one it was renamed to)."""
    renamed: dict[str, str] = {}
    for item in raw:
        if isinstance(item, dict):
            original = slug(_get(item, "id") or _get(item, "name") or "")
            match = next((e.id for e in experts if e.id == original or
                          e.id.startswith(original + "-")), None)
            if original and match:
                renamed.setdefault(original, match)
    return renamed


def _tensions(raw: object, experts: list[Expert], renamed: dict[str, str],
              notes: list[str]) -> list[Tension]:
    """The reply's tensions between two of the panel's experts (others are dropped, noted)."""
    ids = {e.id for e in experts}
    tensions: list[Tension] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            continue
        between = _get(item, "between")
        pair = [renamed.get(slug(x), slug(x)) for x in between] if isinstance(between, list) else []
        if len(pair) != 2 or pair[0] == pair[1] or not set(pair) <= ids:
            notes.append(f"tension {between!r} dropped: it must name two of the panel's experts")
            continue
        tensions.append(Tension(pair[0], pair[1], _clean(_get(item, "axis"), 120) or "unstated",
                                _clean(_get(item, "description"))))
    return tensions


def _problem(problem: object) -> tuple[str, str, str]:
    """(statement, scope, success criteria) of a reply's problem definition."""
    if isinstance(problem, dict):
        return (_clean(_get(problem, "statement"), 500), _clean(_get(problem, "scope")),
                _clean(_get(problem, "successCriteria", "success")))
    return _clean(problem, 500), "", ""


def _pair_everyone(experts: list[Expert], tensions: list[Tension], notes: list[str]) -> None:
    """Every expert in at least one designed tension: one left out is paired with the expert
    whose expertise shares the fewest words with its own (ties: the earlier one)."""
    for e in experts:
        if any(e.id in (t.a, t.b) for t in tensions):
            continue
        words = set(" ".join(e.expertise).lower().split())
        others = [o for o in experts if o.id != e.id]
        if not others:
            return
        other = min(others, key=lambda o: (len(words & set(" ".join(o.expertise).lower()
                                                            .split())), experts.index(o)))
        tensions.append(Tension(e.id, other.id, f"{e.name} vs {other.name}",
                                "paired by the tool: the proposal left this expert out of "
                                "every tension"))
        notes.append(f"{e.id} was in no tension: paired with {other.id}")


def fallback_panel(topic: str, registry, count: int, exclude: set[str]) -> Panel:
    """The registry's voting personas picked by topic words, as a panel (the deterministic
    stand-in for a proposal that cannot be used)."""
    experts = []
    for alias in by_topic(topic, registry, count, exclude):
        p = registry.get(alias)
        experts.append(Expert(alias, p.role.split(",")[0].strip()[:60] or alias,
                              tuple(p.expertise)[:8], stakes=_clean("; ".join(p.concerns))))
    tensions = [Tension(a.id, b.id, f"{a.name} vs {b.name}")
                for a, b in zip(experts[::2], experts[1::2])]
    _pair_everyone(experts, tensions, [])
    return Panel(experts, tensions, _clean(topic, 500))


def panel_events(panel: Panel) -> list[tuple[str, str, dict[str, str]]]:
    out: list[tuple[str, str, dict[str, str]]] = [
        (PROBLEM, "", {"statement": panel.problem, "scope": panel.scope or None,
                       "success": panel.success or None})]
    for e in panel.experts:
        out.append((PERSONA, e.id, {"name": e.name, "expertise": _LIST_SEP.join(e.expertise),
                                    "style": e.thinking or None, "bias": e.bias or None,
                                    "tendency": e.tendency or None, "stakes": e.stakes or None,
                                    "blind": _LIST_SEP.join(e.blind) or None}))
    for t in panel.tensions:
        out.append((TENSION, f"{t.a} {t.b}", {"axis": t.axis,
                                               "description": t.description or None}))
    return out


def _split(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(";") if v.strip())


def panel_of(entries, ledger: str | None) -> Panel | None:
    """The panel the ledger's entries record last: the events after the last turn that
    proposed a panel (stamped ``panel=``); None: none. ``ledger``: the ledger's identity
    (cascade.ledger.provenance.ledger_id): a stamp that names another is not this one's."""
    current: Panel | None = None
    last: Panel | None = None
    open_ = False  # the entries so far follow a proposal, together
    replays = Replays()
    for entry in entries:
        copy = replays.copy_of(entry)
        if isinstance(entry, Comment):  # a turn that proposes a panel opens one
            open_ = entry.origin == "ai" and "panel" in entry.provenance and copy is None \
                and verify(entry, ledger) is None
            if open_:
                if current is not None and current.experts:
                    last = current
                current = Panel([], [], "", line=entry.line, msg=entry.provenance.get("msg", ""))
            continue
        if entry.kind not in (PROBLEM, PERSONA, TENSION):
            open_ = False
            continue
        if current is None or not open_ or copy is not None \
                or verify_event(entry, ledger) is not None:
            continue
        if entry.kind == PROBLEM:
            current.problem = entry.fields.get("statement", "")
            current.scope = entry.fields.get("scope", "")
            current.success = entry.fields.get("success", "")
        elif entry.kind == PERSONA:
            words = entry.value.split()
            if words and slug(words[0]) == words[0]:
                f = entry.fields
                current.experts.append(Expert(words[0], f.get("name", words[0]),
                                              _split(f.get("expertise", "")), f.get("style", ""),
                                              f.get("bias", ""), f.get("tendency", ""),
                                              f.get("stakes", ""), _split(f.get("blind", ""))))
        elif entry.kind == TENSION:
            words = entry.value.split()
            if len(words) >= 2:
                current.tensions.append(Tension(words[0], words[1], entry.fields.get("axis", ""),
                                                entry.fields.get("description", "")))
    if current is not None and current.experts:
        last = current
    return last


def personas_of(panel: Panel, path: Path):
    """The panel's experts as voting personas of the discussion at ``path``."""
    out = []
    for e in panel.experts:
        said = (("Thinking style: {}.", e.thinking), ("Your natural bias: {}.", e.bias),
                ("How you tend to reply: {}.", e.tendency),
                ("What you stand to lose from a bad decision: {}.", e.stakes),
                ("Your known blind spots: {}. Guard against them.", ", ".join(e.blind)))
        lines = [f"You are {e.name}, an expert brought into this discussion for your view."]
        lines += [text.format(value) for text, value in said if value]
        lines += [f"You and @{t.b if t.a == e.id else t.a} disagree by design on: {t.axis}."
                  for t in panel.tensions_of(e.id)]
        out.append(Persona(persona_name(e.id), e.id, e.name, "\n".join(lines), e.expertise,
                           (e.stakes,) if e.stakes else (), "voting", None, path, panel.line))
    return out
