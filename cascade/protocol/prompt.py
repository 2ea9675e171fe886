"""What a persona is told at a step: the topic (or the document), the earlier rounds in short,
the turns its step's visibility shows it, the position it must answer, its role and the task.
Built as every prompt is (cascade.turns.prompt): each piece someone else wrote fenced in its
own block, everything redacted, the role and the task last. Imports Jinja2: the model path
only.
"""
from __future__ import annotations

from cascade.config import templates
from cascade.config.personas import Persona
from cascade.protocol.discussion import Discussion
from cascade.protocol.fields import shape
from cascade.protocol.runstate import Request
from cascade.protocol.visibility import VISIBILITIES
from cascade.turns.prompt import Prompt, clip, finish, frame, scrub_persona
from cascade.turns.settings import Settings
from cascade.turns.sources import SourceText


def reply_shape(request: Request) -> str:
    """The reply's JSON shape: the comment, then each field as its kind asks for it."""
    return "{" + ", ".join(['"comment": "<markdown>"', *map(shape, request.step.fields)]) + "}"


def _short(value: str) -> bool:
    return len(value) <= 24 and " " not in value


def _label(t) -> str:
    """A shown turn's block title: its id, author, step and its one-word fields (a shift,
    a verdict, a confidence)."""
    return (f"{t.msg} by {t.name} ({t.step}" + "".join(
        f", {k} {v}" for k, v in sorted(t.fields.items()) if _short(v)) + ")")


def _with_fields(t, hidden: frozenset[str] = frozenset()) -> str:
    """A shown turn's text: its longer fields (a position, a list), then its comment. The
    ``hidden`` fields (a shortlist) and a bridge packet's keys its comment shows itself."""
    lines = [f"{k}: {v}" for k, v in t.fields.items() if v and not _short(v) and "." not in k
             and k not in hidden]
    return ("\n".join(lines) + "\n\n" + t.body) if lines else t.body


def build_step_prompt(d: Discussion, persona: Persona, request: Request,
                      source: SourceText | None, settings: Settings) -> Prompt:
    head = frame(d, source, settings, "topic" if not d.source else "title")
    prompt, scrub, blocks, ledger_name = head.prompt, head.scrub, head.blocks, head.ledger_name
    summary_at = (blocks.add("earlier rounds", scrub(request.summary, ledger_name, 1))
                  if request.summary else None)
    run = d.state.run
    panel = run.panel if run is not None else None
    problem_at = None
    if panel is not None:
        problem = panel.problem + (f"\nScope: {panel.scope}" if panel.scope else "") + (
            f"\nSuccess criteria: {panel.success}" if panel.success else "")
        problem_at = blocks.add("problem definition", scrub(problem, ledger_name, panel.line))
    direction_at = (blocks.add("the direction, and who gave it", scrub(request.direction, ledger_name, 1))
                    if request.direction else None)
    per_turn = max(settings.context_tokens // max(len(request.shown), 1), 100)
    hidden = frozenset(f.name for s in (run.steps.all_steps if run is not None else ())
                       for f in s.fields if f.kind == "shortlist")
    shown_at = [blocks.add(_label(t), clip(scrub(_with_fields(t, hidden), ledger_name, t.line + 1),
                                            per_turn, "this turn"))
                for t in request.shown]
    target_at = None
    if request.target is not None:
        t = request.target
        target_at = blocks.add(f"{t.msg} by {t.name}", scrub(t.body, ledger_name, t.line + 1))
    ident, rendered, opening = head.render()
    shown = scrub_persona(persona, scrub)
    protocol = d.protocol
    system = templates.render("prompts", "step_system", d.root, persona=shown)
    steps = run.steps if run is not None else None
    mode = None
    if steps is not None and steps.mode is not None:
        count = steps.participants
        mode = {"name": steps.mode, "low": count.min, "high": count.max,
                "default": count.default}
    user = templates.render(
        "prompts", "step", d.root, id=ident, step=request.step, round=request.round,
        max_rounds=steps.rounds.max if steps else 1, protocol=protocol, mode=mode,
        setup=run is not None and not run.setup_done,
        problem=rendered[problem_at] if problem_at is not None else "",
        direction=rendered[direction_at] if direction_at is not None else "",
        **opening,
        summary=rendered[summary_at] if summary_at is not None else "",
        shown=[rendered[i] for i in shown_at], blind=VISIBILITIES.has(request.step.visibility, "blind"),
        target=rendered[target_at] if target_at is not None else "",
        target_id=request.target.msg if request.target is not None else "",
        words=(f"between {request.words[0]} and {request.words[1]}" if request.words
               else f"at most about {request.step.words}"),
        persona=shown, shape=reply_shape(request))
    return finish(prompt, scrub, system, user)
