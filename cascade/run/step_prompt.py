"""What a persona is told at a step, built as every prompt is (cascade.turns.prompt): each
piece someone else wrote fenced in its own block, everything redacted, the role and the task
last. Imports Jinja2: the model path only.
"""
from __future__ import annotations

from cascade.config import templates
from cascade.config.personas import Persona
from cascade.ledger.records import Comment
from cascade.protocol.context import SHOWS
from cascade.protocol.discussion import Discussion
from cascade.protocol.fields import shape
from cascade.protocol.finding_life import pending
from cascade.protocol.runstate import Request
from cascade.protocol.sum_file import gist
from cascade.protocol.visibility import VISIBILITIES
from cascade.turns.prompt import (
    Frame,
    Prompt,
    clip,
    estimate_tokens,
    finish,
    first_line,
    frame,
    scrub_persona,
)
from cascade.turns.settings import Settings
from cascade.turns.sources import SourceText

_LIST_CAP = 10  # the open questions shown, and the markers of each kind in a summary


def reply_shape(request: Request, votes: bool = True) -> str:
    """The reply's JSON shape: the comment, then each field as its kind asks for it (a
    persona that does not vote gives its vote as null)."""
    return "{" + ", ".join(['"comment": "<markdown>"', *(
        '"vote": null' if f.name == "vote" and not votes else shape(f)
        for f in request.step.fields)]) + "}"


def why_text(reason: str) -> str:
    """Why a persona is asked, as its task says it (a respond planner's reason)."""
    if reason.startswith("mentioned by "):
        return f"You were {reason}: answer what they asked of you, in your role."
    if reason == "asked":
        return "You were asked for your view."
    if reason:
        return ("There is new input since you last spoke (or you have not spoken yet): give "
                "your review.")
    return ""


def advisory_vote(step) -> bool:
    """Whether a step's vote is advisory: a phase (its visibility shows the discussion
    itself) whose votes do not count (no ``confirm``)."""
    return VISIBILITIES.has(step.visibility, "comments") and not step.confirm


def _ballot(step, phase: bool) -> dict | None:
    """A step's READY/CHANGES/REJECT vote, said what each means; in a phase (a step that
    shows the discussion), whether it counts (``confirm``: else it is advisory)."""
    vote = next((f for f in step.fields if f.name == "vote"), None)
    if vote is None or tuple(vote.choices or ()) != ("READY", "CHANGES", "REJECT"):
        return None
    return {"advisory": phase and not step.confirm}


def _short(value: str) -> bool:
    return len(value) <= 24 and " " not in value


def _label(t) -> str:
    """A shown turn's block title: its id, author, step and its one-word fields (a shift,
    a verdict, a confidence)."""
    return (f"{t.msg} by {t.name} ({t.step}" + "".join(
        f", {k} {v}" for k, v in sorted(t.fields.items()) if _short(v)) + ")")


def _with_fields(t, hidden: frozenset[str] = frozenset()) -> str:
    """A shown turn's text: its longer fields (a position, a list), then its comment. The
    ``hidden`` fields (a shortlist, references, items) and a bridge packet's keys its comment
    shows itself."""
    lines = [f"{k}: {v}" for k, v in t.fields.items() if v and not _short(v) and "." not in k
             and k not in hidden]
    return ("\n".join(lines) + "\n\n" + t.body) if lines else t.body


def _earlier_summary(older: list[Comment]) -> str:
    positions: dict[str, tuple[str | None, str]] = {}
    for c in older:
        positions[c.author] = (c.vote or positions.get(c.author, (None, ""))[0], gist(c.body, 100))
    out = [f"{len(older)} earlier comments, in short:"]
    out += [f"- {name}: {vote or 'no vote'} - {text}" for name, (vote, text) in positions.items()]

    def capped(title: str, items: list[str]) -> None:
        if items:
            shown = items[-_LIST_CAP:]
            more = f" (the last {len(shown)} of {len(items)})" if len(items) > len(shown) else ""
            out.append(f"\n{title}{more}:")
            out.extend(f"- {item}" for item in shown)

    def marked(kind: str) -> list[str]:
        return [f"{m.text} ({m.author})" for c in older for m in c.markers if m.kind == kind]

    # Questions are not listed here: the open ones, numbered, have a block of their own.
    capped("Decisions proposed", marked("DECISION"))
    capped("Concerns raised", marked("CONCERN"))
    capped("Action items", marked("TODO") + marked("ASSIGNED"))
    return "\n".join(out)


def _conversation(d: Discussion, head: Frame) -> dict:
    """The discussion as a phase sees it: the most recent comments within the context budget,
    each in its own block, the older ones summarised (never silently cut), the open questions."""
    scrub, blocks, ledger_name = head.scrub, head.blocks, head.ledger_name
    budget = head.rest
    ledger_lines = d.text.split("\n")
    comments = d.comments
    recent: list[tuple[str, str]] = []
    used = 0
    cut = len(comments)
    for index in range(len(comments) - 1, -1, -1):
        c = comments[index]
        body = clip(scrub(c.body, ledger_name, first_line(ledger_lines, c.line + 1, c.body)),
                    max(budget // 2, 100), "this comment")
        cost = estimate_tokens(body) + 10
        if recent and used + cost > budget:
            break
        author = scrub(c.author, ledger_name, c.line)
        recent.append((f"comment by {author}" + (f", vote {c.vote}" if c.vote else ""), body))
        used += cost
        cut = index
    recent.reverse()
    older = comments[:cut]
    earlier_at = (blocks.add("earlier comments, summarised",
                             scrub(_earlier_summary(older), ledger_name, 1)) if older else None)
    head.prompt.summarised = len(older)
    recent_at = [blocks.add(what, body) for what, body in recent]
    open_questions = [q for q in d.questions if q["status"] == "open"][-_LIST_CAP:]
    questions_at = None
    if open_questions:
        listed = "\n".join(f"{q['id']}: {scrub(q['text'], ledger_name, q['line'])} "
                           f"({scrub(q['author'], ledger_name, q['line'])})"
                           for q in open_questions)
        questions_at = blocks.add("open questions", listed)
    return {"earlier": earlier_at, "comments": recent_at, "questions": questions_at}


def build_step_prompt(d: Discussion, persona: Persona, request: Request,
                      source: SourceText | None, settings: Settings) -> Prompt:
    """A turn's prompt: the opening blocks (``frame``), what the request shows (``_material``),
    then the step, the role and the task (the template's, trusted)."""
    head = frame(d, source, settings, "topic" if not d.source else "title")
    at = _material(d, request, head, settings)
    talk = at.pop("talk")
    ident, rendered, opening = head.render()

    def block(index) -> str:
        return rendered[index] if index is not None else ""

    shown = scrub_persona(persona, head.scrub)
    run = d.state.run
    steps = run.steps
    count = steps.participants
    mode = ({"name": steps.mode, "low": count.min, "high": count.max, "default": count.default}
            if steps.mode is not None else None)
    system = templates.render("prompts", "step_system", d.root, persona=shown)
    user = templates.render(
        "prompts", "step", d.root, id=ident, step=request.step, round=request.round,
        max_rounds=steps.rounds.max if steps.shape.own_rounds else 1, protocol=d.protocol,
        mode=mode, setup=not run.setup.done, **opening,
        **{k: block(v) for k, v in at.items() if k not in ("shown", "shows")},
        shown=[rendered[i] for i in at["shown"]], shows=[rendered[i] for i in at["shows"]],
        blind=VISIBILITIES.has(request.step.visibility, "blind"),
        anonymous=VISIBILITIES.has(request.step.visibility, "anonymous"),
        target_id=request.target.msg if request.target is not None else "",
        words=(f"between {request.words[0]} and {request.words[1]}" if request.words
               else f"at most about {request.step.words}"),
        persona=shown, shape=reply_shape(request, persona.votes),
        asks_findings=any(f.kind == "findings" for f in request.step.fields),
        votes=persona.votes, ballot=_ballot(request.step, talk is not None),
        earlier=block(talk["earlier"]) if talk else "",
        comments=[rendered[i] for i in talk["comments"]] if talk else None,
        questions=block(talk["questions"]) if talk else "",
        why=why_text(request.why), sentinel=talk is not None)
    return finish(head.prompt, head.scrub, system, user)


def open_findings_text(d: Discussion) -> str:
    """The open findings of earlier reviews, the most severe first, each with its lines and
    the answers people gave to it (``A(F3): ...``); then those people settled (waived, or
    overridden by a decision), so the panel does not raise them anew."""
    rows = []
    for f in pending(d.findings)[:_LIST_CAP * 2]:
        at = f"lines {f.at} of revision {f.revision[:7]}" if f.located and f.revision else (
            f"lines {f.at}" if f.located else "not located")
        rows.append(f"{f.id} ({f.severity}, {at}): {f.what}"
                    + (f" -- where: {f.where!r}" if f.where else "")
                    + "".join(f"\n  answer by {a['author']}: {a['text']}" for a in f.answers))
    settled = [f for f in d.findings if f.status in ("waived", "overridden")][-_LIST_CAP:]
    if settled:  # a person's word on them: the panel reads it, and does not raise them anew
        rows = rows or ["(none)"]
        rows += ["", "Settled by people (raise one again only if the document has changed "
                 "what it is about):"]
        rows += [f"{f.id} ({f.severity}): {f.what} -- {f.status} by {f.closed_by.get('by')}"
                 + (f": {f.closed_by['reason']}" if f.closed_by.get("reason") else "")
                 for f in settled]
    return "\n".join(rows)


def _material(d: Discussion, request: Request, head: Frame, settings: Settings) -> dict:
    """The blocks of what the request shows, added to the frame's (each turn shown within its
    share of the budget; a phase's view of the discussion: ``talk``); their indices, by the
    template's names."""
    scrub, blocks, ledger_name = head.scrub, head.blocks, head.ledger_name
    run = d.state.run
    at: dict = {"summary": None, "problem": None, "direction": None, "target": None,
                "callout": None, "objective": None, "findings": None}
    if d.objective:  # the larger goal, given apart from the topic (discuss --objective)
        at["objective"] = blocks.add("objective", scrub(d.objective, ledger_name,
                                                        d.header.line or 1))
    if request.summary:
        at["summary"] = blocks.add("earlier rounds", scrub(request.summary, ledger_name, 1))
    panel = run.setup.panel
    if panel is not None:
        problem = panel.problem + (f"\nScope: {panel.scope}" if panel.scope else "") + (
            f"\nSuccess criteria: {panel.success}" if panel.success else "")
        at["problem"] = blocks.add("problem definition", scrub(problem, ledger_name, panel.line))
    if request.direction:
        at["direction"] = blocks.add("the direction, and who gave it",
                                     scrub(request.direction, ledger_name, 1))
    per_turn = max(settings.context_tokens // max(len(request.shown), 1), 100)
    hidden = frozenset(f.name for s in run.steps.all_steps
                       for f in s.fields if f.kind in ("shortlist", "references", "items"))
    at["shown"] = [blocks.add(_label(t), clip(scrub(_with_fields(t, hidden), ledger_name,
                                                    t.line + 1), per_turn, "this turn"))
                   for t in request.shown]
    shows = [SHOWS.call(ref, run, request) for ref in request.step.shows]
    at["shows"] = [blocks.add(title, scrub(text, ledger_name, 1)) for title, text in
                   (x for x in shows if x is not None)]
    if request.target is not None:
        t = request.target
        at["target"] = blocks.add(f"{t.msg} by {t.name}", scrub(t.body, ledger_name, t.line + 1))
    at["talk"] = (_conversation(d, head) if VISIBILITIES.has(request.step.visibility, "comments")
                  else None)
    if any(f.kind == "findings" for f in request.step.fields):
        shown = open_findings_text(d)
        if shown:
            at["findings"] = blocks.add("open findings", scrub(shown, ledger_name, 1))
    if request.callout.strip():
        at["callout"] = blocks.add("a person's request", scrub(request.callout, "the request", 1))
    return at
