"""A streamed reply, both ways to a model (seam: cascade.turns.chain.complete): plain HTTP
for openai/ models, litellm's stream=True for the rest (here forced with CASCADE_HTTP=
litellm) -- the pieces arrive in order, in several calls, and the whole reply, the usage and
the model that answered are what a non-streamed call gives."""
from __future__ import annotations

import asyncio
import json

import pytest
from fakellm import streamed

from cascade.turns.chain import complete
from cascade.turns.settings import Settings

REPLY = json.dumps({"comment": "A reply long enough to come in several chunks of text, "
                               "each passed on as it arrives.", "vote": "READY"})


@pytest.mark.parametrize("http", ["auto", "litellm"])
def test_a_streamed_reply_arrives_in_pieces_and_whole(fake_llm, monkeypatch, http):
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_HTTP", http)
    fake_llm.default(streamed(REPLY, 0.01))
    settings = Settings.from_env()
    pieces: list[str] = []
    messages = [{"role": "user", "content": "Review it."}]
    done = asyncio.run(complete("openai/fake", messages, settings, on_text=pieces.append))
    assert len(pieces) > 3 and "".join(pieces) == REPLY == done.text
    assert done.model == "openai/fake" and done.completion_tokens > 0
    assert done.prompt_tokens > 0
    body = fake_llm.chat_requests[-1].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    whole = asyncio.run(complete("openai/fake", messages, settings))  # not streamed
    assert whole.text == REPLY and "stream" not in fake_llm.chat_requests[-1].body
    assert (whole.prompt_tokens, whole.completion_tokens) == (done.prompt_tokens,
                                                              done.completion_tokens)


def test_a_stream_that_fails_is_retried_and_said_like_any_failure(fake_llm, monkeypatch):
    from fakellm import http_error

    from cascade.turns.chain import ModelError

    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.01")
    fake_llm.script("Review it.", http_error(503), streamed(REPLY, 0.0), sticky=False)
    retried: list[str] = []
    pieces: list[str] = []
    done = asyncio.run(complete("openai/fake", [{"role": "user", "content": "Review it."}],
                                Settings.from_env(), on_text=pieces.append,
                                on_retry=lambda m, reason, wait: retried.append(reason)))
    assert retried and "HTTP 503" in retried[0] and done.text == REPLY == "".join(pieces)
    fake_llm.default(http_error(401))
    with pytest.raises(ModelError, match="HTTP 401"):
        asyncio.run(complete("openai/fake", [{"role": "user", "content": "x"}],
                             Settings.from_env(), on_text=pieces.append))
