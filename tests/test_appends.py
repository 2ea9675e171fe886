"""An append reads only what it appends, and the state it derives is the state a fresh parse
of the whole text derives (cascade.protocol.discussion, cascade.protocol.derivation.derivation).

Each case appends a long seeded run of blocks and events of every kind, one by one, through
``Discussion`` -- persona turns (for this revision, another, cut), people's comments and votes,
decisions, revisions (new, carried over, back to an earlier text), vote resets (keeping
people's votes), phase transitions, outcomes, settings, rounds, failures, decision-point
answers, a generated panel's events, events that do not hold (refused) -- with saves,
discards, and another writer's appends read back between them. After every step the
discussion's ledger and state must equal those of ``Discussion.from_text`` over its text.
"""
from __future__ import annotations

import random

import msgspec.structs
import pytest

from cascade.base.errors import CascadeError
from cascade.ledger.consensus import VotingConfig
from cascade.ledger.records import (
    FAILURE,
    NEXT,
    PERSONA,
    PROBLEM,
    ROUND,
    SETTINGS,
    SOURCE_REVISION,
    TENSION,
    VOTE_RESET,
)
from cascade.protocol.authority import Authority
from cascade.protocol.state import block_id
from cascade.protocol.discussion import Discussion
from cascade.protocol.panel import persona_name

PANEL = {"architect": "AI-Architect", "security": "AI-Security", "pragmatist": "AI-Pragmatist"}
PEOPLE = ["Rob Smith", "Dana Reviewer"]
BODIES = [
    "Looks fine to me.",
    "Q: what about the retry bound?\n- TODO: measure the p99 of path 3\nCONCERN: outages",
    "A: the queue is capped at 10,000 events.\nDONE: measure the p99 of path 3",
    "A(Q1): capped, see above.\nDONE(T1): measured: 180 ms\nDECISION: adopt the capped queue",
    "```python\nx = 1  # --- not a delimiter\n```\n@security please check the stamp",
    "ASSIGNED: @pragmatist writes the migration\n\n> Q: quoted, not a question",
]


def header(protocol: str, phase: str | None, source: str | None) -> str:
    lines = ["<!-- DISCUSSION -->", "<!-- Title: Event store -->"]
    if source:
        lines.append(f"<!-- Source: {source} -->")
    lines.append(f"<!-- Protocol: {protocol} -->")
    if phase:
        lines.append(f"<!-- Phase: {phase} -->")
    lines += ["<!-- Status: OPEN -->", "<!-- Participants: architect, security, pragmatist -->"]
    return "\n".join(lines) + "\n\n# ADR: Event store\n\n*Discussion begins below.*\n"


def view(d: Discussion):
    """What must not depend on how the text was read: the ledger, the state, what is read
    from them."""
    state = d.state
    return (d.ledger, d.ledger.open_fence, state, msgspec.structs.asdict(state.result), d.phase,
            d.status, d.votes, d.questions, d.answers, d.todos, d.decisions, d.concerns,
            d.mentions, d.events, d.source, d.title)


class Script:
    """One seeded run of appends to ``d``, checked against a fresh parse after each."""

    def __init__(self, d: Discussion, rng: random.Random, authority: Authority | None) -> None:
        self.d, self.rng, self.authority = d, rng, authority
        self.revisions: list[str] = []
        self.refused = self.steps = 0

    def check(self) -> None:
        d = self.d
        fresh = Discussion.from_text(d.text, d.path, root=d.root, authority=self.authority)
        assert view(d) == view(fresh), f"after step {self.steps}"

    def revision(self) -> str | None:
        return self.rng.choice(self.revisions) if self.revisions else None

    # ---- the appends ----------------------------------------------------------------------

    def turn(self) -> None:
        alias = self.rng.choice([*PANEL, "researcher"])
        name = "AI-Researcher" if alias == "researcher" else PANEL[alias]
        current = self.d.source_revision
        stamp = {"model": "test", "seen": "all",
                 "revision": current if self.rng.random() < 0.8 else self.revision()}
        vote = self.rng.choice(["READY", "READY", "CHANGES", "REJECT", None])
        if self.rng.random() < 0.1:
            stamp["cut"] = "1"
            vote = None
        if stamp["revision"] is None:
            del stamp["revision"]
        self.d.add_comment(name, self.rng.choice(BODIES), vote, provenance=stamp,
                           untrusted=True)

    def person(self) -> None:
        self.d.add_comment(self.rng.choice(PEOPLE), self.rng.choice(BODIES),
                           self.rng.choice(["READY", "CHANGES", "REJECT", None]))

    def decision(self) -> None:
        vote = self.rng.choice(["READY", "REJECT", "CHANGES"])
        who = self.rng.choice(PEOPLE)
        self.d.add_comment(who, f"**Decision: {vote}** -- {who} decides.\n\nBecause.", None,
                           provenance={"vote": vote, "by": f"{who} <{who[0]}@example.org>",
                                       "revision": self.d.source_revision or ""},
                           origin="decision")

    def new_revision(self) -> None:
        choice = self.rng.random()
        blob = "%040x" % self.rng.getrandbits(160)
        if choice < 0.3 and self.revisions:  # status or spacing changed only: carried over
            same = self.rng.choice(self.revisions)
            self.d.add_event(SOURCE_REVISION, blob, path="docs/adr/0007.md", core="c0re",
                             **{"same-as": same})
        else:
            self.d.add_event(SOURCE_REVISION, blob, path="docs/adr/0007.md",
                             core=self.rng.choice(["c0re", "c1re"]))
        self.revisions.append(blob)
        if self.rng.random() < 0.6:  # the tool resets the votes of a new revision
            self.vote_reset()

    def vote_reset(self) -> None:
        keep = [block_id(c) for c in self.d.state.current
                if c.vote and c.origin is None and c.author in PEOPLE]
        if keep and self.rng.random() < 0.5:
            self.d.add_event(VOTE_RESET, "the document changed", keep=",".join(keep))
        else:
            self.d.add_event(VOTE_RESET, "the document changed")

    def panel(self) -> None:
        """A generated panel: the turn that proposes it, its problem, experts and tension
        (the discussion's personas change with them)."""
        self.d.add_comment("AI-Moderator", "I propose this panel.", None,
                           provenance={"model": "test", "panel": "1", "msg": "m1"},
                           untrusted=True)
        self.d.add_event(PROBLEM, "", statement="bound the queue", scope="the writer")
        experts = self.rng.sample(["queue-expert", "sre-lead", "db-admin"], 2)
        for expert in experts:
            self.d.add_event(PERSONA, expert, name=expert.replace("-", " ").title())
        self.d.add_event(TENSION, " ".join(experts), axis="speed-safety")
        self.d.add_comment(persona_name(experts[0]), "As an expert: fine.", "READY",
                           provenance={"model": "test", "seen": "all"}, untrusted=True)

    def advance(self) -> None:
        if self.rng.random() < 0.7:
            self.d.advance()
        else:
            self.d.advance(self.rng.choice(self.d.protocol.phase_ids()))

    def outcome(self) -> None:
        self.d.record_outcome(self.rng.choice(["READY", "REJECT", "CHANGES", "IMPASSE"]))

    def event(self) -> None:
        kind, fields = self.rng.choice([
            (SETTINGS, {"participants": "architect, security", "protocol": "review",
                        "consensus": "threshold_ready=0.5 threshold_reject=0.5"}),
            (SETTINGS, {"consensus": "threshold_ready=1.0 human_required=true"}),
            (ROUND, {}),
            (FAILURE, {"alias": self.rng.choice([*PANEL, "nobody"]), "reason": "timed out",
                       "revision": self.d.source_revision or "none"}),
            (NEXT, {"point": "next-action", "choice": "synthesize"}),
            (PERSONA, {"id": "x1", "name": "Queue Expert"}),
            (TENSION, {"axis": "speed-safety"}),
            (PROBLEM, {"statement": "bound the queue"}),
        ])
        value = str(self.rng.randint(1, 4)) if kind == ROUND else ""
        self.d.add_event(kind, value, **fields)

    def another_writer(self) -> None:
        """Someone else appends to the file; a refresh reads it (appends not saved stay)."""
        self.d.save()
        with open(self.d.path, "a", encoding="utf-8") as f:
            f.write(f"\n---\nName: {self.rng.choice(PEOPLE)}\n\nFrom another clone.\n\n"
                    "VOTE: READY\n---\n")
        self.d.refresh()

    def run(self, steps: int) -> None:
        actions = [(self.turn, 8), (self.person, 4), (self.decision, 1), (self.new_revision, 2),
                   (self.vote_reset, 1), (self.panel, 1), (self.advance, 2), (self.outcome, 2),
                   (self.event, 3), (self.d.save, 1), (self.d.discard, 1), (self.another_writer, 1)]
        for self.steps in range(steps):
            action = self.rng.choices([a for a, _ in actions], [w for _, w in actions])[0]
            try:
                action()
            except CascadeError as exc:  # an event that does not hold, a last phase, ...
                self.refused += 1
                assert exc.exit_code in (1, 2)
            self.check()


@pytest.mark.parametrize("protocol, phase, source, governed", [
    ("phased", "initial_feedback", "docs/adr/0007.md", False),
    ("phased", None, None, False),  # no Phase: in the header: the protocol's first
    ("review", None, "docs/adr/0007.md", True),
    ("pcs", None, "docs/adr/0007.md", True),
    ("swarm", None, None, False),
])
@pytest.mark.parametrize("seed", [1, 2])
def test_appends_one_by_one_derive_what_a_fresh_parse_derives(tmp_path, protocol, phase,
                                                                source, governed, seed):
    authority = Authority(tuple(PANEL), protocol, VotingConfig(human_required=seed == 2),
                          deciders=("Rob Smith",) if seed == 2 else ()) if governed else None
    path = tmp_path / "x.discussion.md"
    path.write_text(header(protocol, phase, source))
    d = Discussion.load(path, root=tmp_path, authority=authority)
    script = Script(d, random.Random(seed), authority)
    script.check()
    script.run(160)
    d.save()
    assert path.read_text() == d.text
    # the run went through what it meant to: appends taken and refused, votes, revisions
    assert script.refused > 20 and len(d.ledger.entries) > 100 and d.votes
    assert {SOURCE_REVISION, VOTE_RESET, SETTINGS, PERSONA} <= {e.kind for e in d.events}
    reread = Discussion.load(path, root=tmp_path, authority=authority)
    assert view(reread) == view(d)


def test_an_append_reads_only_what_it_appends(tmp_path):
    """The entries read before an append are the very objects read after it (nothing read
    again), also across a save; the state is derived again only from what was appended."""
    path = tmp_path / "x.discussion.md"
    path.write_text(header("review", None, None))
    d = Discussion.load(path, root=tmp_path)
    d.add_comment("Rob Smith", "First.", "CHANGES")
    first = d.ledger.entries[0]
    assert d.votes == {"Rob Smith": "CHANGES"}
    d.add_comment("Dana Reviewer", "Second.", "READY")
    d.save()
    d.add_comment("Rob Smith", "Third.", "READY")
    assert d.ledger.entries[0] is first and len(d.ledger.entries) == 3
    assert d.votes == {"Dana Reviewer": "READY", "Rob Smith": "READY"}
    assert d.state.current[0] is first


def test_a_state_once_given_does_not_change_with_later_appends(tmp_path):
    """The derivation goes on after an append; the state it gave before is its own."""
    path = tmp_path / "x.discussion.md"
    path.write_text(header("review", None, "docs/adr/0007.md"))
    d = Discussion.load(path, root=tmp_path)
    d.add_event(SOURCE_REVISION, "ab" * 20, path="docs/adr/0007.md")
    d.add_comment("Rob Smith", "Fine.", "READY")
    d.add_comment("Rob Smith", "**Decision: READY** -- decided.\n\nBecause.", None,
                  provenance={"vote": "READY", "by": "Rob Smith <r@example.org>",
                              "revision": "ab" * 20}, origin="decision")
    before = d.state
    kept = msgspec.structs.replace(before, current=list(before.current),
                               decisions=[msgspec.structs.replace(x) for x in before.decisions])
    d.add_event(SOURCE_REVISION, "cd" * 20, path="docs/adr/0007.md")
    d.add_comment("Dana Reviewer", "Again.", "CHANGES")
    assert d.state.decision is None and d.state.current[-1].author == "Dana Reviewer"
    assert before == kept and before.decision is not None
