"""``cascade stats [--json]``: the panel, measured, over every ledger of the repository (a
governed decision's and a topic's), each read as ``cascade status`` reads it. What each figure
counts: docs/stats.md."""
from __future__ import annotations

import contextlib
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from cascade.base.errors import CascadeError, display_path
from cascade.base.gitio import git_or_none, read_blobs, repo_root
from cascade.base.text import json_printable, printable
from cascade.check.governance import LedgerReader
from cascade.commands._common import find_ledgers
from cascade.commands.list import governed_rows
from cascade.commands.status import knowing_authors
from cascade.config.rules import SEVERITIES
from cascade.ledger.records import OUTCOME, Event
from cascade.protocol.discussion import Discussion
from cascade.protocol.findings import STATUSES

BLOCKING = ("CHANGES", "REJECT")
CONCLUDED = ("READY", *BLOCKING)  # an outcome a vote can agree with
_NONCE = re.compile(r"\bn=([0-9a-f]+)")


class Reviewed(Struct):
    """A ledger read for the figures: the discussion, the rule it is counted under (a topic:
    ``topic (<protocol>)``), its document and its ledger (repository-relative; a topic has no
    document)."""

    discussion: Discussion
    rule: str
    document: str
    ledger: str


class Counts(Struct):
    """What a persona's replies, or the replies under one rule, came to."""

    name: str
    discussions: int = 0
    replies: int = 0
    votes: int = 0
    blocks: int = 0
    findings: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SEVERITIES, 0))
    fates: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    tokens: int = 0
    cost: float = 0.0
    priced: int = 0  # replies whose cost is known

    def count(self, reply) -> None:
        self.replies += 1
        if reply.vote:
            self.votes += 1
            self.blocks += reply.vote in BLOCKING
        tokens = [reply.provenance.get(k) for k in ("prompt_tokens", "completion_tokens")]
        self.tokens += sum(int(t) for t in tokens if t and t.isdigit())
        if cost := reply.provenance.get("cost"):
            with contextlib.suppress(ValueError):
                self.cost += float(cost)
                self.priced += 1

    def found(self, finding) -> None:
        self.findings[finding.severity] = self.findings.get(finding.severity, 0) + 1
        self.fates[finding.status] = self.fates.get(finding.status, 0) + 1

    def common(self) -> dict[str, Any]:
        per = self.discussions or None
        return {"name": self.name, "discussions": self.discussions, "replies": self.replies,
                "votes": self.votes, "blocks": self.blocks,
                "block_rate": _ratio(self.blocks, self.votes),
                "findings": dict(self.findings), "findings_by_state": dict(self.fates),
                "tokens": self.tokens, "tokens_per_discussion":
                    round(self.tokens / per, 1) if per else None,
                "cost": round(self.cost, 6) if self.priced else None,
                "cost_per_discussion": round(self.cost / per, 6) if per and self.priced
                else None}


class Persona(Counts):
    """A persona's figures: ``Counts``, and how its last vote in each discussion stood
    against the conclusion."""

    concluded: int = 0  # discussions concluded READY, CHANGES or REJECT where it voted
    agreed: int = 0  # of those, where its last vote went the way of the conclusion
    overruled: int = 0  # where a person's decision in force went the other way

    def as_dict(self) -> dict[str, Any]:
        return {**self.common(), "concluded": self.concluded, "agreed": self.agreed,
                "agreement": _ratio(self.agreed, self.concluded), "overruled": self.overruled}


class Rule(Counts):
    """A rule's figures: ``Counts``, how its discussions concluded, people's decisions in
    force, and the commits and days each concluded one took."""

    outcomes: dict[str, int] = field(default_factory=dict)  # "open": not concluded
    decided: int = 0  # discussions whose conclusion is a person's decision in force
    commits: list[int] = field(default_factory=list)
    days: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {**self.common(), "outcomes": dict(self.outcomes), "decided": self.decided,
                "to_conclusion": {"measured": len(self.commits),
                                  "commits": _spread(self.commits), "days": _spread(self.days)}}


class Stats(Struct):
    """The figures of a repository: per persona and per rule (each sorted by name), and the
    ledgers that could not be read (path: why)."""

    personas: list[Persona]
    rules: list[Rule]
    discussions: int
    unread: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"discussions": self.discussions,
                "personas": [p.as_dict() for p in self.personas],
                "rules": [r.as_dict() for r in self.rules], "unread": self.unread}


def counted_as(d: Discussion, rule: str, document: str, ledger: str) -> Reviewed:
    """A ledger read, to be counted under its rule (none: a topic, under its protocol)."""
    return Reviewed(d, rule or f"topic ({d.protocol.name})", document, ledger)


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _spread(values: list) -> dict[str, Any] | None:
    if not values:
        return None
    return {"median": round(statistics.median(values), 2), "min": min(values), "max": max(values)}


def _way(vote: str) -> bool:
    return vote == "READY"


def reviewed(root: Path) -> tuple[list[Reviewed], dict[str, str]]:
    """Every ledger of the repository, read as ``cascade status`` reads it: governed ones
    under their rule, the others as topics; and those that cannot be read (path: why)."""
    rows, governed = governed_rows(root, reviews=False)  # each ledger is read once, here
    items: list[Reviewed] = []
    unread: dict[str, str] = {}
    paths = [(r.ledger, r.rule, r.source) for r in rows if r.ledger is not None]
    paths += [(p, "", "") for p in find_ledgers(root) if p.resolve() not in governed]
    reader = LedgerReader(root)  # the rules read once for every ledger
    for path, rule, document in paths:
        rel = path.resolve().relative_to(root.resolve()).as_posix()
        try:
            d = knowing_authors(reader.open(path))
            item = counted_as(d, rule, document, rel)
            d.state  # derived now: a ledger that cannot be is named, not counted
        except CascadeError as exc:
            unread[rel] = exc.message
            continue
        items.append(item)
    return items, unread


def tally(items: list[Reviewed], root: Path) -> Stats:
    """The figures of ``items``, and the commits and days to each conclusion (read from
    ``root``'s git history: ``landings``)."""
    personas: dict[str, Persona] = {}
    rules: dict[str, Rule] = {}
    landed = landings(root, items)
    for item in items:
        rule = rules.setdefault(item.rule, Rule(item.rule))
        _count(item.discussion, rule, personas)
        if item.ledger in landed:
            rule.commits.append(landed[item.ledger][0])
            rule.days.append(landed[item.ledger][1])
    return Stats(sorted(personas.values(), key=lambda p: p.name.lower()),
                 sorted(rules.values(), key=lambda r: r.name.lower()), len(items))


def _count(d: Discussion, rule: Rule, personas: dict[str, Persona]) -> None:
    """One discussion's replies, findings and conclusion, counted for its rule and personas."""
    s = d.state
    forged = {x.line for x in s.forged}
    replies = [c for c in d.ledger.comments if c.origin == "ai" and c.line not in forged]
    outcome = s.conclusion.outcome
    decision = s.decision if s.decision is not None and s.decision.in_force else None
    rule.discussions += 1
    rule.outcomes[outcome or "open"] = rule.outcomes.get(outcome or "open", 0) + 1
    rule.decided += decision is not None and outcome == decision.vote
    last: dict[str, str] = {}
    for c in replies:
        persona = personas.setdefault(c.author, Persona(c.author))
        persona.count(c)
        rule.count(c)
        if c.vote:
            last[c.author] = c.vote
    authors = dict.fromkeys(c.author for c in replies)
    for name in authors:
        personas[name].discussions += 1
    for f in d.findings:
        rule.found(f)
        if f.author in authors:
            personas[f.author].found(f)
    for name, vote in last.items():
        persona = personas[name]
        if outcome in CONCLUDED:
            persona.concluded += 1
            persona.agreed += _way(vote) == _way(outcome)
        if decision is not None and _way(vote) != _way(decision.vote):
            persona.overruled += 1


def _marker(d: Discussion) -> str | None:
    """The nonce of what recorded the discussion's conclusion: the block of the decision in
    force, else the ledger's last OUTCOME event of that outcome; None: not concluded."""
    s = d.state
    outcome = s.conclusion.outcome
    if not outcome:
        return None
    if s.decision is not None and s.decision.in_force and s.decision.vote == outcome:
        block = next((c for c in d.ledger.comments if c.line == s.decision.line), None)
        return block.provenance.get("n") if block is not None else None
    for entry in reversed(d.ledger.entries):
        if isinstance(entry, Event) and entry.kind == OUTCOME and \
                entry.value.split()[:1] == [outcome]:
            m = _NONCE.search(entry.stamp)
            return m.group(1) if m else None
    return None


def landings(root: Path, items: list[Reviewed]) -> dict[str, tuple[int, float]]:
    """For each concluded discussion of ``items`` (by ledger): the commits of HEAD's history
    that touched its document or its ledger up to the one that recorded its conclusion (the
    first whose ledger holds the concluding entry's nonce), by commit date, and the days from
    the first of them to it. One ``git log`` for every path, one ``git cat-file --batch`` for
    the ledgers' versions: a repository of hundreds of decisions costs two processes."""
    markers = {item.ledger: m for item in items if (m := _marker(item.discussion))}
    if not markers:
        return {}
    concluded = [item for item in items if item.ledger in markers]
    touched = _touching(root, sorted({p for item in concluded
                                      for p in (item.document, item.ledger) if p}))
    specs = [f"{commit}:{item.ledger}" for item in concluded
             for commit, _ in touched.get(item.ledger, ())]
    versions = read_blobs(root, specs)
    out: dict[str, tuple[int, float]] = {}
    for item in concluded:
        mark = f"n={markers[item.ledger]}".encode()
        landed = next(((c, t) for c, t in reversed(touched.get(item.ledger, ()))
                       if mark in versions.get(f"{c}:{item.ledger}", b"")), None)
        if landed is None:  # not committed yet
            continue
        times = {c: t for path in (item.document, item.ledger) if path
                 for c, t in touched.get(path, ())}
        before = [t for t in times.values() if t <= landed[1]]
        out[item.ledger] = (len(before), round((landed[1] - min(before)) / 86400, 2))
    return out


def _touching(root: Path, paths: list[str]) -> dict[str, list[tuple[str, int]]]:
    """The commits of HEAD's history (newest first, with their times) touching each path."""
    out: dict[str, list[tuple[str, int]]] = {}
    for start in range(0, len(paths), 500):  # a command line of a few hundred paths
        log = git_or_none(root, "log", "HEAD", "--format=%x00%H %ct", "--name-only",
                          "--no-renames", "--", *paths[start:start + 500])
        for chunk in (log or b"").decode("utf-8", "surrogateescape").split("\0")[1:]:
            lines = chunk.strip().splitlines()
            commit, when = lines[0].split()
            for path in lines[1:]:
                out.setdefault(path.strip(), []).append((commit, int(when)))
    return out


def repository_stats(root: Path) -> Stats:
    items, unread = reviewed(root)
    stats = tally(items, root)
    stats.unread = unread
    return stats


def stats(as_json: bool = False) -> int:
    root = repo_root()
    figures = repository_stats(root)
    if as_json:
        print(json_printable(json.dumps(figures.as_dict(), indent=2)))
        return 0
    print(printable(stats_text(figures)))
    for path, why in figures.unread.items():
        print(f"cascade stats: {display_path(root / path)}: not counted: {why}",
              file=sys.stderr)
    return 0


def _n(count: float, word: str) -> str:
    """``1 vote``, ``2 votes``, ``0.5 days``."""
    return f"{count:g} {word}" if count == 1 else f"{count:g} {word}s"


def percent(part: int, whole: int) -> str:
    """``25%``; ``-`` of nothing (the text and the site's panel say it the same way)."""
    return f"{part / whole:.0%}" if whole else "-"


def findings_text(c: Counts) -> str:
    """``1 critical, 1 major (1 waived, 1 overridden)``, or ``none``."""
    found = [f"{n} {s}" for s, n in c.findings.items() if n]
    if not found:
        return "none"
    fates = ", ".join(f"{n} {s}" for s, n in c.fates.items() if n)
    return f"{', '.join(found)} ({fates})"


def _spend(c: Counts) -> str:
    if not c.discussions or not c.tokens and not c.priced:
        return "tokens: not known"
    said = f"{c.tokens / c.discussions:,.0f} tokens per discussion"
    return said + (f", ${c.cost / c.discussions:.4f} per discussion" if c.priced else "")


def stats_text(s: Stats) -> str:
    """The figures in words: a paragraph per persona, then per rule."""
    if not s.discussions:
        return "No discussions yet: nothing to measure."
    out = [f"The panel over {_n(s.discussions, 'discussion')}.", "", "Personas:"]
    for p in s.personas:
        out += [f"  {p.name}: {_n(p.discussions, 'discussion')}, "
                f"{p.replies} {'reply' if p.replies == 1 else 'replies'}, "
                f"{_n(p.votes, 'vote')}, {_n(p.blocks, 'block')} "
                f"({percent(p.blocks, p.votes)})",
                f"    findings: {findings_text(p)}",
                f"    last vote as concluded: {p.agreed} of {p.concluded} "
                f"({percent(p.agreed, p.concluded)}); overruled by a person: {p.overruled}",
                f"    {_spend(p)}"]
    if not s.personas:
        out.append("  none replied yet")
    out += ["", "Rules:"]
    for r in s.rules:
        ended = ", ".join(f"{n} {o}" for o, n in sorted(r.outcomes.items()))
        out += [f"  {r.name}: {_n(r.discussions, 'discussion')} ({ended}), "
                f"{_n(r.votes, 'vote')}, {_n(r.blocks, 'block')} "
                f"({percent(r.blocks, r.votes)})",
                f"    findings: {findings_text(r)}",
                f"    decided by a person: {r.decided}; to conclusion: "
                f"{'median ' + landing(r) if r.commits else 'none concluded in a commit yet'}",
                f"    {_spend(r)}"]
    return "\n".join(out)


def landing(r: Rule) -> str:
    """The commits and days to a conclusion: ``2 commits (1-3), 2 days (0-4) over 3`` (the
    medians, their range, how many were measured); "" when none concluded in a commit."""
    if not r.commits:
        return ""
    commits, days = _spread(r.commits), _spread(r.days)
    return (f"{_n(commits['median'], 'commit')} ({commits['min']}-{commits['max']}), "
            f"{_n(days['median'], 'day')} ({days['min']:g}-{days['max']:g}) over "
            f"{len(r.commits)}")
