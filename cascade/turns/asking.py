"""Ask for a persona's reply: within the run's budget and its cap on calls in flight, with
one repair re-ask, shown as it goes (``Progress``); what a turn's outcome holds (``Outcome``).

A failed persona (an error, a timeout, a reply that could not be read twice, not asked within
the budget) is reported in one line and recorded in the ledger as a ``FAILURE`` event
(``record_failure``), so ``check`` blocks where the hook did (docs/ci.md); it stays pending,
so the next run asks it again. Ctrl-C cancels the calls in flight; blocks already written
are whole.
"""
from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from msgspec import Struct, field

from cascade.config.personas import Persona
from cascade.base.errors import CascadeError
from cascade.ledger.records import FAILURE
from cascade.protocol.discussion import Discussion
from cascade.turns.cache import ReplyCache
from cascade.turns.replies import Reply, ReplyError, comment_limit, parse_reply, too_large
from cascade.turns.settings import Settings

# A repair restates the reply's form: the one the turn's task asked for (cascade.run.step_prompt).
REPAIR = ("Your reply was not a valid JSON object of the required form ({reason}). "
          "Reply again with only the JSON object: {shape}.")


class Outcome(Struct):
    persona: Persona
    ledger: Path
    status: str = "pending"  # ok | cached | no-response | failed | skipped
    vote: str | None = None
    seconds: float = 0.0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    tokens_known: bool = True  # False: a call's provider reported no token counts (a command)
    model: str = ""
    error: str = ""
    retries: list[str] = field(default_factory=list)  # why each retry was made
    redactions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    os_error: OSError | None = None  # the ledger could not be written (disk full, ...)
    step: str | None = None  # a protocol's step the turn was for (its title), shown with it
    round: int | None = None  # and its round
    asks_vote: bool = True  # False: the step takes no vote (no vote is no missing vote)

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "cached", "no-response")


def _retried(progress: Progress, out: Outcome, model: str, reason: str, wait: float) -> None:
    out.retries.append(reason)
    progress.retry(out, model, reason, wait)


class Budget:
    """Per-run caps on calls, tokens and dollars."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.calls = 0
        self.tokens = 0
        self.cost = 0.0
        self.uncounted: set[str] = set()  # the models whose tokens could not be counted

    def exhausted(self) -> str | None:
        s = self.settings
        if s.max_calls is not None and self.calls >= s.max_calls:
            return f"budget reached: {self.calls} calls (CASCADE_MAX_CALLS={s.max_calls})"
        if s.max_tokens is not None and self.tokens >= s.max_tokens:
            return f"budget reached: {self.tokens} tokens (CASCADE_MAX_TOKENS={s.max_tokens})"
        if s.max_cost is not None and self.cost >= s.max_cost:
            return f"budget reached: ${self.cost:.4f} (CASCADE_MAX_COST={s.max_cost})"
        return None

    def charge(self, out: Outcome, done) -> None:
        """A reply had: its tokens and cost charged to the run and to the turn (a provider that
        cannot count them, such as a command, is said to once a run)."""
        self.tokens += done.prompt_tokens + done.completion_tokens
        self.cost += done.cost or 0.0
        if not done.tokens_known:
            out.tokens_known = False
            out.notes = [*out.notes, *self.unknown(done.model)]
        out.model = done.model
        out.prompt_tokens += done.prompt_tokens
        out.completion_tokens += done.completion_tokens
        if done.cost is not None:
            out.cost = (out.cost or 0.0) + done.cost

    def unknown(self, model: str) -> list[str]:
        """What to say, once a run, of ``model`` answering with no token counts (a
        command): that they are unknown, and that a token or cost budget cannot count them."""
        if model in self.uncounted:
            return []
        self.uncounted.add(model)
        s = self.settings
        entry = s.providers.entry(model)
        what = "a command" if entry is not None and entry.command else "its provider"
        notes = [f"tokens unknown for {model} ({what}: no token counts, no cost)"]
        for name, limit in (("CASCADE_MAX_TOKENS", s.max_tokens), ("CASCADE_MAX_COST", s.max_cost)):
            if limit is not None:
                notes.append(f"{name}={limit:g} cannot count the calls to {model} (tokens "
                             "unknown): they are not charged to it; CASCADE_MAX_CALLS bounds "
                             "them")
        return notes


class Progress:
    """Reports each persona as it starts and finishes. The base class prints nothing.
    ``wants_stream``: replies are streamed, and ``stream`` gets each piece as it arrives."""

    wants_stream = False

    def start(self, outcome: Outcome) -> None: ...

    def stream(self, outcome: Outcome, text: str) -> None: ...

    def retry(self, outcome: Outcome, model: str, reason: str, wait: float) -> None: ...

    def finish(self, outcome: Outcome) -> None: ...

    def settle(self) -> None:
        """A wave is over: what was shown stays as it is; what follows goes below it."""

    def close(self) -> None: ...


def record_failure(d: Discussion, persona: Persona, revision: str | None, why: str) -> bool:
    """Append and save a ``FAILURE`` event: ``persona`` did not answer for ``revision``.
    False when the ledger cannot be written (the failure is reported all the same)."""
    reason = " ".join(why.split())
    reason = reason if len(reason) <= 200 else reason[:199] + "…"
    try:
        d.add_event(FAILURE, persona.name, alias=persona.alias, revision=revision,
                    reason=reason or "no answer")
        d.save()
    except (CascadeError, OSError):
        d.discard()
        return False
    return True


class Failed(Exception):
    """A reply not had: the model failed, or its reply could not be read twice; ``skipped``:
    not asked at all (the run's budget was spent)."""

    def __init__(self, reason: str, skipped: bool = False) -> None:
        super().__init__(reason)
        self.skipped = skipped


class Call(Struct):
    """One reply to ask for: its outcome (charged and shown as it goes), the messages, the
    key its reply is cached under, the models to try after the first, and the reply's form."""

    out: Outcome
    messages: list[dict[str, str]]
    key: str
    fallbacks: Sequence[str] | None
    shape: str


async def ask(call: Call, model: str, settings: Settings, shared: Shared,
              cache: ReplyCache) -> Reply:
    """Ask ``model`` (then the call's fallbacks, then CASCADE_FALLBACK_MODELS) within the
    run's budget; one repair re-ask, which restates the reply's form (the one asked for).
    Raises ``Failed``."""
    from cascade.turns import chain as seam  # the model seam: off every path that asks none

    out, budget, progress = call.out, shared.budget, shared.progress

    async def asked(msgs: list[dict[str, str]]):
        stop = budget.exhausted()
        if stop:
            raise Failed(f"not asked: {stop}", skipped=True)
        budget.calls += 1
        out.calls += 1
        async with shared.semaphore:
            try:
                done = await seam.complete(
                    model, msgs, settings, fallbacks=call.fallbacks,
                    on_retry=lambda m, reason, wait: _retried(progress, out, m, reason, wait),
                    **({"on_text": lambda text: progress.stream(out, text)}
                       if getattr(progress, "wants_stream", False) else {}))
            except seam.ModelError as exc:
                raise Failed(str(exc)) from None
        budget.charge(out, done)
        return done

    def remember(text: str, model_used: str) -> None:
        cache.put(call.key, {"text": text, "model": model_used,
                             "prompt_tokens": out.prompt_tokens,
                             "completion_tokens": out.completion_tokens, "cost": out.cost})

    def parse(text: str) -> Reply:
        refused = too_large(text, settings.reply_tokens)  # bounded before it is read at all
        if refused:
            raise Failed(refused)
        return parse_reply(text, reply_tokens=settings.reply_tokens)

    first = await asked(call.messages)
    try:
        reply = parse(first.text)
        remember(first.text, first.model)
        return reply
    except ReplyError as exc:
        reason = str(exc)
    repair = call.messages + [
        {"role": "assistant", "content": (first.text or "")[:comment_limit(settings.reply_tokens)]},
        {"role": "user", "content": REPAIR.format(reason=reason, shape=call.shape)}]
    second = await asked(repair)
    try:
        reply = parse(second.text)
    except ReplyError as exc:
        raise Failed(f"unparseable reply twice ({reason}; then {exc})") from None
    remember(second.text, second.model)
    return reply


class Shared:
    """What the waves of one run share, across its ledgers: the budget, the cap on calls in
    flight (``settings.concurrency``), the progress shown."""

    def __init__(self, settings: Settings, progress: Progress | None = None) -> None:
        self.budget = Budget(settings)
        self.semaphore = asyncio.Semaphore(settings.concurrency)
        self.progress = progress or Progress()
