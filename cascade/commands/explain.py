"""``cascade explain PATH``: why a document (or a ledger) is reviewed the way it is -- the rule
files consulted (top down, and which nearer rule replaces a same-named one), the rule that
governs it and its settings, its ledger, protocol, participants with their models, and the
calls the next review would make; for a path no rule governs, why not and the closest rules.

No model is called and neither litellm nor Jinja2 is imported.
Exit codes: 0 governed; 1 not governed; 2 bad usage or bad configuration.
"""
from __future__ import annotations

import difflib
import json
import posixpath
from pathlib import Path
from typing import Any

from cascade.commands.explain_text import explain_text
from cascade.config.personas import load_personas
from cascade.config.rules import NEVER_GOVERNED, Rule
from cascade.base.errors import CascadeError, display_path
from cascade.base.gitio import repo_root, tracked
from cascade.ledger.consensus import voting_config
from cascade.ledger.records import PHASE_TRANSITION, SETTINGS
from cascade.loop.discover import find_ledger
from cascade.config.globs import glob_match
from cascade.check.governance import authority, check_shared_ledgers, ledger_rule, repo_relative
from cascade.config.ruleset import RULES_FILE, RuleSet
from cascade.protocol.about import about, offers
from cascade.protocol.authority import settings_fields
from cascade.protocol.discussion import Discussion
from cascade.protocol.engine import call_counts, members_of
from cascade.protocol.finding_life import listing
from cascade.protocol.loader import load_protocol
from cascade.protocol.options import Options, specialize
from cascade.protocol.requests import next_wave
from cascade.protocol.revisions import KINDS, NEW, record_revision
from cascade.protocol.setting import setting_of
from cascade.base.resources import LEDGER_SUFFIX
from cascade.base.safepath import read_inside
from cascade.base.text import json_printable, printable, shown_url
from cascade.turns.independence import FIX, clashes, refusal
from cascade.turns.call import LOCAL_MODEL
from cascade.turns.settings import Settings
from cascade.turns.tiers import fallback_chain, first_model

REPAIR_FACTOR = 2  # a reply that cannot be parsed is asked once more (cascade.turns.asking)


def asks_per_turn(steps) -> int:
    """The most asks one turn can take: a reply that cannot be read is asked once more
    (cascade.turns.asking); where a step asks findings, a blocking vote given without any is
    asked once more as well, and that ask may need its own repair (cascade.run.step_turn)."""
    findings = any(f.kind == "findings" for s in steps.all_steps for f in s.fields)
    return REPAIR_FACTOR * (2 if findings else 1)


def explain(path: str, as_json: bool = False) -> int:
    data = explain_data(path)
    if as_json:
        print(json_printable(json.dumps(data, indent=2, ensure_ascii=False)))
    else:
        print(printable(explain_text(data)))
    refused = (data.get("independence") or {}).get("refused")
    if refused:  # the hook refuses to run it: a configuration error, said as the hook says it
        raise CascadeError(refused["message"], refused["file"], refused["line"])
    return 0 if data["governed"] else 1


def explain_data(path: str) -> dict[str, Any]:
    p = Path(path)
    start = p.parent
    while not start.is_dir() and start != start.parent:  # a document not written yet
        start = start.parent
    root = repo_root(start if start.is_dir() else None)
    rel = repo_relative(p, root)
    if rel is None:
        raise CascadeError("is outside the repository", p)
    rules = RuleSet(root)
    is_ledger = rel.endswith(LEDGER_SUFFIX)
    data: dict[str, Any] = {"path": rel, "kind": "ledger" if is_ledger else "document",
                            "governed": False, "reason": None, "document": None,
                            "ledger": None, "ledger_exists": False, "rule": None,
                            "rule_files": [], "overrides": [], "also_matched_by": [],
                            "protocol": None, "participants": [], "api_base": None,
                            "calls": None, "closest": [], "decisions": []}
    if is_ledger:
        if not p.is_file():
            raise CascadeError("no such discussion file", p)
        doc = Discussion.load(p, setting_of(root)).source
        data.update(document=doc, ledger=rel, ledger_exists=True)
        rule = _ledger_rule(rules, rel, doc, data)
    else:
        doc = data["document"] = rel
        if rel.endswith(NEVER_GOVERNED):
            rule, data["reason"] = None, "summaries (*.sum.md) are never governed"
        else:
            rule = rules.governing(rel)
    where = doc or rel
    cascade, replaced = _cascade(rules, where)
    data["rule_files"] = [posixpath.join(f, RULES_FILE) for f in rules.files_for(where)]
    data["overrides"] = [{"name": new.name, "where": _where(new, root),
                          "replaces": _where(old, root)} for new, old in replaced]
    if rule is None:
        if data["reason"] is None and data["rule_files"]:
            data["reason"] = "no rule matches it"
        elif data["reason"] is None:
            folder = posixpath.dirname(where)
            data["reason"] = (f"no {RULES_FILE} from the top of the repository down to "
                              f"{folder}/" if folder else
                              f"no {RULES_FILE} in the top folder of the repository")
        if doc and not doc.endswith(NEVER_GOVERNED):
            data["closest"] = _closest(cascade, replaced, doc, root)
        return data
    _governed(data, rules, rule, root, doc)
    data["also_matched_by"] = [{"rule": r.name, "where": _where(r, root)} for r in cascade
                               if r is not rule and doc and r.matches(doc)]
    return data


def _ledger_rule(rules: RuleSet, rel: str, doc: str | None, data: dict[str, Any]) -> Rule | None:
    if not doc:
        data["reason"] = ("its header names no Source: document, so no rule governs it "
                          "(its own header decides)")
        return None
    rule = ledger_rule(rules, rel, doc)
    if rule is not None:
        return rule
    other = rules.governing(doc)
    if other is None:
        data["reason"] = f"no rule governs its document, {doc} (its own header decides)"
    else:
        data["reason"] = (f"rule {other.name!r} ({other.where(rules.root)}) gives {doc} the "
                          f"ledger {other.ledger_path(doc)}, not this one")
    return None


def _cascade(rules: RuleSet, rel: str) -> tuple[list[Rule], list[tuple[Rule, Rule]]]:
    """The rules in force for ``rel`` (a nearer file's rule replacing a same-named one), and
    the replacements (nearer, farther)."""
    by_name: dict[str, Rule] = {}
    replaced: list[tuple[Rule, Rule]] = []
    for folder in rules.files_for(rel):
        for rule in rules.rules_in(folder):
            old = by_name.get(rule.name)
            if old is not None:
                replaced.append((rule, old))
            by_name[rule.name] = rule
    return list(by_name.values()), replaced


def _where(rule: Rule, root: Path) -> str:
    where = rule.where(root)
    if where.startswith("preset "):  # inherited through extends:
        where += f" via {posixpath.join(rule.base, RULES_FILE)}"
    return where


def _governed(data: dict[str, Any], rules: RuleSet, rule: Rule, root: Path,
              doc: str | None) -> None:
    auth = authority(rule, root)  # an unknown persona or protocol: configuration error, exit 2
    if doc and data["kind"] == "document":
        check_shared_ledgers({doc: rule}, tracked(root), rules)
        data["ledger"] = find_ledger(root, rule, doc)
        data["ledger_exists"] = (root / data["ledger"]).is_file()
    config = voting_config(rule.consensus, rule.file)
    data["governed"] = True
    data["rule"] = {
        "name": rule.name, "where": _where(rule, root), "line": rule.line,
        "match": list(rule.match), "exclude": list(rule.exclude), "base": rule.base,
        "template": rule.template, "discussion": rule.discussion, "protocol": rule.protocol,
        "model": rule.model,
        "consensus": {"threshold_ready": config.threshold_ready,
                      "threshold_reject": config.threshold_reject,
                      "human_required": config.human_required,
                      "persona_votes": config.persona_votes},
        "deciders": list(rule.deciders or ()), "revote_on_change": bool(rule.revote_on_change),
        "on_consensus": ({"template": rule.on_consensus.template, "path": rule.on_consensus.path}
                         if rule.on_consensus else None),
        "status": ({k.lower(): v for k, v in rule.status.items()} if rule.status else None),
        "policy": dict(auth.policy.least), "require_location": auth.policy.require_location,
    }
    d = (Discussion.load(root / data["ledger"], setting_of(root), authority=auth)
         if data["ledger_exists"] else None)
    protocol = load_protocol(rule.protocol, root)
    data["protocol"] = {"name": protocol.name, "phases": protocol.phase_ids(),
                        "current": d.phase if d is not None else protocol.first_phase}
    personas = load_personas(root)
    settings = Settings.from_env(root)
    data["participants"] = [_participant(personas.get(alias), rule, protocol.steps, settings)
                            for alias in rule.participants]
    data["api_base"] = shown_url(settings.api_base) if settings.api_base else None
    data["calls"] = _calls(root, rule, auth, data, doc, personas)
    data["decisions"] = _decisions(protocol.steps, rule, d)
    data["findings"] = listing(d.findings) if d is not None else []  # open, by severity
    data["independence"] = _independence(protocol.steps, rule, auth, personas, settings)


def _independence(steps, rule: Rule, auth, personas, settings) -> dict[str, Any] | None:
    """Roles meant to judge independently that share a model family (a line each), and,
    under ``distinct_models: true``, the refusal the hook would give (file, line, message)."""
    steps = specialize(steps, Options.of_rule(rule))
    members, fixed = members_of(steps, auth.participants)
    found = clashes(steps, members, fixed, first_model(personas, rule.model, rule.models, settings))
    refused = ({"message": refusal(rule, found), "file": display_path(rule.file),
                "line": rule.line_of("distinct_models")}
               if found and rule.distinct_models else None)
    return {"clashes": [c.line() for c in found], "fix": FIX if found else None,
            "distinct_models": rule.distinct_models, "refused": refused}


def _decisions(steps, rule: Rule, d: Discussion | None) -> list[dict[str, Any]]:
    """A step protocol's decision points, each with its question and what each choice does;
    the one the ledger waits at (``waiting``) with what it is about, as the hook says it."""
    steps = specialize(steps, Options.of_rule(rule))
    told = about(d.state.run, d.personas) if d is not None else None
    out = []
    for step in (*steps.setup, *steps.round_steps, *steps.after):
        if not step.decision:
            continue
        waiting = told is not None and told.step.id == step.id
        out.append({"step": step.id, "title": step.title, "question": step.question,
                    "when": step.when, "waiting": waiting,
                    "lines": told.lines()[1:] if waiting else [f"  {x}" for x in offers(step)]})
    return out


def _participant(persona, rule: Rule, steps, settings) -> dict[str, Any]:
    """The model a participant would ask first (as the hook resolves it: persona, the rule's
    models:, the persona's provider_hint, ...), where it comes from, the declared provider it
    names (a command or a model) and the models asked after it."""
    member = specialize(steps, Options.of_rule(rule)).member_role
    try:
        model, *after = fallback_chain(persona, member.id, steps.tier_of(member), rule.model,
                                       rule.models, settings)
    except CascadeError:
        model, after = None, []
    entry = settings.providers.entry(model) if model else None
    return {"alias": persona.alias, "name": persona.name, "votes": persona.votes,
            "model": model, "model_from": _model_from(persona, rule, model, settings),
            "provider": entry.describe() if entry is not None else None,
            "fallbacks": after if model else []}


def _model_from(persona, rule: Rule, model: str | None, settings) -> str | None:
    """Which setting gave ``model`` (None: no model)."""
    if model is None:
        return None
    for source, given in (("persona", persona.model), ("provider_hint", persona.provider_hint),
                          ("rule", rule.model), ("CASCADE_MODEL", settings.model),
                          ("providers default", settings.providers.default),
                          ("embedded default", LOCAL_MODEL)):
        if given == model:
            return source
    return "rule models"


def _calls(root: Path, rule: Rule, auth, data: dict[str, Any], doc: str | None,
           personas) -> dict[str, Any]:
    """What the next review (the hook, on a commit of the document as it is in the working
    tree) would ask: the turns pending once the hook recorded what it records."""
    steps = load_protocol(rule.protocol, root).steps
    if steps.shape.own_rounds:  # it runs its rounds: the most it can ask
        return _step_calls(rule, specialize(steps, Options.of_rule(rule)))
    if not data["ledger_exists"]:
        asked = [a for a in rule.participants if personas.get(a).votes]
        why = "no ledger yet, so the first review asks every voting participant"
        return _call_count(asked, why, asks_per_turn(steps))
    return _pending_calls(root, rule, auth, root / data["ledger"], doc)


def _step_calls(rule: Rule, steps) -> dict[str, Any]:
    """The calls a round of a step protocol (``steps``, specialized for the rule) makes, and
    the most its rounds can make."""
    if steps.generated:  # experts generated per discussion: the mode's usual panel
        members = [f"<expert {i + 1}>" for i in range(steps.participants.default)]
        fixed = {r.id: r.persona for r in steps.fixed_roles}
    else:
        members, fixed = members_of(steps, rule.participants)
    per_round, once, most = call_counts(steps, len(members))
    chosen = [f"{steps.mode} mode" if steps.mode else "",
              f"{steps.strategy.name} {steps.strategy.kind}" if steps.strategy else "",
              f"{steps.tier or steps.default_tier} tier" if steps.tiers else ""]
    mode = f" ({', '.join(c for c in chosen if c)})" if any(chosen) else ""
    return {"count": per_round, "max": asks_per_turn(steps) * most,
            "personas": [*members, *dict.fromkeys(fixed.values())],
            "why": f"protocol {rule.protocol!r}{mode}: {per_round} calls a round"
                   + (f" and {once} once" if once else "") + f", at most {most} in "
                   f"{steps.rounds.max} rounds (cascade plan shows the steps)"}


def _pending_calls(root: Path, rule: Rule, auth, ledger: Path, doc: str | None) -> dict[str, Any]:
    """The turns pending in the ledger once the hook recorded the rule's settings and the
    document's revision (appended in memory, never saved), and why."""
    d = Discussion.load(ledger, setting_of(root), authority=auth)
    why = ""
    try:
        if d.header_differences():
            d.add_event(SETTINGS, "", rule=rule.name, **settings_fields(auth))
            if "protocol" in d.header_differences():
                d.add_event(PHASE_TRANSITION, f"{d.phase} → {d.protocol.first_phase}")
                why = "the rule's protocol differs from the ledger's: it starts again"
        text = _text(root, doc)
        if text is not None and doc is not None:
            earlier = d.source_revision
            kind = record_revision(d, doc, text, revote=rule.revote_on_change)
            if kind == NEW:
                why = ("the document changed since the revision the ledger recorded"
                       if earlier is not None else "the ledger records no revision yet")
            elif kind in KINDS:
                why = f"{KINDS[kind]}: the review holds"
    except CascadeError:  # an unclosed code fence: nothing can be appended (the hook says so)
        d = Discussion.load(ledger, setting_of(root), authority=auth)
    pending = next_wave(d)
    if not pending:
        if d.decision is not None:
            why = f"a decision is in force ({d.decision.vote} by {d.decision.by})"
        elif d.status != "OPEN":
            why = (f"closed ({d.status}): quiet until the document changes or a persona is "
                   "mentioned")
        else:
            why = "every participant has answered the latest input"
    elif not why:
        why = "; ".join(sorted({r.why for r in pending}))
    return _call_count([r.alias for r in pending], why, asks_per_turn(d.protocol.steps))


def _call_count(asked: list[str], why: str, asks: int) -> dict[str, Any]:
    return {"count": len(asked), "max": asks * len(asked), "personas": asked, "why": why}


def _text(root: Path, doc: str | None) -> bytes | None:
    """The document as it is in the working tree (what would be committed)."""
    if not doc:
        return None
    try:
        return read_inside(root, doc, "the document")
    except (OSError, CascadeError):
        return None


def _closest(cascade: list[Rule], replaced: list[tuple[Rule, Rule]], doc: str,
             root: Path) -> list[dict[str, Any]]:
    """The rules that could have governed ``doc`` (at most three, nearest first), and why not."""
    candidates = [(rule, None) for rule in cascade]
    candidates += [(old, new) for new, old in replaced if old.matches(doc)]
    found = []
    for rule, nearer in candidates:
        local = rule._local(doc)
        if nearer is not None:
            why = (f"it matches, but {_where(nearer, root)} replaces it with a rule of the "
                   "same name that does not")
        elif local is not None and any(glob_match(m, local) for m in rule.match):
            excluded = [x for x in rule.exclude if glob_match(x, local)]
            why = f"excluded by {excluded[0]!r}" if excluded else "it matches"
        else:
            why = "no match pattern matches"
        patterns = [posixpath.join(rule.base, m) for m in rule.match]
        score = max(difflib.SequenceMatcher(None, doc, pat).ratio() for pat in patterns)
        found.append((nearer is None, score, {
            "rule": rule.name, "where": _where(rule, root), "match": list(rule.match),
            "exclude": list(rule.exclude), "base": rule.base, "why": why}))
    found.sort(key=lambda f: (f[0], -f[1]))  # a replaced rule that matched comes first
    return [f for _, _, f in found[:3]]
