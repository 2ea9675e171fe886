"""A bridge packet (seed 004's D/P council, docs/protocols.md): what one group's arbiter passes
to the other groups between rounds -- and nothing else crosses. The packet is checked against
its field's whitelist and re-serialized by the tool: each key a list of short texts, stamped on
the turn as ``<field>.<key>`` with ``<field>=passed``. A packet that does not fit is not passed
on: ``<field>=skipped``, and the turn's block says why. Pure: no model, no file.
"""
from __future__ import annotations

import msgspec.structs

PASSED, SKIPPED = "passed", "skipped"
ITEMS = 6  # items a key may hold
WIDTH = 300  # characters an item may have
SEP = " | "


def check(field, value: object) -> tuple[dict[str, str], str, str | None]:
    """The stamp fields, the markdown the block shows and a note (None when it passed)."""
    if value is None:
        return _skipped(field, "no packet given")
    if not isinstance(value, dict):
        return _skipped(field, f"a packet is an object of {', '.join(field.names)}, not "
                               f"{type(value).__name__}")
    given = {str(k): v for k, v in value.items()}
    unknown = [k for k in given if k not in field.names]
    if unknown:
        return _skipped(field, f"key {unknown[0][:40]!r} is not on the whitelist "
                               f"({', '.join(field.names)})")
    out: dict[str, list[str]] = {}
    for key in field.names:
        items = given.get(key, [])
        items = [items] if isinstance(items, str) else items
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            return _skipped(field, f"{key} must be a list of texts")
        items = [" ".join(i.replace("|", "/").split()) for i in items if i.strip()]
        if len(items) > ITEMS or any(len(i) > WIDTH for i in items):
            return _skipped(field, f"{key} holds more than {ITEMS} items or an item over "
                                   f"{WIDTH} characters")
        if items:
            out[key] = items
    if not out:
        return _skipped(field, "the packet is empty")
    stamp = {field.name: PASSED, **{f"{field.name}.{k}": SEP.join(v) for k, v in out.items()}}
    return stamp, render(out, passed=True), None


def _skipped(field, why: str) -> tuple[dict[str, str], str, str]:
    note = f"{field.name}: not passed on ({why}); the exchange is skipped"
    return ({field.name: SKIPPED},
            f"**Bridge packet**: not passed on to the other group ({why}).", note)


def render(packet: dict[str, list[str]], passed: bool = False) -> str:
    lines = ["**Bridge packet**" + (" (passed to the other group):" if passed else ":")]
    lines += [f"- {key.replace('_', ' ').capitalize()}: " + "; ".join(items)
              for key, items in packet.items()]
    return "\n".join(lines)


def of(turn, name: str) -> dict[str, list[str]] | None:
    """The passed packet a turn carries under field ``name``, as stamped (None: none)."""
    if turn.fields.get(name) != PASSED:
        return None
    prefix = name + "."
    return {k[len(prefix):]: [i.strip() for i in v.split(SEP.strip()) if i.strip()]
            for k, v in turn.fields.items() if k.startswith(prefix) and v}


def view(turn, names: tuple[str, ...]):
    """The turn as another group sees it: its packet alone (None: it passed none)."""
    for name in names:
        packet = of(turn, name)
        if packet:
            return msgspec.structs.replace(turn, body=render(packet), fields={})
    return None
