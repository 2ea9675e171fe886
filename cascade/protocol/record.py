"""The discussion record beside a concluded ledger: ``x.record.md`` for ``x.discussion.md``.

Derived from the ledger alone (a header table -- topic, date and time, participants, rounds,
status -- then the consensus or the impasse), so it can be written again at any time and
reads the same. A person's decision in force is the outcome (``State.conclusion``): the
record says it, and how the rounds ended before it. When the synthesizer said the outcome
departs from the author's proposal, its intent interpretation follows.
"""
from __future__ import annotations

import re
from pathlib import Path

from cascade.base.markdown import cell, nested, sentence
from cascade.protocol.fields import shortlist_table
from cascade.protocol.finding_life import closed_listing, listing
from cascade.protocol.graph import mermaid
from cascade.protocol.runstate import IMPASSE, Run, Turn
from cascade.base.resources import LEDGER_SUFFIX

RECORD_SUFFIX = ".record.md"
# The files a protocol may keep beside its ledger (``artifacts:``), by name.
ARTIFACT_SUFFIXES = {"argument-graph": ".argument-graph.json", "synthesis": ".synthesis.md",
                     "synthesis-json": ".synthesis.json", "open-questions": ".open-questions.md",
                     "position-evolution": ".position-evolution.md", "progress": ".progress.md",
                     "summary": ".summary.md", "adr-draft": ".adr-draft.md"}


def _stem(ledger: Path) -> str:
    name = ledger.name
    return name[:-len(LEDGER_SUFFIX)] if name.endswith(LEDGER_SUFFIX) else ledger.stem


def record_path(ledger: Path) -> Path:
    return ledger.with_name(_stem(ledger) + RECORD_SUFFIX)


def artifact_path(ledger: Path, name: str) -> Path:
    return ledger.with_name(_stem(ledger) + ARTIFACT_SUFFIXES[name])


def artifact_paths(ledger: Path, steps) -> list[Path]:
    """The record and every artifact the protocol declares, beside ``ledger`` (written or not)."""
    return [record_path(ledger)] + [artifact_path(ledger, a) for a in steps.artifacts]


def _last(run: Run, alias: str, step_ids: tuple[str, ...]) -> Turn | None:
    turns = [t for t in run.turns if t.alias == alias and t.step in step_ids]
    return turns[-1] if turns else None


def _section(body: str, heading: str) -> str | None:
    m = re.search(rf"^#+\s*{heading}\s*$\n(.*?)(?=^#+\s|\Z)", body, re.M | re.S | re.I)
    return m.group(1).strip() if m else None


def render_record(d, run: Run, when: str) -> str:
    """The record's markdown. ``when``: the conclusion's date and time (UTC)."""
    names = {p.alias: p.name for p in d.personas}
    out = _header(d, run, when, names)
    steps = run.steps.round_steps
    fixed = {r.persona for r in run.steps.fixed_roles}
    synth = [t for t in run.turns if t.alias in fixed and t.step in {s.id for s in steps}]
    after = run.steps.after
    fixed_roles = {r.id for r in run.steps.fixed_roles}
    if after and not any(s.confirm for s in after) and all(
            r in fixed_roles for s in after for r in s.speaking) and any(
            f.name == "verdict" for s in after for f in s.fields):  # a referee's verdict
        synth = [t for t in run.turns if t.step in {s.id for s in after}]
        out += _verdict(run, synth[-1] if synth else None, names)
    elif after or str(run.steps.outcome) == "delivered":  # a synthesis, then a closing vote
        # (swarm); a topic's discussion has none: the synthesis, then the final positions
        done = [t for t in run.turns if t.step in {s.id for s in after if not s.confirm}]
        synth = done or synth  # no synthesis after the rounds: the rounds' last (a facilitator's)
        out += _closing_vote(run, synth, names)
    elif run.outcome == "READY":
        out += _consensus(run, synth, names)
    else:
        out += _divergent(run, synth, names)
    out += _decided(run, "## Recommendation" in out)
    decision = d.state.conclusion.decision
    if decision is not None:  # a person's decision in force: the outcome
        out += ["", "## Decision", "", f"**{decision.vote}** by {decision.by} (line "
                f"{decision.line}), in force: it supersedes the panel's outcome.", "",
                nested(decision.reason.strip())]
    intent = _intent(run, synth if d.source else [])  # a topic has no author's proposal
    if intent:
        out += ["", "## Intent interpretation", "", nested(intent)]
    found = listing(d.findings)
    if found:
        out += ["", "## Open findings", "", *(f"- {line}" for line in found)]
    closed = closed_listing(d.findings)
    if closed:
        out += ["", "## Closed findings", "", *(f"- {line}" for line in closed)]
    if "argument-graph" in run.steps.artifacts:
        name = record_path(d.path).name.replace(RECORD_SUFFIX, ".argument-graph.json")
        out += ["", "## Argument graph", "", f"Who answered whom (`{name}`):", "", mermaid(run)]
    return "\n".join(out).rstrip() + "\n"


def _header(d, run: Run, when: str, names: dict[str, str]) -> list[str]:
    """The record's title, its one-row table (topic, date, participants, rounds, status), the
    ledger and document, and the outcome as its rule explains it."""
    members = [names.get(a, a) for a in run.members if any(
        s.role == run.steps.member_role.id for s in run.steps.round_steps)]
    if not members:  # the fixed roles speak (council's D/P groups)
        members = [names.get(r.persona, r.persona) for r in run.steps.fixed_roles
                   if any(r.id in s.speaking for s in run.steps.all_steps)]
    said = d.state.conclusion  # the outcome in force (a person's decision supersedes)
    delivered = str(run.steps.outcome) == "delivered"  # a topic's: its synthesis, no vote
    status = (f"Decided {said.outcome}" if said.decision is not None else
              {"READY": "Concluded" if delivered else "Consensus", IMPASSE: "Impasse",
               "CHANGES": "Changes requested", "REJECT": "Rejected"}.get(said.outcome or "",
                                                                         "Open"))
    rounds = f"{run.round}" + (" (max reached)" if run.outcome == IMPASSE else "")
    out = [f"# Discussion record: {d.title}", "",
           "| Topic | Date | Participants | Rounds | Status |", "|---|---|---|---|---|",
           f"| {cell(d.title)} | {when} | {cell(', '.join(members))} | {rounds} | {status} |",
           *(["", f"**Objective**: {d.objective}"] if d.objective else []),
           "", f"Ledger: `{d.path.name}`" + (f"; document: `{d.source}`" if d.source else ""),
           ""]
    if said.decision is not None:  # what the rounds reached stays in the history
        out += [f"**Outcome**: {said.outcome}: {said.history}", ""]
        if said.reached is not None:
            out += [f"**The rounds**: {said.reached}: {said.reached_why}", ""]
    elif run.why:
        out += [f"**Outcome**: {run.outcome}: {run.why}", ""]
    return out


def _verdict(run: Run, last: Turn | None, names: dict[str, str]) -> list[str]:
    """A referee's verdict and synthesis, each group's final shortlist, the final positions."""
    steps = run.steps.round_steps
    minority = run.read(last, "minority") if last else None
    out = ["## Verdict", "", (f"**{last.fields.get('verdict', 'REJECT')}** by {last.name}"
                              + (f"; minority view: {minority}" if minority else ""))
           if last else "_(none given: REJECT)_", "", "## Synthesis", "",
           nested(last.body) if last else "_(none)_"]
    listed = [(t, f) for t in run.turns if t.round == run.round for s in steps
              if s.id == t.step for f in s.fields if f.kind == "shortlist"]
    if listed:  # each group's final shortlist
        out += ["", "## Final shortlists"]
        for t, f in listed:
            out += ["", f"### {t.name}", "", shortlist_table(f, t.fields.get(f.name, ""))]
    if run.members and any(s.role == run.steps.member_role.id for s in steps):
        out += ["", "## Final positions", "", *_positions(run, names, (steps[0].id,), False)]
    return out


def _closing_vote(run: Run, synth: list[Turn], names: dict[str, str]) -> list[str]:
    """The synthesis, then each participant's final position and closing vote (a topic's
    discussion has none: the final positions)."""
    voted = any(s.confirm for s in run.steps.after)
    out = ["## Synthesis", "", nested(synth[-1].body) if synth else "_(none)_", ""]
    out += (["## Closing vote", "", "| Participant | Final position | Vote |", "|---|---|---|"]
            if voted else ["## Final positions", "", "| Participant | Final position |",
                           "|---|---|"])
    closing = {s.id for s in run.steps.after}
    for alias in run.members:
        mine = [t for t in run.turns if t.alias == alias and t.step not in closing]
        current = next((run.read(t, "position") for t in reversed(mine)
                        if run.read(t, "position")), None)
        out.append(f"| {cell(names.get(alias, alias))} | {cell(current or '-')} |"
                   + (f" {run.closing.verdicts.get(alias, '-')} |" if voted else ""))
    return out


def _member_steps(run: Run) -> tuple[str, ...]:
    """The round steps a member states a position in: the first the members speak in (not a
    fixed role's question before it), and the steps that answer another's turn."""
    steps = run.steps.round_steps
    member = run.steps.member_role.id
    first = next((s.id for s in steps if s.role == member), steps[0].id)
    return (first,) + tuple(s.id for s in steps if s.target is not None and s.id != first)


def _consensus(run: Run, synth: list[Turn], names: dict[str, str]) -> list[str]:
    """The final synthesis and each participant's key point and vote."""
    return ["## Final synthesis", "", nested(synth[-1].body) if synth else "_(none)_", "",
            "## Key points", "", *_positions(run, names, _member_steps(run)[:1])]


def _positions(run: Run, names: dict[str, str], step_ids: tuple[str, ...],
               votes: bool = True) -> list[str]:
    """Each member's last turn in ``step_ids`` as a position (the field its step reads as
    one, else its first sentences), and its vote (``votes``), as a table."""
    rows = (["| Participant | Final position | Vote |", "|---|---|---|"] if votes
            else ["| Participant | Final position |", "|---|---|"])
    for alias in run.members:
        turn = _last(run, alias, step_ids)
        position = cell(run.read(turn, "position") or sentence(turn.body, 300)) if turn else "-"
        vote = f" {run.closing.verdicts.get(alias, '-')} |" if votes else ""
        rows.append(f"| {cell(names.get(alias, alias))} | {position} |{vote}")
    return rows


def _divergent(run: Run, synth: list[Turn], names: dict[str, str]) -> list[str]:
    """Where the rounds left off without consensus: the last synthesis, when a fixed role
    wrote one (a facilitator's); where the participants stand; the recommendation: the
    synthesizer's (``rounds.on_impasse``), else the last one a synthesis gave."""
    out = ["## Last synthesis", "", nested(synth[-1].body), ""] if synth else []
    out += ["## Divergent positions", "", *_positions(run, names, _member_steps(run))]
    recommend = run.steps.rounds.on_impasse
    rec = [t for t in run.turns if t.step == recommend] if recommend else []
    given = nested(rec[-1].body) if rec else _recommended(run)
    return out + ["", "## Recommendation", "", given or
                  "_(the synthesizer gave none: a person decides)_"]


def _recommended(run: Run) -> str:
    """The last recommendation in words a turn of the rounds gave, in the field its step reads
    as one (a choice of what comes next, such as a quality gate's, is no such advice)."""
    for t in reversed(run.turns):
        step = run.steps.step(t.step)
        name = dict(step.reads).get("recommendation") if step is not None else None
        worded = step is not None and any(f.name == name and f.choices is None
                                          for f in step.fields)
        if worded and t.fields.get(name or ""):
            return t.fields[name or ""]
    return ""


def _decided(run: Run, shown: bool) -> list[str]:
    """The recommendation the rounds ended on (unless ``shown`` already) and how they were
    concluded, when that was said: a person's decision, the round cap's note."""
    rec = "" if shown else _recommended(run)
    out = ["", "## Recommendation", "", nested(rec)] if rec else []
    if run.steering.conclusion:
        out += ["", "## Conclusion", "", nested(run.steering.conclusion)]
    return out


def _intent(run: Run, synth: list[Turn]) -> str | None:
    """How the latest synthesis that departs from the proposal interprets its intent."""
    for t in reversed(synth):
        if run.read(t, "diverged") == "yes":
            return _section(t.body, "Intent interpretation") or (
                "_The synthesizer said the outcome departs from the proposal, without an "
                "interpretation._")
    return None
