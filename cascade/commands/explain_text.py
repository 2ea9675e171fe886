"""The text ``cascade explain`` prints: the data cascade.commands.explain gathers about a
path (``explain_data``), as lines of at most WIDTH characters."""
from __future__ import annotations

import textwrap
from typing import Any

WIDTH = 80
_FROM = {"persona": "the persona's model:", "rule": "the rule's model:",
         "CASCADE_MODEL": "CASCADE_MODEL", "embedded default": "embedded default",
         "provider_hint": "the persona's provider_hint",
         "providers default": "the providers' default:",
         "rule models": "the rule's models: or CASCADE_MODEL_STRONG"}


def _wrap(text: str, indent: str = "", more: str = "  ") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + more,
                         break_long_words=False, break_on_hyphens=False) or [indent]


def _patterns(rule: dict[str, Any]) -> list[str]:
    where = f" (relative to {rule['base']}/)" if rule["base"] else ""
    out = [f"match: {', '.join(rule['match'])}{where}"]
    if rule["exclude"]:
        out.append(f"exclude: {', '.join(rule['exclude'])}")
    return out


def explain_text(data: dict[str, Any]) -> str:
    out = [f"Path: {data['path']} ({'a ledger' if data['kind'] == 'ledger' else 'a document'})"]
    if data["kind"] == "ledger":
        out.append(f"Document: {data['document'] or '(none: the header names no Source:)'}")
    files = data["rule_files"]
    out += _wrap(f"Rule files (top down): {', '.join(files) if files else 'none'}", "", "  ")
    for o in data["overrides"]:
        out += _wrap(f"{o['where']} replaces the rule {o['name']!r} of {o['replaces']}", "  ")
    if not data["governed"]:
        out += _wrap(f"Not governed: {data['reason']}.")
        if data["closest"]:
            out.append("Closest rules:")
            for c in data["closest"]:
                out += _wrap(f"{c['rule']!r} ({c['where']}): {c['why']}", "  ")
                out += [line for p in _patterns(c) for line in _wrap(p, "    ")]
        return "\n".join(out)
    out += _rule_lines(data["rule"])
    for other in data["also_matched_by"]:
        out += _wrap(f"also matched by rule {other['rule']!r} ({other['where']}), which does "
                     "not govern it (the nearest file's rule does)", "  ")
    if data["kind"] == "document":
        state = "exists" if data["ledger_exists"] else "not created yet"
        out += _wrap(f"Ledger: {data['ledger']} ({state})")
    proto = data["protocol"]
    phases = " -> ".join(proto["phases"])
    now = f" (now {proto['current']})" if len(proto["phases"]) > 1 else ""
    out += _wrap(f"Protocol: {proto['name']}, phases: {phases}{now}")
    out += _participant_lines(data["participants"])
    if data.get("api_base"):
        out += _wrap(f"  (through CASCADE_API_BASE={data['api_base']})")
    calls = data["calls"]
    n = calls["count"]
    count = (f"{n} call{'s' if n != 1 else ''} (up to {calls['max']} with re-asks)"
             if n else "no call")
    out += _wrap(f"Next review: {count}")
    asked = ", ".join(f"@{a}" for a in calls["personas"])
    out += _wrap(f"{asked}: {calls['why']}" if asked else calls["why"], "  ")
    independence = data.get("independence") or {}
    word = "error" if independence.get("distinct_models") else "warning"
    fix = "" if independence.get("distinct_models") else independence.get("fix", "")
    for line in independence.get("clashes", []):  # an error: the refusal says the fix
        out += _wrap(f"Independence {word}: {line}" + (f"; {fix}" if fix else ""), "", "  ")
    if data.get("findings"):
        out.append(f"Open findings ({len(data['findings'])}), the most severe first:")
        out += [line for f in data["findings"] for line in _wrap(f, "  ")]
    for point in data.get("decisions", []):
        head = "Waiting for a person" if point["waiting"] else "A person decides"
        out += _wrap(f"{head} at {point['title']}: {point['question']}", "", "  ")
        out += point["lines"]
    return "\n".join(out)


def _rule_lines(rule: dict[str, Any]) -> list[str]:
    """The governing rule: where it is written, its patterns and its settings."""
    out = _wrap(f"Governed by: rule {rule['name']!r} ({rule['where']})")
    out += [line for p in _patterns(rule) for line in _wrap(p, "  ")]
    c = rule["consensus"]
    out += _wrap(f"consensus: threshold_ready={c['threshold_ready']:g} "
                 f"threshold_reject={c['threshold_reject']:g}", "  ")
    out += _wrap(f"human_required: {str(c['human_required']).lower()}, persona_votes: "
                 f"{c['persona_votes']}, revote_on_change: "
                 f"{str(rule['revote_on_change']).lower()}", "  ")
    out += _wrap(f"deciders: {', '.join(rule['deciders']) if rule['deciders'] else 'anyone'}",
                 "  ")
    if rule["status"]:
        words = ", ".join(f"{k.upper()} -> {v}" for k, v in rule["status"].items())
        out += _wrap(f"status: at consensus the document's own status moves ({words})", "  ")
    if oc := rule["on_consensus"]:
        out += _wrap(f"on_consensus: {oc['path']} from template {oc['template']!r}", "  ")
    return out


def _participant_lines(participants: list[dict[str, Any]]) -> list[str]:
    """Each participant in a column: alias, name, and the model it would call (and why)."""
    out = ["Participants:"]
    width = max((len(p["alias"]) for p in participants), default=0) + 2
    name_width = max((len(p["name"]) for p in participants), default=0) + 2
    for p in participants:
        if not p["votes"]:
            model = "background: speaks only when mentioned"
        elif p["model"]:
            model = f"{p['model']} ({_FROM[p['model_from']]})"
        else:
            model = "no model: set CASCADE_MODEL"
        out.append(f"  @{p['alias']:<{width - 1}}{p['name']:<{name_width}}{model}")
    return out + _provider_lines(participants)


def _provider_lines(participants: list[dict[str, Any]]) -> list[str]:
    """The declared providers the participants ask (each once, what it runs), and the
    models asked after a failure."""
    voting = [p for p in participants if p["votes"] and p["model"]]
    declared = {p["model"]: p["provider"] for p in voting if p.get("provider")}
    out = [line for name, what in declared.items()
           for line in _wrap(f"{name} is {what}", "  ", "    ")]
    chains = {", ".join(p["fallbacks"]) for p in voting if p.get("fallbacks")}
    if len(chains) == 1:
        out += _wrap(f"after a failure: {chains.pop()}", "  ", "    ")
    return out
