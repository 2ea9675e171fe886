"""The kinds of a step's reply fields, registered: how each is declared in a protocol's YAML
(``parse``), asked for in the prompt (``shape``), read from a reply into the values stamped
on the turn (``read``: the value, or the cautious fallback and a note) and shown in the
block's body (``section``). The kinds, as declared: docs/protocols.md ("The keys"); a new
kind registers here (or in a module of its own: cascade.protocol.ranking's ``ranking``).

Over 400 lines: one section per kind, each with its four parts side by side.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
from msgspec import Struct

from cascade.base.errors import CascadeError
from cascade.protocol import findings, packet
from cascade.protocol.behaviours import Registry

LIST_SEP = " | "  # between the items of a list field, as the stamp holds them
REF_TYPES = ("supports", "counters", "extends", "questions", "responds_to")  # typed edges
FIELD_KINDS = Registry("field kind")


class Field(Struct, frozen=True):
    name: str
    choices: tuple[str, ...] | None  # None: free text (or references)
    fallback: str  # what a missing or invalid value becomes (and a note says so)
    refs: bool = False  # message ids the turn cites, as typed edges named by the field
    kind: str = ""  # "" (choices or text), number, list, scores, panel, refs, packet, ...
    edge: str = ""  # a refs field's edge type (its name, unless refs:<type>)
    low: float = 0.0  # number: its range; scores: each score's range
    high: float = 0.0
    names: tuple[str, ...] = ()  # scores: the criteria, the overall score last
    flag_below: float = 0.0  # scores: an overall score below this flags the turn
    aim: tuple[float, float] | None = None  # number: the range asked for (a note outside it);
    # list: how many items are asked for
    choices_of: tuple[str, ...] = ()  # shortlist: each item's decision (the last: the fallback)
    absent: bool = False  # choices: a missing or invalid value is not stamped (a note says so)
    parts: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # items: each key, its kind
    # (text, choices, ref, refs, names, list, items) and its choices (items: its own keys,
    # each as ``key:kind``, a choice's as ``key:[a/b/c]``)
    also: tuple[str, ...] = ()  # other names a reply may give the field by (the seed's)


Read = Callable[[Field, Any, Any], tuple[dict[str, str], "str | None"]]


class Kind(Struct, frozen=True):
    """A field kind's four parts. ``parse(name, spec, step id, path, line) -> Field``;
    ``shape(field) -> str`` (its JSON in the reply's shape); ``read(field, value, reply) ->
    (stamped values, note or None)`` -- None: not a value of the reply (references, a panel:
    read elsewhere); a kind registered with the trait ``shown`` is also given the turns the
    speaker was shown (``shown=``); ``section(field, stamped, value) -> markdown or None``;
    ``table``: the step's table, when the kind aggregates the step's replies."""

    parse: Callable[[str, Any, str, Path, "int | None"], Field]
    shape: Callable[[Field], str]
    read: Read | None = None
    section: Callable[[Field, dict[str, str], Any], "str | None"] | None = None
    # the table the tool writes after the step, in place of its replies' (run, step id,
    # round, field, names by alias) -> markdown or None: an aggregate (a peer ranking's)
    table: Callable[[Any, str, int, Field, dict[str, str]], str | None] | None = None


def num(value: float) -> str:
    return f"{value:g}"


def column_title(name: str) -> str:
    """A field's name as a title: ``wouldChangeIf`` -> ``Would change if``."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").split()
    return " ".join(words).capitalize() if words else name


def shift_field(step) -> str | None:
    """The step's field that says how far a position moved (``positionShift``, ``shift``)."""
    if step is None:
        return None
    return next((f.name for f in step.fields if f.name in ("positionShift", "shift")), None)


def split_list(value: str) -> list[str]:
    return [v.strip() for v in value.split(LIST_SEP.strip()) if v.strip()]


def join_list(value: object) -> str:
    """A list field's items, each one line, as the stamp holds them (`` | `` between)."""
    if isinstance(value, str):
        value = [value] if value.strip() else []
    if not isinstance(value, list):
        return ""
    out = []
    for item in value[:8]:
        if isinstance(item, dict):  # {"question": ..., "whyOpen": ...}: its texts, in order
            item = " -- ".join(str(v) for v in item.values() if isinstance(v, (str, int, float)))
        text = " ".join(str(item).replace("|", "/").split())[:240] if isinstance(
            item, (str, int, float)) else ""
        if text:
            out.append(text)
    return LIST_SEP.join(out)


def shortlist_table(f: Field, value: str) -> str:
    """A stamped shortlist as a markdown table, for the block's body."""
    rows = ["| Idea | " + " | ".join(n.capitalize() for n in f.names) + " | Decision |",
            "|---|" + "---|" * (len(f.names) + 1)]
    for item in split_list(value):
        decision, numbers, idea = (item.split(" ", 2) + ["", ""])[:3]
        rows.append(f"| {idea.replace('|', '/')} | " + " | ".join(numbers.split("/"))
                    + f" | {decision} |")
    return "\n".join(rows)


def parse_field(name: str, spec: object, sid: str, path: Path, line: int | None) -> Field:
    """One reply field of a step, from its declaration: the kind it names."""
    # a word names its kind (refs:<edge> too); a list is choices; a mapping names its kind
    # by its first key that is one (each kind says how it may be declared: its traits)
    if isinstance(spec, str):
        key, how = spec.partition(":")[0], "word"
    elif isinstance(spec, list):
        key, how = "choices", "list"
    elif isinstance(spec, dict):  # the registered kinds first: a package's only if none is
        key = next((k for k in spec if FIELD_KINDS.has(str(k), "mapping", load=False)),
                   next((k for k in spec if FIELD_KINDS.has(str(k), "mapping")), ""))
        how = "mapping"
    else:
        key, how = "", ""
    kind = FIELD_KINDS.behaviour(key) if key and FIELD_KINDS.has(key, how) else None
    if kind is None:
        raise _unknown(name, sid, path, line)
    also = spec.get("also", ()) if isinstance(spec, dict) else ()
    also = [also] if isinstance(also, str) else also
    if not isinstance(also, list | tuple) or not all(isinstance(a, str) and a for a in also):
        raise field_error(name, sid, "also takes a name or a list of names", path, line)
    if also:  # {<kind>: ..., also: [names]}: the reply may give the field by those names
        spec = {k: v for k, v in spec.items() if k != "also"}
    field = kind.fn.parse(name, spec, sid, path, line)
    return msgspec.structs.replace(field, also=tuple(also)) if also else field


def parse_fallback(spec: object, fields, sid: str, path: Path,
                   line: int | None) -> tuple[str, tuple[tuple[str, Any], ...]]:
    """A step's ``fallback``: the comment an empty or unusable reply gets, and the fields it
    gives (``{comment: ..., <field>: <value>, ...}``: the seed's ``focus``, ``next_focus``);
    each value a text or a list of texts (``{topic}``: the title)."""
    if spec is None or isinstance(spec, str):
        return str(spec or "").strip(), ()
    names = {f.name for f in fields}
    ok = isinstance(spec, dict) and all(
        (isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v)))
        and (k == "comment" or k in names) for k, v in spec.items())
    if not ok or not isinstance(spec.get("comment"), str):
        raise CascadeError(f"step {sid!r}: fallback takes a comment, or {{comment: <text>, "
                           "<field>: <text or list of texts>, ...}} naming the step's fields "
                           f"({', '.join(sorted(names)) or 'none'})", path, line)
    return spec["comment"].strip(), tuple(
        (str(k), tuple(v) if isinstance(v, list) else v) for k, v in spec.items()
        if k != "comment")


def given(f: Field, extra: dict[str, Any]) -> object:
    """The value a reply gives for ``f`` (its keys lower-cased): by the field's name, else by
    one of the names it is ``also`` given by (the seed's ``qualityScore`` for ``scores``)."""
    for key in (f.name, *f.also):
        if key.lower() in extra:
            return extra[key.lower()]
    return None


def _unknown(name: str, sid: str, path: Path, line: int | None) -> CascadeError:
    return CascadeError(f"step {sid!r}: field {name!r} must be text, list, refs, panel, a "
                        "list of choices (each a string: quote yes, no, on, off, which YAML "
                        "reads as true and false; {choices: [...], missing: absent} records a missing "
                        "one as absent), {number: [low, high]}, {scores: [names]}, "
                        "{list: [fewest, most]}, {shortlist: [criteria], decisions: "
                        "[words]}, {items: {key: kind}} or {packet: [keys]} (a mapping may add "
                        "also: [other names a reply may give it by])", path, line)


def field_error(name: str, sid: str, says: str, path: Path, line: int | None) -> CascadeError:
    """A field declared wrong: ``step 'sid': field 'name': <says>``, at its line."""
    return CascadeError(f"step {sid!r}: field {name!r}: {says}", path, line)


def read_fields(fields, reply, shown=()) -> tuple[dict[str, str], list[str]]:
    """The values of ``fields`` in a reply (cascade.turns.replies.Reply; None: none came),
    each by its kind; a missing or invalid value gets the field's fallback and a note.
    ``shown``: the turns the speaker was shown (a kind with the trait ``shown`` reads them)."""
    values: dict[str, str] = {}
    notes: list[str] = []
    extra = {str(k).lower(): v for k, v in (reply.extra if reply else {}).items()}
    for f in fields:
        kind = FIELD_KINDS.behaviour(f.kind or "text")
        if kind is None or kind.fn.read is None:
            continue
        more = {"shown": shown} if "shown" in kind.traits else {}
        stamped, note = kind.fn.read(f, given(f, extra), reply, **more)
        values.update(stamped)
        notes += [note] if note else []
    return values, notes


def shape(f: Field) -> str:
    """The field in the JSON shape the prompt asks for."""
    kind = FIELD_KINDS.behaviour(f.kind or "text")
    return f'"{f.name}": ' + (kind.fn.shape(f) if kind is not None else '"<text>"')


def sections(fields, stamped: dict[str, str], extra: dict[str, Any]) -> list[str]:
    """What the block's body shows of the fields (a shortlist's table, a packet as passed)."""
    out = []
    for f in fields:
        kind = FIELD_KINDS.behaviour(f.kind or "text")
        if kind is not None and kind.fn.section is not None:
            text = kind.fn.section(f, stamped, given(f, extra))
            if text:
                out.append(text)
    return out


# --- text and choices ------------------------------------------------------------------

def _parse_text(name, spec, sid, path, line) -> Field:
    """``text``, or ``{text: [fewest, most]}``: characters asked for (a note outside)."""
    if isinstance(spec, dict):
        bounds = spec.get("text")
        if (set(spec) != {"text"} or not isinstance(bounds, list) or len(bounds) != 2
                or not all(isinstance(b, int) and not isinstance(b, bool) and b >= 0
                           for b in bounds) or bounds[0] > bounds[1]):
            raise field_error(name, sid, "text takes [fewest, most] characters", path, line)
        return Field(name, None, "", aim=(float(bounds[0]), float(bounds[1])))
    if spec != "text":
        raise _unknown(name, sid, path, line)
    return Field(name, None, "")


def _parse_choices(name, spec, sid, path, line) -> Field:
    """``[a, b, c]``: a missing or invalid value is the last (the cautious fallback);
    ``{choices: [a, b, c], missing: absent}``: it is recorded as absent (not stamped), for a
    field whose every choice would say something the reply did not (a shift)."""
    missing = None
    if isinstance(spec, dict):
        missing = spec.get("missing")
        if set(spec) - {"choices", "missing"} or missing not in (None, "absent", *(
                spec.get("choices") or ())):
            raise field_error(name, sid, "{choices: [...], missing: absent} takes the choices "
                              "and, for missing, absent or one of them", path, line)
        spec = spec.get("choices")
    if not isinstance(spec, list) or not spec or not all(isinstance(c, str) for c in spec):
        raise _unknown(name, sid, path, line)
    if missing == "absent":
        return Field(name, tuple(spec), "", absent=True)
    return Field(name, tuple(spec), missing or spec[-1])  # the last: the cautious fallback


def _read_plain(f: Field, value: object, reply) -> tuple[dict[str, str], str | None]:
    """A choice (the fallback when missing or invalid, with a note) or a text. A step's
    ``vote`` is the reply's vote (READY, CHANGES, REJECT; as ACCEPT/REJECT when it asks
    for those)."""
    if f.name == "vote":
        if reply is None or reply.cut:
            raw = None
        elif f.choices and "ACCEPT" in f.choices:
            raw = {"READY": "ACCEPT", "REJECT": "REJECT", "CHANGES": "REJECT"}.get(
                reply.vote or "", None)
        else:
            raw = reply.vote
    else:
        raw = str(value).strip().upper() if isinstance(value, (str, int, float)) else None
    if f.choices is None:
        text = str(value or "")[:1000 if f.aim else 500]
        if f.aim is not None and not f.aim[0] <= len(text.strip()) <= f.aim[1]:
            return {f.name: text}, (f"{f.name}: {len(text.strip())} characters; "
                                    f"{int(f.aim[0])} to {int(f.aim[1])} asked for")
        return {f.name: text}, None
    chosen = next((c for c in f.choices if raw is not None and c.upper() == raw), None)
    if chosen is not None:
        return {f.name: chosen}, None
    shown = "no value" if raw is None else repr(raw)
    if f.absent:
        return {}, f"{f.name}: {shown} given; recorded as absent"
    return {f.name: f.fallback}, f"{f.name}: {shown} given; taken as {f.fallback}"


def _shape_plain(f: Field) -> str:
    if f.choices:
        return " | ".join(f'"{c}"' for c in f.choices)
    return f'"<text, {int(f.aim[0])} to {int(f.aim[1])} characters>"' if f.aim else '"<text>"'


FIELD_KINDS.register("text", Kind(_parse_text, _shape_plain, _read_plain),
                     traits=("word", "mapping"))
FIELD_KINDS.register("choices", Kind(_parse_choices, _shape_plain, _read_plain),
                     traits=("list", "mapping"))


def _parse_ballot(name, spec, sid, path, line) -> Field:
    raise _unknown(name, sid, path, line)  # a phase's vote: declared as its choices


def ballot(choices) -> Field:
    """A phase's vote: the reply's own vote (or none: a participant may comment without
    voting), written as the block's ``VOTE:`` line, never stamped as a field."""
    return Field("vote", tuple(choices), "", kind="ballot")


# not declared in a protocol file: a phased protocol's steps ask it (their ``vote`` choices)
FIELD_KINDS.register("ballot", Kind(_parse_ballot, lambda f: _shape_plain(f) + " | null"))


# --- references and a panel: read elsewhere (cascade.run.protocol_run cited, _panel) -----------

def _parse_refs(name, spec, sid, path, line) -> Field:
    # cited message ids: edges of a type (supports, ...), the field's name unless given
    edge = spec.partition(":")[2].strip() or name
    if edge not in REF_TYPES:
        raise CascadeError(f"step {sid!r}: a refs field's edge type is one of "
                           f"{', '.join(REF_TYPES)}, not {edge!r} (name it so, or write "
                           "refs:<type>)", path, line)
    return Field(name, None, "", refs=True, kind="refs", edge=edge)


def _parse_panel(name, spec, sid, path, line) -> Field:
    if spec != "panel":
        raise _unknown(name, sid, path, line)
    return Field(name, None, "", kind="panel")


FIELD_KINDS.register("refs", Kind(_parse_refs, lambda f: '["<message id shown above>", ...]'),
                     traits=("word",))


def _parse_references(name, spec, sid, path, line) -> Field:
    """``references`` (any typed edge but ``responds_to``) or ``{references: [edge, ...]}``:
    cited messages, each with its relation and a short comment on why."""
    edges = spec.get("references") if isinstance(spec, dict) else [
        e for e in REF_TYPES if e != "responds_to"]
    if spec != "references" and not isinstance(spec, dict):
        raise _unknown(name, sid, path, line)
    if (not isinstance(edges, list) or not edges or not all(e in REF_TYPES for e in edges)
            or (isinstance(spec, dict) and set(spec) != {"references"})):
        raise field_error(name, sid, "references takes a list of edge types, each one of "
                          + ", ".join(REF_TYPES), path, line)
    return Field(name, tuple(edges), "", refs=True, kind="references")


def reference_item(item: object) -> tuple[str, str, str]:
    """A cited message as a reply gives it: an id, or ``{"targetId": ..., "relation": ...,
    "comment": ...}`` (``type`` for the relation, ``id`` for the target, as some write
    them); (id, relation, comment), "" for what is not given."""
    if isinstance(item, dict):
        given = {str(k).lower(): v for k, v in item.items()}
        target = next((given[k] for k in ("targetid", "messageid", "id") if k in given), "")
        relation = next((given[k] for k in ("relation", "type") if k in given), "")
        why = given.get("comment") or given.get("why") or ""
        return (str(target).strip() if isinstance(target, (str, int)) else "",
                str(relation).strip().lower() if isinstance(relation, str) else "",
                " ".join(str(why).split())[:240] if isinstance(why, str) else "")
    return (str(item).strip(), "", "") if isinstance(item, (str, int)) else ("", "", "")


def _references_section(f: Field, stamped: dict[str, str], value: object) -> str | None:
    items = split_list(stamped.get(f.name, ""))
    return "**References**:\n\n" + "\n".join(f"- {i}" for i in items) if items else None


FIELD_KINDS.register("references", Kind(
    _parse_references,
    lambda f: ('[{"targetId": "<message id shown above>", "relation": '
               + " | ".join(f'"{e}"' for e in f.choices or ()) + ', "comment": "<why>"}, ...]'),
    None, _references_section), traits=("word", "mapping"))


PANEL_SHAPE = ('{"experts": [{"id": "<lower-case-id>", "name": "<name>", "expertise": ["<area>", '
               '...], "thinkingStyle": "<text>", "bias": "<text>", "replyTendency": "<text>", '
               '"stakes": "<what they lose from a bad decision>", "blindSpots": ["<text>", ...]'
               '}, ...], "tensionMap": [{"between": ["<id>", "<id>"], "axis": "<X vs. Y>", '
               '"description": "<text>"}, ...], "problemDefinition": {"statement": "<text>", '
               '"scope": "<text>", "successCriteria": "<text>"}}')
FIELD_KINDS.register("panel", Kind(_parse_panel, lambda f: PANEL_SHAPE), traits=("word",))


# --- list ------------------------------------------------------------------------------

def _parse_list(name, spec, sid, path, line) -> Field:
    if isinstance(spec, str):
        if spec != "list":
            raise _unknown(name, sid, path, line)
        return Field(name, None, "", kind="list")
    bounds = spec.get("list")  # {list: [low, high]}: how many items
    if (not isinstance(bounds, list) or len(bounds) != 2 or not all(
            isinstance(b, int) and not isinstance(b, bool) and b >= 0 for b in bounds)
            or bounds[0] > bounds[1]):
        raise field_error(name, sid, "list takes [fewest, most] items", path, line)
    return Field(name, None, "", kind="list", aim=(float(bounds[0]), float(bounds[1])))


def _read_list(f: Field, value: object, reply) -> tuple[dict[str, str], str | None]:
    joined = join_list(value)
    count = len(split_list(joined))
    note = None
    if f.aim is not None and not f.aim[0] <= count <= f.aim[1]:
        note = f"{f.name}: {count} given; {int(f.aim[0])} to {int(f.aim[1])} asked for"
    return {f.name: joined}, note


FIELD_KINDS.register("list", Kind(
    _parse_list, lambda f: '["<text>", ...]' if f.aim is None else
    f"[{int(f.aim[0])} to {int(f.aim[1])} texts]", _read_list), traits=("word", "mapping"))


# --- items: a list of records, each with the keys declared ----------------------------

ITEM_SEP = " -- "  # between an item's values, in the declared order, as the stamp holds them
NAME_SEP = ", "  # between the names (persona ids) of a ``names`` key
TEXT_SEP = "; "  # between the texts of a ``list`` key
SUB_SEP = " // "  # between the records of an ``items`` key (a record inside a record)
SUB_VALUE = " ~ "  # between the values of such a record
_MSG_ID = re.compile(r"^r\d+-msg-\d+$")
_FLAT = ("text", "ref", "refs", "names", "list")  # a key's kinds besides choices and items


Part = tuple[str, str, tuple[str, ...]]  # an items field's key: (key, kind, choices)


def _parts(keys: object, nested: bool = False) -> list[Part] | None:
    """The keys of an items field, the first a text; None: not all of a kind a key may have.
    An ``items`` key (not inside another) holds its own keys as ``key:kind`` (``key:[a/b]``
    for choices)."""
    out: list[Part] = []
    for key, kind in keys.items() if isinstance(keys, dict) else ():
        if isinstance(kind, list) and kind and all(
                isinstance(c, str) and c and not (nested and set(c) & set("/[]")) for c in kind):
            out.append((str(key), "choices", tuple(kind)))
        elif kind in _FLAT and not (nested and kind in ("ref", "refs")):
            out.append((str(key), str(kind), ()))
        elif isinstance(kind, dict) and set(kind) == {"items"} and not nested:
            inner = _parts(kind["items"], nested=True)
            if inner is None:
                return None
            out.append((str(key), "items", tuple(
                f"{k}:{'[' + '/'.join(c) + ']' if t == 'choices' else t}" for k, t, c in inner)))
        else:
            return None
    return out if out and out[0][1] == "text" else None


def _inner(part: Part) -> list[Part]:
    """An ``items`` key's own keys, as (key, kind, choices)."""
    out = []
    for spec in part[2]:
        key, _, kind = spec.partition(":")
        out.append((key, "choices", tuple(kind[1:-1].split("/"))) if kind.startswith("[")
                   else (key, kind, ()))
    return out


def _parse_items(name, spec, sid, path, line) -> Field:
    """``{items: {key: text | ref | refs | names | list | [choices] | {items: {...}}, ...}}``:
    records of those keys (the first a text: what an item given as a bare string is);
    ``names``: persona ids, ``list``: texts, ``items``: records (of text, names, list or
    choices), each a list the reply gives."""
    parts = _parts(spec.get("items"))
    if set(spec) != {"items"} or parts is None:
        raise field_error(name, sid, "items takes a mapping of each key to text, ref, refs, "
                          "names, list, a list of choices or {items: {key: kind}}, the first a "
                          "text", path, line)
    return Field(name, None, "", kind="items", parts=tuple(parts))


def _cell(value: object, width: int = 300) -> str:
    text = " ".join(str(value).replace("|", "/").split())
    return text.replace(ITEM_SEP.strip(), "-")[:width] if text else ""


def _texts(raw: object) -> list[object]:
    return raw if isinstance(raw, list) else ([raw] if raw not in (None, "", [], {}) else [])


def _item_value(kind: str, choices: tuple[str, ...], raw: object) -> tuple[str, bool]:
    """One key's value as stamped, and whether it was taken as given."""
    if kind == "choices":
        shown = str(raw).strip().lower() if isinstance(raw, (str, int, float, bool)) else ""
        chosen = next((c for c in choices if c.lower() == shown), None)
        return (chosen, True) if chosen else (choices[-1], False)
    if kind in ("ref", "refs"):
        ids = raw if isinstance(raw, list) else str(raw or "").replace(",", " ").split()
        ids = [reference_item(i)[0] for i in ids]  # {"messageId": ..., "summary": ...} too
        good = [i for i in ids if _MSG_ID.match(i)]
        good = good[:1] if kind == "ref" else list(dict.fromkeys(good))
        return " ".join(good), len(good) == len(ids) and bool(good)
    if kind == "names":  # persona ids: a list, or one string of them
        raw = raw.replace(",", " ").split() if isinstance(raw, str) else raw
        names = [_cell(n, 60).replace(",", " ").strip().lstrip("@") for n in _texts(raw)
                 if isinstance(n, (str, int, float))]
        return NAME_SEP.join(dict.fromkeys(n for n in names if n)), raw is not None
    if kind == "list":
        texts = [_cell(t, 200).replace(";", ",") for t in _texts(raw)
                 if isinstance(t, (str, int, float))]
        return TEXT_SEP.join(t for t in texts[:8] if t), raw is not None
    if kind == "items":
        return _records(choices, raw)
    return _cell(raw) if isinstance(raw, (str, int, float)) else "", raw is not None


def _records(spec: tuple[str, ...], raw: object) -> tuple[str, bool]:
    """An ``items`` key: its records (a bare string: the first key), each its values."""
    parts, out, ok = _inner(("", "items", spec)), [], raw is not None
    for item in _texts(raw)[:6]:
        item = {parts[0][0]: item} if isinstance(item, str) else item
        if not isinstance(item, dict):
            ok = False
            continue
        given_ = {str(k).lower(): v for k, v in item.items()}
        cells = []
        for key, kind, choices in parts:
            stamped, good = _item_value(kind, choices, given_.get(key.lower()))
            ok = ok and (good or kind == "text")
            cells.append(stamped.replace(SUB_VALUE.strip(), "-").replace(
                SUB_SEP.strip(), "/") or "-")
        if cells[0] != "-":
            out.append(SUB_VALUE.join(cells))
    return SUB_SEP.join(out), ok


def _read_items(f: Field, value: object, reply) -> tuple[dict[str, str], str | None]:
    """Each item's values in the declared order (`` -- `` between, ``-`` for none): a
    missing or unknown choice is the cautious one (the last), an id that is not a message
    id is dropped; a note says how many were taken so."""
    items = value if isinstance(value, list) else ([value] if value else [])
    out, fixed = [], 0
    for item in items[:10]:
        if isinstance(item, str):
            item = {f.parts[0][0]: item}
        if not isinstance(item, dict):
            fixed += 1
            continue
        given_ = {str(k).lower(): v for k, v in item.items()}
        cells = []
        for key, kind, choices in f.parts:
            stamped, ok = _item_value(kind, choices, given_.get(key.lower()))
            fixed += 0 if ok or kind in ("text", "names", "list", "items") else 1
            cells.append(stamped or "-")
        if cells[0] != "-":
            out.append(ITEM_SEP.join(cells))
    note = (f"{f.name}: {fixed} missing or invalid value(s) taken as the cautious choice or "
            "dropped" if fixed else None)
    return {f.name: LIST_SEP.join(out)}, note


def _decoded(part: Part, cell_: str) -> object:
    """A stamped key's value as data: refs, names and list keys a list, items records."""
    kind = part[1]
    if kind == "refs":
        return cell_.split()
    if kind in ("names", "list"):
        sep = NAME_SEP if kind == "names" else TEXT_SEP
        return [v.strip() for v in cell_.split(sep.strip()) if v.strip()]
    if kind == "items":
        inner = _inner(part)
        return [{k: _decoded((k, t, c), v.strip() if v.strip() != "-" else "")
                 for (k, t, c), v in zip(inner, record.split(SUB_VALUE.strip()))}
                for record in cell_.split(SUB_SEP.strip()) if record.strip()]
    return cell_


def items_of(f: Field, stamped: str) -> list[dict[str, object]]:
    """A stamped items field as records (a refs, names or list key: a list; an items key: a
    list of records; ``-``: empty)."""
    out = []
    for item in split_list(stamped):
        cells = item.split(ITEM_SEP.strip())
        record: dict[str, object] = {}
        for part, cell_ in zip(f.parts, [c.strip() for c in cells]):
            record[part[0]] = _decoded(part, "" if cell_ == "-" else cell_)
        out.append(record)
    return out


def _items_shape(f: Field) -> str:
    shown = {"text": '"<text>"', "ref": '"<message id shown above>"',
             "refs": '["<message id shown above>", ...]', "names": '["<persona id>", ...]',
             "list": '["<text>", ...]'}

    def one(k: str, kind: str, choices: tuple[str, ...]) -> str:
        if kind == "choices":
            return f'"{k}": ' + " | ".join(f'"{c}"' for c in choices)
        if kind == "items":
            return f'"{k}": [{{' + ", ".join(one(*p) for p in _inner((k, kind, choices))) + "}, ...]"
        return f'"{k}": ' + shown[kind]
    return "[{" + ", ".join(one(*p) for p in f.parts) + "}, ...]"


def _shown_value(v: object) -> str:
    """A record's value in a line: a list comma-separated, records ``first (key: value)``."""
    if isinstance(v, list) and v and isinstance(v[0], dict):
        return "; ".join(
            str(next(iter(r.values()), "")) + (" (" + ", ".join(
                f"{column_title(k).lower()}: {_shown_value(x)}" for k, x in list(r.items())[1:]
                if x) + ")" if any(list(r.values())[1:]) else "") for r in v)
    return ", ".join(map(str, v)) if isinstance(v, list) else str(v)


def item_line(f: Field, record: dict[str, object]) -> str:
    """One record of an items field as a markdown list item: its first value, then the
    others named (``confidence: high; evidence: r1-msg-002, r1-msg-003``)."""
    first = f.parts[0][0]
    rest = "; ".join(f"{column_title(k).lower()}: " + _shown_value(v)
                     for k, v in record.items() if k != first and v)
    return f"- {record[first]}" + (f" ({rest})" if rest else "")


def _items_section(f: Field, stamped: dict[str, str], value: object) -> str | None:
    records = items_of(f, stamped.get(f.name, ""))
    if not records:
        return None
    return f"**{column_title(f.name)}**:\n\n" + "\n".join(item_line(f, r) for r in records)


FIELD_KINDS.register("items", Kind(_parse_items, _items_shape, _read_items, _items_section),
                     traits=("mapping",))


# --- number ----------------------------------------------------------------------------

def _parse_number(name, spec, sid, path, line) -> Field:
    bounds = spec.get("number")
    if (not isinstance(bounds, list) or len(bounds) != 2
            or not all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in bounds)
            or bounds[0] >= bounds[1]):
        raise field_error(name, sid, "number takes [low, high]", path, line)
    fallback = spec.get("fallback", bounds[0])
    if not isinstance(fallback, (int, float)) or not bounds[0] <= fallback <= bounds[1]:
        raise field_error(name, sid, f"fallback must be within {bounds}", path, line)
    aim = spec.get("aim")
    if aim is not None and (not isinstance(aim, list) or len(aim) != 2 or not all(
            isinstance(a, (int, float)) and bounds[0] <= a <= bounds[1] for a in aim)):
        raise field_error(name, sid, f"aim takes [low, high] within {bounds}", path, line)
    return Field(name, None, num(fallback), kind="number", low=float(bounds[0]),
                 high=float(bounds[1]),
                 aim=(float(aim[0]), float(aim[1])) if aim is not None else None)


def _read_number(f: Field, value: object, reply) -> tuple[dict[str, str], str | None]:
    try:
        number = float(value) if isinstance(value, (int, float, str)) and not isinstance(
            value, bool) else None
    except ValueError:
        number = None
    if number is None or number != number or not f.low <= number <= f.high:
        shown = "no value" if value is None else repr(value)[:40]
        return {f.name: f.fallback}, f"{f.name}: {shown} given; taken as {f.fallback}"
    if f.aim is not None and not f.aim[0] <= number <= f.aim[1]:
        return {f.name: num(number)}, (f"{f.name} {num(number)} is outside the "
                                       f"{num(f.aim[0])}-{num(f.aim[1])} asked for")
    return {f.name: num(number)}, None


FIELD_KINDS.register("number", Kind(
    _parse_number, lambda f: f"<a number from {num(f.low)} to {num(f.high)}>", _read_number),
    traits=("mapping",))


# --- scores ----------------------------------------------------------------------------

def _bounds(spec: dict) -> Any:
    bounds = spec.get("range", [1, 5])
    ok = (isinstance(bounds, list) and len(bounds) == 2
          and all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)
          and bounds[0] < bounds[1])
    return bounds if ok else None


def _parse_scores(name, spec, sid, path, line) -> Field:
    names = spec.get("scores")
    if (not isinstance(names, list) or not names
            or not all(isinstance(n, str) and n for n in names)):
        raise field_error(name, sid, "scores takes a list of names, the overall score last",
                          path, line)
    bounds = _bounds(spec)
    if bounds is None:
        raise field_error(name, sid, "range takes [low, high]", path, line)
    flag = spec.get("flag_below", 0)
    if not isinstance(flag, (int, float)) or isinstance(flag, bool):
        raise field_error(name, sid, "flag_below must be a number", path, line)
    return Field(name, None, str(bounds[0]), kind="scores", low=float(bounds[0]),
                 high=float(bounds[1]), names=tuple(names), flag_below=float(flag))


def _read_scores(f: Field, value: object, reply) -> tuple[dict[str, str], str | None]:
    """Scores by criterion, each within the field's range; a missing or invalid one is the
    lowest (the cautious value). The last criterion is the overall score: below the flag,
    the turn is flagged."""
    given = {str(k).lower(): v for k, v in value.items()} if isinstance(value, dict) else {}
    parts, missing = [], []
    overall = f.low
    for name in f.names:
        raw = given.get(name.lower())
        try:
            score = int(raw) if not isinstance(raw, bool) and raw is not None else None
        except (TypeError, ValueError):
            score = None
        if score is None or not f.low <= score <= f.high:
            missing.append(name)
            score = int(f.low)
        parts.append(f"{name}:{score}")
        overall = score
    out = {f.name: ",".join(parts)}
    if f.flag_below:
        out["flagged"] = "yes" if overall < f.flag_below else "no"
    note = (f"{f.name}: {', '.join(missing)} missing or out of range; taken as {int(f.low)}"
            if missing else None)
    return out, note


def _scores_shape(f: Field) -> str:
    return "{" + ", ".join(f'"{n}": <{num(f.low)}-{num(f.high)}>' for n in f.names) + "}"


FIELD_KINDS.register("scores", Kind(_parse_scores, _scores_shape, _read_scores),
                     traits=("mapping",))


# --- shortlist -------------------------------------------------------------------------

def _parse_shortlist(name, spec, sid, path, line) -> Field:
    names, decisions = spec.get("shortlist"), spec.get("decisions")
    bounds = _bounds(spec)
    if (not isinstance(names, list) or not names
            or not all(isinstance(n, str) and n for n in names)
            or not isinstance(decisions, list) or not decisions
            or not all(isinstance(c, str) and c for c in decisions) or bounds is None):
        raise field_error(name, sid, "shortlist takes a list of criteria, decisions (a list "
                          "of words, the cautious one last) and a range [low, high]", path, line)
    return Field(name, None, decisions[-1], kind="shortlist", low=float(bounds[0]),
                 high=float(bounds[1]), names=tuple(names), choices_of=tuple(decisions))


def _read_shortlist(f: Field, value: object, reply) -> tuple[dict[str, str], str | None]:
    """Scored items, each ``<decision> <score>/<score>/... <idea>`` (`` | `` between): an
    item's missing or invalid score is the lowest, its missing or unknown decision the
    cautious one (the last); an item without an idea is dropped. A note says what was
    taken so."""
    items = value if isinstance(value, list) else []
    out, fixed = [], 0
    for item in items[:8]:
        if not isinstance(item, dict):
            fixed += 1
            continue
        given = {str(k).lower(): v for k, v in item.items()}
        idea = given.get("idea") or given.get("title") or given.get("name")
        if not isinstance(idea, str) or not idea.strip():
            fixed += 1
            continue
        scores = given.get("scores") if isinstance(given.get("scores"), dict) else given
        scores = {str(k).lower(): v for k, v in scores.items()}
        numbers = []
        for name in f.names:
            raw = scores.get(name.lower())
            ok = isinstance(raw, (int, float)) and not isinstance(raw, bool) and \
                f.low <= raw <= f.high
            fixed += 0 if ok else 1
            numbers.append(str(int(raw)) if ok else str(int(f.low)))
        raw = str(given.get("decision") or "").strip().lower()
        decision = next((c for c in f.choices_of if c.lower() == raw), None)
        if decision is None:
            fixed += 1
            decision = f.fallback
        text = " ".join(idea.replace("|", "/").split())[:160]
        out.append(f"{decision} {'/'.join(numbers)} {text}")
    if not items and not out:
        return {f.name: ""}, f"{f.name}: no items given"
    note = (f"{f.name}: {fixed} missing or invalid value(s) taken as the lowest score or "
            f"{f.fallback}" if fixed else None)
    return {f.name: LIST_SEP.join(out)}, note


def _shortlist_shape(f: Field) -> str:
    return ('[{"idea": "<text>", "scores": {' + ", ".join(
        f'"{n}": <{num(f.low)}-{num(f.high)}>' for n in f.names) + '}, "decision": '
        + " | ".join(f'"{c}"' for c in f.choices_of) + '}, ...]')


FIELD_KINDS.register("shortlist", Kind(
    _parse_shortlist, _shortlist_shape, _read_shortlist,
    lambda f, stamped, value: shortlist_table(f, stamped[f.name]) if stamped.get(f.name)
    else None), traits=("mapping",))


# --- packet (cascade.protocol.packet) --------------------------------------------------

def _parse_packet(name, spec, sid, path, line) -> Field:
    keys = spec.get("packet")  # a bridge packet: its whitelisted keys
    if (not isinstance(keys, list) or not keys
            or not all(isinstance(k, str) and k.replace("_", "").isalnum() for k in keys)):
        raise field_error(name, sid, "packet takes a list of its keys (words joined by _)",
                          path, line)
    return Field(name, None, "", kind="packet", names=tuple(keys))


def _read_packet(f: Field, value: object, reply) -> tuple[dict[str, str], str | None]:
    stamped, _, note = packet.check(f, value)
    return stamped, note


FIELD_KINDS.register("packet", Kind(
    _parse_packet,
    lambda f: "{" + ", ".join(f'"{k}": ["<text>", ...]' for k in f.names) + "}",
    _read_packet, lambda f, stamped, value: packet.check(f, value)[1]), traits=("mapping",))


# --- findings (cascade.protocol.findings) -----------------------------------------------

def _parse_findings(name, spec, sid, path, line) -> Field:
    """``findings``: what a verdict says is wrong -- each with a severity, where (a short
    quote or a section heading), what, why and a suggestion; the field is named findings
    (the policy reads it by that name)."""
    if spec != "findings" or name != findings.FIELD:
        raise field_error(name, sid, "a findings field is declared as findings: findings",
                          path, line)
    return Field(name, None, "", kind="findings")


def _read_findings(f: Field, value: object, reply) -> tuple[dict[str, str], str | None]:
    """The findings, read tolerantly (not yet located: the turn locates them in the revision
    it reviewed), and the open findings the reply says are resolved."""
    found, notes = findings.read(value)
    out = {f.name: findings.encode(found)}
    extra = {str(k).lower(): v for k, v in (reply.extra if reply else {}).items()}
    resolved = findings.resolved_ids(extra.get(findings.RESOLVED))
    if resolved:
        out[findings.RESOLVED] = ",".join(resolved)
    return out, "; ".join(notes) or None


def _findings_shape(f: Field) -> str:
    return ('[{"severity": ' + " | ".join(f'"{s}"' for s in findings.SEVERITIES)
            + ', "where": "<a short quote of the document, or a section heading>", '
            '"what": "<text>", "why": "<text>", "suggestion": "<text>"}, ...], '
            f'"{findings.RESOLVED}": ["<id of an open finding shown above that this revision '
            'resolves>", ...]')


# the block shows them numbered on from the ledger's: written by the turn (cascade.run.step_turn)
FIELD_KINDS.register("findings", Kind(_parse_findings, _findings_shape, _read_findings),
                     traits=("word",))
