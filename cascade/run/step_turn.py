"""One persona's turn in a step protocol's wave: its prompt (cascade.run.step_prompt), its
reply (cached, or asked: cascade.turns.asking.ask) and its block, stamped and appended in the
ledger's order, gapless."""
from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import msgspec.structs
from msgspec import Struct

from cascade.base.errors import CascadeError
from cascade.protocol import findings
from cascade.run.reply_blocks import (
    ballot_of,
    cited,
    explained,
    fields_of,
    ledger_vote,
    panel_block,
    refs_text,
    reply_budget,
    with_sections,
)
from cascade.protocol.discussion import Discussion
from cascade.run.step_prompt import advisory_vote, build_step_prompt, reply_shape
from cascade.protocol.runstate import Request
from cascade.turns.cache import ReplyCache, prompt_key
from cascade.turns.call import holds_fields
from cascade.turns.litellm_loader import litellm_module
from cascade.turns.providers import uses_litellm
from cascade.turns.replies import Reply, ReplyError, parse_reply
from cascade.turns.asking import Call, Failed, Outcome, Shared, ask
from cascade.turns.settings import Settings
from cascade.turns.sources import SourceText
from cascade.turns.tiers import models_for


class Wave(Struct):
    """What the turns of a run share: one append at a time (``lock``), the last message id's
    number (``ids[0]``), and whether a round is written whole (``batch``)."""

    d: Discussion
    settings: Settings
    shared: Shared
    lock: asyncio.Lock
    cache: ReplyCache
    revision: str | None
    rule_model: str | None
    rule_models: dict | None
    source: SourceText | None
    ids: list[int]
    batch: bool


async def import_models(requests, registry, rule_model, rule_models, settings) -> None:
    """Import litellm before the first wave when a model it asks first needs it; a fallback
    that needs it is imported by ``complete`` if it is ever reached (all ``openai/``: never)."""
    if any(uses_litellm(models_for(registry.get(r.alias), r.role, r.tier, rule_model,
                                   rule_models, settings)[0], settings) for r in requests):
        await asyncio.to_thread(litellm_module)


async def turns(wave: Wave, requests: list[Request], personas) -> list[Outcome]:
    """A wave's turns, at once: every prompt is built on the ledger as the wave found it,
    before any reply is appended (a cached reply lands at once: it must not change what the
    next speaker of the same wave is shown). Their outcomes, in the order asked."""
    asked = [_prepare(wave, r, personas.get(r.alias)) for r in requests]
    return list(await asyncio.gather(*(_turn(wave, a) for a in asked)))


class _Asked(Struct):
    """One turn, ready to ask: its outcome so far, its settings and its fallback models."""

    request: Request
    persona: Any
    prompt: Any
    out: Outcome
    settings: Settings
    fallbacks: list[str]


def _prepare(wave: Wave, request: Request, persona) -> _Asked:
    """The turn's model, settings and prompt (``persona``: None is an unknown persona)."""
    d, settings = wave.d, wave.settings
    if persona is None:
        raise CascadeError(f"unknown persona {request.alias!r} for role {request.role!r}", d.path)
    model, *fallbacks = models_for(persona, request.role, request.tier, wave.rule_model,
                                   wave.rule_models, settings)
    if request.words is not None:  # a phase's word range: its reply's max tokens too
        settings = msgspec.structs.replace(settings, reply_tokens=reply_budget(request.words[1]))
    prompt = build_step_prompt(d, persona, request, wave.source, settings.for_model(model))
    shown = ballot_of(request.step) is None  # a phase's turn is shown by its persona alone
    out = Outcome(persona, d.path, model=model, redactions=prompt.redactions, notes=prompt.notes,
                  step=request.step.title if shown else None,
                  round=request.round if shown else None,
                  asks_vote=persona.votes and any(f.name in ("vote", "verdict")
                                                  for f in request.step.fields))
    return _Asked(request, persona, prompt, out, settings, fallbacks)


async def _turn(wave: Wave, asked: _Asked) -> Outcome:
    """Ask for the turn's reply (or take it from the cache) and append its block."""
    out = asked.out
    started = time.monotonic()
    wave.shared.progress.start(out)
    reply = await _reply(wave, asked)
    if reply is not None and unexplained(asked.request, reply, asked.persona.votes,
                                         asked.settings.model_string(out.model)):
        reply = await _explain(wave, asked, reply)
    if reply is not None:
        await _append(wave, asked, reply)
    out.seconds = time.monotonic() - started
    wave.shared.progress.finish(out)
    return out


async def _cached_or_asked(wave: Wave, asked: _Asked, messages) -> tuple[Reply, dict | None]:
    """The reply to ``messages``, and the cache's entry it was read from (None: asked)."""
    out, settings = asked.out, asked.settings
    key = prompt_key(asked.persona.alias, settings.model_string(out.model), messages)
    hit = wave.cache.get(key)
    if hit is not None:
        return parse_reply(hit["text"], reply_tokens=settings.reply_tokens), hit
    shape = reply_shape(asked.request, asked.persona.votes)
    return await ask(Call(out, messages, key, asked.fallbacks, shape), out.model, settings,
                     wave.shared, wave.cache), None


async def _reply(wave: Wave, asked: _Asked) -> Reply | None:
    """The reply: cached, or asked (with the step's fallback for an unreadable or empty
    one); None when the turn failed (``out`` says why)."""
    request, persona, out = asked.request, asked.persona, asked.out
    reply: Reply | None = None
    fallback = fallback_reply(request.step, wave.d.title)
    try:
        reply, hit = await _cached_or_asked(wave, asked, asked.prompt.messages)
        out.status = "ok" if hit is None else "cached"
        if hit is not None:
            out.model = hit.get("model", out.model)
            out.prompt_tokens = hit.get("prompt_tokens") or 0
            out.completion_tokens = hit.get("completion_tokens") or 0
            out.cost = hit.get("cost")
    except Failed as failure:
        if request.step.fallback and not failure.skipped and str(failure).startswith(
                "unparseable"):  # the step's deterministic fallback stands in (seed 003)
            reply = fallback
            out.status = "ok"
            out.notes = [*out.notes, f"{persona.name}: its reply could not be read ({failure}); "
                         "the step's fallback stands in"]
        else:
            out.status = "failed" if not failure.skipped else "skipped"
            out.error = str(failure)
    except ReplyError as exc:
        out.status, out.error = "failed", f"unparseable cached reply: {exc}"
    if reply is not None and request.step.fallback and not (reply.comment or "").strip():
        reply = Reply(fallback.comment, reply.vote, None, {**fallback.extra, **reply.extra},
                      reply.cut)
        out.notes = [*out.notes, f"{persona.name}: an empty reply; the step's fallback stands in"]
    return reply


def fallback_reply(step, title: str) -> Reply:
    """The step's deterministic fallback as a reply (seed 003): its comment and the fields
    it gives, ``{topic}`` in them the discussion's title."""
    def filled(value):
        return ([filled(v) for v in value] if isinstance(value, tuple)
                else str(value).replace("{topic}", title))
    return Reply(step.fallback.replace("{topic}", title),
                 extra={name: filled(value) for name, value in step.fallback_fields})


def _vote_of(request: Request, reply: Reply) -> str | None:
    """The vote a reply gives in its step (a phase's ballot, or the step's vote or verdict
    field, as it was asked)."""
    if ballot_of(request.step) is not None:
        return reply.vote
    values, _ = fields_of(request, reply)
    return values.get("verdict") or values.get("vote")


def unexplained(request: Request, reply: Reply, votes: bool, model: str = "") -> bool:
    """A blocking vote that counts, in a step that asks findings, given with none, by a model
    whose replies can hold them (the embedded model's cannot: asked again, it could only say
    the same). An advisory phase's vote cannot block: it is not asked again."""
    asks = any(f.kind == "findings" for f in request.step.fields)
    if not asks or not votes or reply.sentinel or reply.cut or not holds_fields(model) \
            or advisory_vote(request.step):
        return False
    given = {str(k).lower(): v for k, v in reply.extra.items()}.get(findings.FIELD)
    return _vote_of(request, reply) in findings.BLOCKING and not findings.read(given)[0]


async def _explain(wave: Wave, asked: _Asked, reply: Reply) -> Reply:
    """Ask once more, in the same turn, for the findings of a blocking vote given without
    any: the reply again, with them. A second reply without findings (or none at all) leaves
    the first, which is then recorded as unexplained."""
    request, persona, out = asked.request, asked.persona, asked.out
    said = json.dumps({"comment": reply.comment, "vote": reply.vote, **reply.extra})
    messages = [*asked.prompt.messages, {"role": "assistant", "content": said},
                {"role": "user", "content": (
                    f"Your vote is {_vote_of(request, reply)} but you gave no findings. Reply "
                    "again with the same JSON object, adding in \"findings\" what is wrong: "
                    "each with its severity, where (a short exact quote of the document or a "
                    "section heading), what, why and a suggestion.")}]
    try:
        again, _ = await _cached_or_asked(wave, asked, messages)
    except (Failed, ReplyError) as exc:
        out.notes = [*out.notes, f"{persona.name}: asked again for its findings: {exc}"]
        return reply
    if unexplained(request, again, True) or _vote_of(request, again) is None:
        out.notes = [*out.notes, f"{persona.name}: asked again for its findings; none given"]
        return reply
    return again


async def _append(wave: Wave, asked: _Asked, reply: Reply) -> None:  # long: a block, stamped
    """The reply's block, stamped (message id, step, round, references, fields), appended
    in the ledger's order; a block that cannot be written fails the turn."""
    d, request, persona, out = wave.d, asked.request, asked.persona, asked.out
    fields, notes = fields_of(request, reply)
    citations, dropped = cited(request, reply)
    fields.update(explained(request, reply))  # why each message was cited, where it says
    verdict = fields.get("verdict")
    vote, said = None, ""
    if verdict is not None and persona.votes:  # as it was asked (cascade.run.reply_blocks)
        vote, said = ledger_vote(request.step, verdict)
    elif ballot_of(request.step) is not None and persona.votes and not reply.cut:
        vote = reply.vote  # a phase's vote: the reply's own, or none
    out.vote = verdict if verdict is not None else vote
    if findings.FIELD in fields:  # located in the revision it reviewed; unexplained: said
        fields.update(findings.at_write(fields, wave.source.text if wave.source else None,
                                        out.vote if persona.votes else None))
        weighed = findings.counted(out.vote or "", fields, d.authority.policy)
        said = "\n\n".join(x for x in (said, f"**Counted:** {weighed.why}." if weighed.why
                                         else "") if x)
    body = reply.comment if not reply.sentinel else "_No comment._"
    if reply.sentinel and out.status != "cached":
        out.status = "no-response"
    if reply.cut:
        out.notes = [*out.notes, f"{persona.name}'s reply was cut: {reply.cut:,} characters, "
                     f"over the {wave.settings.reply_tokens:,}-token reply budget"
                     + ("; its vote was dropped" if out.asks_vote else "")]
    events: list = []
    if any(f.kind == "panel" for f in request.step.fields):
        body, events, panel_notes = panel_block(d, request, reply, body)
        notes += panel_notes
        fields["panel"] = str(sum(1 for e in events if e[0] == "PERSONA"))
    body = with_sections(request, body, fields, reply)
    out.notes = [*out.notes, *(f"{persona.name}: {n}" for n in notes + dropped)]
    async with wave.lock:  # one append at a time: ids in the ledger's order, gapless
        number = wave.ids[0] + 1
        if findings.FIELD in fields:  # its findings, numbered on from the ledger's
            listed = findings.section(fields, len(d.findings) + 1)
            body = "\n\n".join(x for x in (body.rstrip(), listed) if x)
        body = f"{body.rstrip()}\n\n{said}" if said else body
        counted = out.tokens_known  # a command's tokens are unknown: no count, not 0
        provenance = {"model": out.model,
                      "prompt_tokens": out.prompt_tokens or None if counted else None,
                      "completion_tokens": out.completion_tokens or None if counted else None,
                      "cost": f"{out.cost:.6f}" if out.cost else None,
                      "revision": wave.revision, "seen": asked.prompt.seen,
                      "msg": f"r{request.round}-msg-{number:03d}",
                      "step": request.step.id, "round": str(request.round),
                      "refs": refs_text(request, citations), **fields}
        if reply.cut:
            provenance["cut"] = reply.cut
        if reply.sentinel:
            provenance["sentinel"] = reply.sentinel
        try:
            d.add_comment(persona.name, body, vote, provenance=provenance, untrusted=True)
            for kind, value, event_fields in events:
                d.add_event(kind, value, **event_fields)
            if not wave.batch:  # else the round's end writes it (run_protocol)
                d.save()
            wave.ids[0] = number
        except CascadeError as exc:
            d.discard()
            out.status, out.error = "failed", f"not written: {exc}"
        except OSError as exc:
            d.discard()
            out.status, out.error = "failed", f"not written: {exc.strerror}"
            out.os_error = exc
