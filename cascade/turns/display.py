"""Turn output: a live line per persona on a terminal (rewritten in place, never wider than
the terminal), one plain line per persona when it is done otherwise, then a table.

Everything here can hold text from outside (a persona's or a model's name, an endpoint's error
message, a note): each line passes through cascade.base.text.printable as it is made, so none of it
can drive the terminal; the only escape sequences written are the live display's own.
"""
from __future__ import annotations

import shutil
import sys
import threading
import time
from typing import TextIO

from cascade.base.errors import display_path
from cascade.base.text import printable
from cascade.turns.replies import streamed_comment
from cascade.turns.asking import Outcome, Progress


def _tokens(o: Outcome) -> str:
    """Prompt+completion tokens; ``?`` when a call's provider could not count them (a
    command), ``-`` when no call was made."""
    if not o.calls:
        return "-"
    return f"{o.prompt_tokens}+{o.completion_tokens}" if o.tokens_known else "?"


def _who(o: Outcome) -> str:
    """The persona, and for a protocol's step its round and step: "round 2, Challenge:
    AI-Architect"."""
    return f"round {o.round}, {o.step}: {o.persona.name}" if o.step else o.persona.name


def _state(o: Outcome, causes: bool = True) -> str:
    if o.status == "failed":
        return f"failed: {o.error}" if causes else "failed (below)"
    if o.status == "skipped":
        return o.error if causes else "not asked (below)"
    label = {"cached": " (cached, no call)", "no-response": " (no response)"}.get(o.status, "")
    if o.vote is None and not o.asks_vote:
        return f"answered{label}"  # a step that takes no vote: its result, not a missing vote
    return f"{o.vote or 'no vote'}{label}"


class LineProgress(Progress):
    """Plain lines: one when each persona finishes, its retries said in it (``retried``).
    ``causes=False``: a failure's cause is left to the caller, who prints it once."""

    def __init__(self, stream: TextIO | None = None, causes: bool = True) -> None:
        self.out = stream or sys.stdout
        self.causes = causes

    def finish(self, outcome: Outcome) -> None:
        print(printable(f"{_who(outcome)}: {_state(outcome, self.causes)} "
                        f"({outcome.seconds:.1f}s{retried(outcome)})"), file=self.out,
              flush=True)


class LiveProgress(Progress):
    """On a terminal: one line per persona, redrawn in place (and every quarter second, so the
    clocks move) until the turn ends; while a reply streams in, its line shows the end of its
    comment so far."""

    wants_stream = True

    def __init__(self, stream: TextIO | None = None, causes: bool = True) -> None:
        self.out = stream or sys.stdout
        self.causes = causes
        self.rows: list[Outcome] = []
        self.started: dict[int, float] = {}
        self.drawn = 0
        self.notes: dict[int, str] = {}
        self.texts: dict[int, str] = {}  # a streaming reply's text so far
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def start(self, outcome: Outcome) -> None:
        self.rows.append(outcome)
        self.started[id(outcome)] = time.monotonic()
        if self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()
        self._draw()

    def retry(self, outcome: Outcome, model: str, reason: str, wait: float) -> None:
        self.notes[id(outcome)] = f"{reason}; retrying in {wait:.1f}s"
        self.texts.pop(id(outcome), None)
        self._draw()

    def stream(self, outcome: Outcome, text: str) -> None:
        with self._lock:  # the ticker reads it
            self.texts[id(outcome)] = self.texts.get(id(outcome), "") + text
            self.notes.pop(id(outcome), None)

    def finish(self, outcome: Outcome) -> None:
        self.notes.pop(id(outcome), None)
        self.texts.pop(id(outcome), None)
        self._draw()

    def settle(self) -> None:
        with self._lock:
            self._redraw()
            self.rows, self.drawn = [], 0

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=1)
        self._draw()

    def _tick(self) -> None:
        while not self._stop.wait(0.25):
            self._draw()

    def _draw(self) -> None:
        with self._lock:
            self._redraw()

    def _redraw(self) -> None:
        if not self.rows:
            return
        out = self.out
        if self.drawn:
            out.write(f"\x1b[{self.drawn}F")
        lines = self._persona_lines()
        room = max(20, shutil.get_terminal_size((80, 24)).columns - 3)
        for line in lines:  # never wider than the terminal: a wrapped line is left behind
            out.write(f"\x1b[2K  {line if len(line) <= room else line[:room - 3] + '...'}\n")
        self.drawn = len(lines)
        out.flush()

    def _text(self, o: Outcome) -> str:
        if o.status == "pending":
            elapsed = time.monotonic() - self.started[id(o)]
            said = " ".join(streamed_comment(self.texts.get(id(o), "")).split())
            if said and id(o) not in self.notes:
                return f"{elapsed:.0f}s: ...{said[-self._room():]}"
            return self.notes.get(id(o)) or f"thinking... {elapsed:.0f}s"
        return f"{_state(o, self.causes)} ({o.seconds:.1f}s)"

    def _room(self) -> int:
        """Characters of a streaming comment a line has room for."""
        return max(20, shutil.get_terminal_size((80, 24)).columns - 40)

    def _persona_lines(self) -> list[str]:
        """One line per persona (for a protocol's step: its round and step first)."""
        names = [printable(_who(o)) for o in self.rows]
        width = max(len(n) for n in names)
        return [f"{name.ljust(width)}  {printable(self._text(o))}"
                for o, name in zip(self.rows, names)]


def progress_for(stream: TextIO | None = None, causes: bool = True) -> Progress:
    stream = stream or sys.stdout
    return (LiveProgress if stream.isatty() else LineProgress)(stream, causes)


def closing_table(outcomes: list[Outcome]) -> str:
    header = ("persona", "vote", "seconds", "tokens", "cost", "note")
    rows = [header]
    for o in outcomes:
        note = {"ok": "", "cached": "cached", "no-response": "no response"}.get(o.status, o.status)
        rows.append((printable(_who(o)), printable(o.vote or "-"), f"{o.seconds:.1f}",
                     _tokens(o), _cost(o), note))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cost(o: Outcome) -> str:
    if o.cost:
        return f"${o.cost:.4f}"
    return "?" if o.calls and not o.tokens_known else "-"


def retried(o: Outcome, why: bool = True) -> str:
    """``, after 2 retries (rate limited)``: the retries of a persona's calls, folded into
    its one line (the last reason; the others are most often the same); without ``why``,
    `` (after 2 retries)``."""
    n = len(o.retries)
    if not n:
        return ""
    tries = f"after {n} retr{'y' if n == 1 else 'ies'}"
    return f", {tries} ({o.retries[-1]})" if why else f" ({tries})"


def failure_lines(outcomes: list[Outcome]) -> list[str]:
    """One line per cause: the personas of a ledger that failed the same way (one dead
    endpoint, one missing key) are named together."""
    groups: dict[tuple, list[Outcome]] = {}
    for o in outcomes:
        if o.status in ("failed", "skipped"):
            groups.setdefault((o.ledger, o.model, o.error, retried(o, why=False)), []).append(o)
    return [printable(f"cascade: {display_path(ledger)}: "
                      f"{', '.join(o.persona.name for o in group)} ({model}): {error}{tries}")
            for (ledger, model, error, tries), group in groups.items()]


def redaction_lines(outcomes: list[Outcome]) -> list[str]:
    seen: dict[str, None] = {}
    for o in outcomes:
        for r in o.redactions:
            seen.setdefault(printable(f"redacted before sending: {r}"))
        for n in o.notes:
            seen.setdefault(printable(f"note: {n}"))
    return list(seen)
