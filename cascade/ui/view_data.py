"""What the terminal UI shows, read from the ledgers: a row per discussion for the browser and
a view of one discussion. Pure (no Textual): the same reads as ``cascade list`` and ``cascade
status``, so the UI never says something the commands would not."""
from __future__ import annotations

from pathlib import Path

from msgspec import Struct, field

from cascade.commands.status import gate_view, knowing_authors, protocol_view, vote_label
from cascade.base.errors import CascadeError
from cascade.base.gitio import repo_root
from cascade.ledger.parse import HEADER_BYTES, parse_header
from cascade.check.governance import LedgerReader, open_discussion
from cascade.protocol.about import About, about
from cascade.protocol.finding_life import listing
from cascade.base.text import printable

MARKERS = ("Q:", "DECISION:", "CONCERN:", "TODO:", "DONE:", "ASSIGNED:", "NEXT:")
FILTERS = ("all", "open", "concluded")  # the browser's status filter, in the order `f` cycles


class Row(Struct):
    path: Path
    title: str
    protocol: str
    where: str  # phase, or round
    outcome: str  # READY, WAITING, IMPASSE, ..., or "-" while it runs
    votes: str  # "2/1/0": ready, changes, reject
    status: str  # the ledger's status: OPEN, ACCEPTED, ...
    error: str = ""
    loading: bool = False  # only its title is known yet (placeholder)


class Entry(Struct):
    author: str
    vote: str | None
    body: str
    line: int
    label: str = ""  # a protocol turn's step and round, or its verdict


class View(Struct):
    path: Path
    title: str
    protocol: str
    where: str
    status: str
    consensus: str  # one line: reached or not, and why
    missing: list[str]
    waiting: str | None  # a decision point's question, or an impasse's way out
    entries: list[Entry] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)  # open ones
    findings: list[str] = field(default_factory=list)  # open ones, the most severe first
    decisions: list[str] = field(default_factory=list)
    rulings: list[tuple[str, bool]] = field(default_factory=list)  # a person's decision, in force?
    participants: list[str] = field(default_factory=list)
    about: About | None = None  # the open decision point: what it is about, its choices
    gate: str | None = None  # the gate's verdict on its document (a governed ledger), one line
    gate_ok: bool = False


def placeholder(path: Path, titled: bool = True) -> Row:
    """A row before its ledger is read: the title its header names (only the first bytes
    are read; ``titled=False``: the file's name, nothing read), the rest to come."""
    title = ""
    if titled:
        try:
            with open(path, "rb") as f:
                title = parse_header(f.read(HEADER_BYTES).decode("utf-8", "replace")).title
        except OSError:
            pass
    title = title or path.name.split(".")[0]  # as Discussion.title falls back
    return Row(path, printable(title), "", "", "...", "", "", loading=True)


def reader(start: Path) -> LedgerReader | None:
    """What reads the rows of the repository above ``start`` (its rules read once, each
    ledger parsed once); None outside one."""
    try:
        root = repo_root(start if start.is_dir() else start.parent)
    except CascadeError:
        return None
    return LedgerReader(root)


def row(path: Path, ledgers: LedgerReader | None = None) -> Row:
    """A ledger's row (``ledgers``: the repository's reader, made once, not per row); one that
    cannot be read is a row that says why (the browser never dies on one bad file)."""
    try:
        if ledgers is None:
            return _row(knowing_authors(open_discussion(str(path))), path)
        return _row(ledgers.open(path), path)
    except CascadeError as exc:
        return Row(path, f"(cannot read: {exc.message})", "", "", "", "", "", exc.message)


def _where(d) -> str:
    run = d.state.run
    return f"round {run.round}" if run.steps.shape.own_rounds else f"phase {d.phase}"


def _outcome(d) -> str:
    return protocol_view(d)["outcome"] or ("-" if d.status == "OPEN" else d.status)


def _row(d, path: Path) -> Row:
    counts = d.consensus_result.counts
    votes = f"{counts['READY']}/{counts['CHANGES']}/{counts['REJECT']}"
    return Row(path, printable(d.title), d.protocol.name, _where(d), _outcome(d), votes,
               d.status)


def markdown_of(body: str) -> str:
    """A comment's body as markdown the comment pane renders: each line keeps its own line
    (a hard break: a ledger's lines are written one thought a line), and a marker at the start
    of a line (``Q:``, ``TODO:`` ...) stands out in bold; code fences are left as they are."""
    out, fenced = [], False
    for line in body.splitlines():
        bare = line.lstrip()
        if bare.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and bare and not bare.startswith("|"):
            marker = next((m for m in MARKERS if bare.startswith(m)), None)
            if marker is not None:
                line = f"{line[:len(line) - len(bare)]}**{marker}**{bare[len(marker):]}"
            line += "  "
        out.append(line)
    return "\n".join(out)


def vote_style(vote: str | None) -> str:
    """The colour a vote (or an outcome) is shown in."""
    return {"READY": "green", "CHANGES": "yellow", "REJECT": "red"}.get(vote or "", "dim")


def keep(row: Row, which: str) -> bool:
    if which == "open":
        return row.status == "OPEN" and not row.error
    if which == "concluded":
        return row.status not in ("OPEN", "") and not row.error
    return True


def view(path: Path) -> View:
    """One discussion, as ``cascade status`` reads it, with every comment."""
    d = knowing_authors(open_discussion(str(path)))  # as status and the gate read it
    result = d.consensus_result
    proto = protocol_view(d)
    consensus = (f"Consensus: reached, {result.outcome} ({result.reason})" if result.reached
                 else f"Consensus: not reached ({result.reason})")
    out = View(path, printable(d.title), f"{d.protocol.name} ({d.protocol.title})", _where(d),
               d.status, printable(consensus), list(result.missing),
               printable(proto["waiting_for"]) if proto["waiting_for"] else None,
               about=about(d.state.run, d.personas) if proto["outcome"] == "WAITING" else None)
    for c in d.comments:
        label = (f"{c.provenance['step']}, round {c.provenance.get('round', '?')}"
                 if c.provenance.get("step") else "")
        vote = c.vote or c.provenance.get("vote") or c.provenance.get("verdict")
        out.entries.append(Entry(printable(c.author), vote, c.body, c.line, label))
    out.questions = [printable(f"{q.get('id', 'Q')}: {q['text']} ({q['author']})")
                     for q in d.questions if q.get("status") == "open"]
    out.findings = [printable(line) for line in listing(d.findings)]
    judged = gate_view(d)  # the verdict the hook and check give, as status shows it
    if judged is not None:
        out.gate = printable(f"Gate for {judged['document']}: "
                             f"{'ok' if judged['ok'] else 'blocked'}: {judged['reason']}")
        out.gate_ok = judged["ok"]
    out.decisions = [printable(f"{x['text']} ({x['author']})") for x in d.decisions]
    out.rulings = [(printable(f"{x.author}: {x.vote}, line {x.line}: " + (
        "in force" if x.in_force else f"not in force ({x.note or 'superseded'})")), x.in_force)
        for x in d.state.decisions]
    out.participants = [printable(f"{name}: {vote_label(d, name)}")
                        for name in _speakers(d)]
    return out


def _speakers(d) -> list[str]:
    names = []
    for c in d.comments:
        if c.origin == "ai" and c.author not in names:
            names.append(c.author)
    for alias in d.participants:
        persona = d.personas.get(alias)
        if persona is not None and persona.name not in names:
            names.append(persona.name)
    return names
