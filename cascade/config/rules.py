"""Rules, as a rule file (``.ai-rules.yml``) or a rule preset writes them: the keys of a rule
and of a rule file, declared (cascade.config.schema), and ``Rule``, one rule read with where it
stands. Which rule files apply to a path, and which rule governs it: cascade.config.ruleset.

Reading rules imports only PyYAML: a commit that touches no governed path stays cheap.

Over 400 lines: the table of a rule's keys and the reader of each key that takes more than a
kind stay together, so that every error of a rule is found in one pass (``parse_rule``).
"""
from __future__ import annotations

import datetime as _dt
import posixpath
import re
from pathlib import Path

from cascade.config.schema import (
    Key,
    flag,
    fraction,
    one_of,
    raw,
    read,
    read_all,
    some_texts,
    text,
    texts,
    whole,
    word,
)
from cascade.config.yamlio import LineDict, check_keys, did_you_mean, items_with_lines, start_line
from cascade.base.errors import CascadeError, Found, in_order, raise_all
from cascade.config.globs import glob_match
from cascade.config import protocol_defaults, protocol_options
from cascade.base.resources import LEDGER_SUFFIX

_STATUS_KEYS = {"ready", "reject"}
DEFAULT_STATUS = {"READY": "Accepted", "REJECT": "Rejected"}
_PLACEHOLDERS = {"dir", "stem", "name", "slug", "date"}
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
NEVER_GOVERNED = (LEDGER_SUFFIX, ".sum.md")

DEFAULT_TEMPLATE = "feature"
DEFAULT_DISCUSSION = "{dir}/discussions/{stem}.discussion.md"
DEFAULT_PARTICIPANTS = ("architect", "security", "pragmatist")
DEFAULT_PROTOCOL = protocol_defaults.RULE


class OnConsensus:
    __slots__ = ("path", "template")

    def __init__(self, template: str, path: str) -> None:
        self.template = template
        self.path = path  # pattern, relative to the rule file's folder


_RULE_FIELDS = ("name", "match", "exclude", "template", "discussion", "participants", "protocol",
                "model", "consensus", "revote_on_change", "on_consensus", "deciders", "status",
                "models", "auto", "stage", "distinct_models", "options", "rounds", "base",
                "file", "line", "key_lines", "governs", "drift", "drift_review", "policy",
                "require_location", "hold", "siblings")  # each annotated in Rule


class Rule:
    """One rule, with where it came from. (A plain class: this module is on the hook's fast
    path, where importing msgspec for a record alone would cost more than the rest of the
    work.)"""

    __slots__ = _RULE_FIELDS
    name: str
    match: tuple[str, ...]
    exclude: tuple[str, ...]
    template: str
    discussion: str
    participants: tuple[str, ...]
    protocol: str
    model: str | None
    consensus: dict
    revote_on_change: bool
    on_consensus: OnConsensus | None
    deciders: tuple[str, ...]  # names or e-mail addresses of who may decide; empty: anyone
    status: dict | None  # outcome (READY, REJECT) -> the document's status word, at consensus
    models: dict | None  # a step protocol's tier or role -> (model, *its fallbacks)
    auto: bool  # a step protocol's decision points take their recommended choice (recorded)
    stage: bool  # the hook stages what it wrote for this rule's documents (where it is safe)
    distinct_models: bool  # roles meant to judge independently must differ in model family
    options: tuple[tuple[str, str], ...]  # option -> the name a new discussion runs with
    #        (``mode: deep``: its protocol file offers the option; protocol_options.SECTIONS)
    rounds: int | None  # a step protocol: the rounds a new discussion runs (discuss --rounds)
    governs: tuple[str, ...]  # paths (relative to ``base``) its accepted documents govern,
    #                           unless a document names its own (cascade.check.decision_drift)
    drift: bool  # cascade check warns of the drift of its accepted documents
    drift_review: str | None  # the persona the hook asks about a change to governed paths
    policy: tuple | None  # ((severity, least verdict), ...): what a finding asks of a vote
    require_location: bool  # a blocking vote whose blocking findings are unlocated: advisory
    hold: str | None  # the least severity of an open finding that holds the gate ("none": never)
    base: str  # repository-relative folder the patterns are relative to ("" at the top)
    file: Path  # the rule file it came from (a preset's file for an inherited rule)
    line: int
    key_lines: dict
    siblings: tuple | None  # the rules of its rule file, itself included (None: not known)

    def __init__(self, **fields: object) -> None:
        for key in _RULE_FIELDS:
            setattr(self, key, fields.get(key, {} if key == "key_lines" else None))

    def replace(self, **changes: object) -> Rule:
        return Rule(**{**{k: getattr(self, k) for k in _RULE_FIELDS}, **changes})

    def __repr__(self) -> str:
        return f"Rule({self.name!r}, match={self.match!r}, base={self.base!r}, file={str(self.file)!r})"

    def option(self, name: str) -> str | None:
        return dict(self.options).get(name)

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)

    def where(self, *tops: Path) -> str:
        """Where the rule is written, for messages: ``.ai-rules.yml:3`` (relative to the first
        of ``tops`` that holds its file), or ``preset adr.yml:4``."""
        for top in tops:
            try:
                return f"{Path(self.file).relative_to(top).as_posix()}:{self.line}"
            except ValueError:
                continue
        return f"preset {Path(self.file).name}:{self.line}"

    def _local(self, rel: str) -> str | None:
        if not self.base:
            return rel
        prefix = self.base + "/"
        return rel[len(prefix):] if rel.startswith(prefix) else None

    def matches(self, rel: str) -> bool:
        if rel.endswith(NEVER_GOVERNED):
            return False
        local = self._local(rel)
        if local is None:
            return False
        return (any(glob_match(p, local) for p in self.match)
                and not any(glob_match(p, local) for p in self.exclude))

    def expand(self, pattern: str, doc: str, *, date: str | None = None,
               key: str = "discussion") -> str:
        """A repository-relative path from a path pattern, for the document ``doc``."""
        local = self._local(doc) or doc
        folder, name = posixpath.split(local)
        stem = name.rsplit(".", 1)[0] if "." in name else name
        values = {"dir": folder, "stem": stem, "name": name, "slug": slug(stem),
                  "date": date or _dt.date.today().isoformat()}
        expanded = _PLACEHOLDER.sub(lambda m: values[m.group(1)], pattern)
        joined = posixpath.normpath(posixpath.join(self.base, expanded.lstrip("/")))
        if joined.startswith("../") or joined == ".." or posixpath.isabs(joined):
            raise CascadeError(f"{key} path {pattern!r} leads outside the repository for {doc}",
                               self.file, self.line_of(key))
        return joined

    def ledger_path(self, doc: str, date: str | None = None) -> str:
        return self.expand(self.discussion, doc, date=date)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def _check_pattern(pattern: object, path: Path, line: int, key: str) -> str:
    if not isinstance(pattern, str) or not pattern.strip():
        raise CascadeError(f"rule {key!r} must be a path pattern", path, line)
    for name in _PLACEHOLDER.findall(pattern):
        if name not in _PLACEHOLDERS:
            raise CascadeError(f"unknown placeholder {{{name}}} in {key} (use "
                               f"{', '.join('{' + p + '}' for p in sorted(_PLACEHOLDERS))})"
                               + did_you_mean(name, _PLACEHOLDERS), path, line)
    probe = _PLACEHOLDER.sub("x", pattern)
    parts = probe.replace("\\", "/").split("/")
    if probe.startswith(("/", "~")) or re.match(r"[A-Za-z]:", probe) or ".." in parts:
        raise CascadeError(f"{key} path {pattern!r} must stay inside the repository "
                           "(no leading /, no ..)", path, line)
    return pattern


RULE = {
    "name": Key(text, required=True, label="rule 'name'"),
    "match": Key(texts, required=True, label="rule 'match'"),
    "exclude": Key(some_texts, (), label="rule 'exclude'"),
    "template": Key(text, DEFAULT_TEMPLATE, label="rule 'template'"),
    "protocol": Key(text, DEFAULT_PROTOCOL, label="rule 'protocol'"),
    "model": Key(text, label="rule 'model'"),
    "discussion": Key(raw, DEFAULT_DISCUSSION),  # a path pattern: _check_pattern
    "participants": Key(texts, DEFAULT_PARTICIPANTS, label="rule 'participants'"),
    "deciders": Key(texts, (), label="rule 'deciders'"),
    "consensus": Key(raw, {}),  # CONSENSUS
    "revote_on_change": Key(flag, True),
    "on_consensus": Key(raw),  # ON_CONSENSUS
    "status": Key(raw),  # _status
    "models": Key(raw),  # _models
    "auto": Key(flag, False),
    "stage": Key(flag, True),
    "distinct_models": Key(flag, False, label="rule 'distinct_models'"),
    **{option: Key(word(f"the name of one of the protocol's {section}"), label=option)
       for option, section in protocol_options.SECTIONS.items()},
    "rounds": Key(whole(1)),
    "governs": Key(raw, ()),  # path patterns: _check_pattern
    "drift": Key(raw, False),  # _drift
    "drift_review": Key(word("a persona alias (the persona the hook asks)"),
                        label="rule 'drift_review'"),
    "policy": Key(raw),  # _policy
    "require_location": Key(flag, False),
    "hold": Key(one_of("critical", "major", "minor", "info", "none"), label="rule 'hold'"),
}
RULE_FILE = {
    "extends": Key(some_texts, (), label="rule 'extends'"),
    "rules": Key(raw),  # each a RULE, at its own line: _parse_rules
}
CONSENSUS = {
    "threshold_ready": Key(fraction, label="consensus threshold_ready"),
    "threshold_reject": Key(fraction, label="consensus threshold_reject"),
    "human_required": Key(flag, label="consensus human_required"),
    "persona_votes": Key(one_of("counted", "advisory"), label="consensus persona_votes"),
}
ON_CONSENSUS = {"template": Key(text, required=True), "path": Key(text, required=True)}


def parse_rule(data: object, file: Path, base: str, line: int | None = None) -> Rule:
    """One rule from its YAML; ``line``: where it stands (for a rule that is not a mapping).
    Every error in it is raised at once, each at its line."""
    v, errors = read_all(data, RULE, file, "rule", line)
    r: LineDict = data  # type: ignore[assignment]  # read_all proved it a mapping (load_yaml's)
    line_of = r.line_of
    take = Found(errors).take
    discussion = take(_discussion, v["discussion"], file, line_of("discussion"))
    consensus = take(_consensus, v["consensus"], file, line_of("consensus")) or {}
    on_consensus = take(_on_consensus, v["on_consensus"], file, line_of("on_consensus"))
    lines = dict(r.key_lines)
    governs = take(lambda: tuple(_check_pattern(g, file, line_of("governs"), "governs") for g
                                 in _governs(v["governs"], file, line_of("governs")))) or ()
    models, model_lines = take(_models, v["models"], file, line_of("models")) or (None, {})
    lines.update(model_lines)
    status = take(_status, v["status"], file, line_of("status"))
    policy = take(_policy, v["policy"], file, line_of("policy"))
    drift = take(_drift, v["drift"], file, line_of("drift"))
    raise_all(errors)
    chosen = {k: v.pop(k) for k in protocol_options.SECTIONS}
    options = tuple((k, name) for k, name in chosen.items() if name is not None)
    return Rule(**{**v, "options": options, "status": status, "policy": policy,
                   "models": models, "consensus": consensus, "on_consensus": on_consensus,
                   "discussion": discussion, "governs": governs, "drift": drift,
                   "drift_review": (v["drift_review"].lstrip("@").lower()
                                    if v["drift_review"] else None),
                   "deciders": tuple(" ".join(d.split()) for d in v["deciders"]),
                   "participants": tuple(p.lstrip("@").lower() for p in v["participants"]),
                   "template": v["template"] or DEFAULT_TEMPLATE,
                   "protocol": v["protocol"] or DEFAULT_PROTOCOL},
                base=base, file=file, line=getattr(r, "line", 1) or 1, key_lines=lines)


def _discussion(pattern: object, file: Path, line: int | None) -> str:
    discussion = _check_pattern(pattern, file, line, "discussion")
    if not discussion.endswith(LEDGER_SUFFIX) or discussion.rsplit("/", 1)[-1] == LEDGER_SUFFIX:
        raise CascadeError(f"discussion path {discussion!r} must end in <name>{LEDGER_SUFFIX} "
                           "(ledgers are found, kept append-only and never reviewed by that "
                           "name)", file, line)
    return discussion


def _consensus(value: object, file: Path, line: int | None) -> dict:
    if not value:
        return {}
    given = read(value, CONSENSUS, file, "consensus", line)
    return {k: given[k] for k in value}  # type: ignore[union-attr]  # read: a mapping


def _on_consensus(value: object, file: Path, line: int | None) -> OnConsensus | None:
    if value is None:
        return None
    oc = read(value, ON_CONSENSUS, file, "on_consensus", line)
    return OnConsensus(str(oc["template"]),
                       _check_pattern(oc["path"], file, line, "on_consensus path"))


def _governs(value: object, file: Path, line: int | None) -> tuple[str, ...]:
    """``governs:``: a path pattern or a list of them (relative to the rule file's folder)."""
    if not value:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
        return tuple(value)
    raise CascadeError("rule 'governs' must be a path pattern or a list of them (the paths "
                       "the rule's accepted decisions govern)", file, line)


def _drift(value: object, file: Path, line: int | None) -> bool:
    """``drift:``: warn (cascade check warns of drifted decisions) or off (YAML reads a bare
    ``off`` as false)."""
    if value in ("warn", True):
        return True
    if value in ("off", False):
        return False
    raise CascadeError("rule 'drift' must be warn or off", file, line)


def _models(value: object, file: Path, line: int | None) -> tuple[dict | None, dict]:
    """``models:``: a step protocol's model for each tier (``fast``, ``strong``) or role id
    (``referee``), each a model or a list of them -- the first is the model, the rest its
    fallbacks, tried in order before CASCADE_FALLBACK_MODELS (a persona's own ``model:``
    still comes first). Returns ({key: (model, *fallbacks)}, {"models.<key>": line}); the
    role ids are checked against the protocol (governance.check_references)."""
    if value is None:
        return None, {}
    if not isinstance(value, dict):
        raise CascadeError("models must be a mapping: {fast: M, strong: M, <role>: M or "
                           "[M, fallback, ...]}", file, line)
    key_line = value.line_of if isinstance(value, LineDict) else (lambda _k: line)
    out, lines = {}, {}
    for key, given in value.items():
        where = key_line(key)
        if not isinstance(key, str) or not key.strip():
            raise CascadeError(f"models key {key!r} must be fast, strong or a role of the "
                               "protocol", file, where)
        if given is None:
            continue  # unset: as if not given
        models = [given] if isinstance(given, str) else given
        if isinstance(given, list) and not given:
            raise CascadeError(f"models {key} is an empty list: give a model, or a model and "
                               "its fallbacks", file, where)
        if not isinstance(models, list) or not all(isinstance(m, str) and m.strip()
                                                  for m in models):
            raise CascadeError(f"models {key} must be a model name or a list of them (the "
                               "model, then its fallbacks)", file, where)
        out[key] = tuple(dict.fromkeys(m.strip() for m in models))
        lines[f"models.{key}"] = where
    return out or None, lines


SEVERITIES = ("critical", "major", "minor", "info")  # a finding's (cascade.protocol.findings)
_LEAST = ("READY", "CHANGES", "REJECT")


def _policy(value: object, file: Path, line: int | None) -> tuple | None:
    """``policy:``: each severity of finding mapped to the least verdict it allows
    (``{critical: REJECT, major: CHANGES}``, the default); a severity not named asks
    nothing."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise CascadeError("rule 'policy' must be a mapping of severity (critical, major, "
                           "minor, info) to the least verdict (READY, CHANGES, REJECT)", file,
                           line)
    key_line = value.line_of if isinstance(value, LineDict) else (lambda _k: line)
    out = []
    for key, least in value.items():
        if key not in SEVERITIES:
            raise CascadeError(f"policy key {key!r} must be a severity: "
                               f"{', '.join(SEVERITIES)}", file, key_line(key))
        if least not in _LEAST:
            raise CascadeError(f"policy {key} must be READY, CHANGES or REJECT, not {least!r}",
                               file, key_line(key))
        out.append((key, least))
    return tuple(out)


def _status(value: object, file: Path, line: int | None) -> dict | None:
    """``status:``: true (Accepted / Rejected), false, or the words to write."""
    if value is None or value is False:
        return None
    if value is True:
        return dict(DEFAULT_STATUS)
    if isinstance(value, dict):
        words = check_keys(value, file, _STATUS_KEYS, set(), "status", line)
        out = {}
        for key in _STATUS_KEYS:
            word = words.get(key)
            if word is None:
                continue
            if not isinstance(word, str) or not word.strip() or "\n" in word:
                raise CascadeError(f"status {key} must be a word such as Accepted", file, line)
            out[key.upper()] = word.strip()
        return out or None
    raise CascadeError("rule 'status' must be true, false or {ready: WORD, reject: WORD} (the "
                       "document's status at consensus)", file, line)


def parse_rules(data: LineDict, path: Path, base: str, what: str,
                errors: list[CascadeError] | None = None) -> list[Rule]:
    """The ``rules:`` list of a rule file or a preset: each rule named at its own line. Every
    error of every rule is raised at once, in the order of their lines -- or, given
    ``errors``, added to it (the rules without one are returned)."""
    items = data.get("rules") or []
    if not isinstance(items, list):
        raise CascadeError(f"{what} must be a list", path, data.line_of("rules"))
    found: list[CascadeError] = [] if errors is None else errors
    rules: list[Rule] = []
    seen: set[str] = set()
    for item, line in items_with_lines(items, data.line_of("rules")):
        rule = Found(found).take(parse_rule, item, path, base, line)
        name = item.get("name") if isinstance(item, dict) else None
        if isinstance(name, str) and name in seen:  # said of a rule with errors too
            found.append(CascadeError(f"duplicate rule name {name!r}", path,
                                      start_line(item, line)))
        seen.add(name)
        if rule is not None:
            rules.append(rule)
    if errors is None:
        raise_all(in_order(found))
    return rules

