"""No configured credential is ever printed or written: a server that echoes the key it
refused (401, 403) or fails with it in its text (429, 500) gets it into neither the terminal,
the ledger's FAILURE lines, nor anything under .git -- through a real `git commit` with the
hook installed and the scripted endpoint over HTTP."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git
from fakellm import http_error
from inproc import commit
from test_hook import DOC, LEDGER, install_plain, loop_repo, match  # noqa: F401

from cascade.turns.credentials import SHOWN, configured, scrub

KEY = "sk-proj-Zx81Lq0Vb3NmC4Tg7Hr2Jp5Ks9Wd6Fy1"  # the configured key
PASSWORD = "pr0xy-Passw0rd-77"  # a user:password@ in the endpoint's URL


@pytest.mark.parametrize("status", [401, 403, 429, 500])
def test_an_echoed_key_reaches_no_output_ledger_or_cache(status, loop_repo, fake_llm,
                                                         monkeypatch):
    repo = loop_repo
    monkeypatch.setenv("CASCADE_API_KEY", KEY)
    monkeypatch.setenv("CASCADE_RETRIES", "1")
    monkeypatch.setenv("PROXY_GATEWAY_PASSWORD", PASSWORD)
    install_plain(repo)
    for name in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
        fake_llm.script(match(name), http_error(
            status, f"Incorrect API key provided: {KEY} (gateway {PASSWORD}); "
                    f"Authorization: Bearer {KEY}"))
    git(repo, "add", DOC)
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert fake_llm.calls() >= 3  # the endpoint was asked, and refused
    assert SHOWN in blocked.out  # the message is kept, the key is not
    written = [blocked.out, (repo / LEDGER).read_text()]
    written += [p.read_text(errors="replace") for p in Path(repo / ".git").rglob("*")
                if p.is_file() and "cascade" in p.parts]
    for text in written:
        assert KEY not in text and PASSWORD not in text
    assert "FAILURE" in (repo / LEDGER).read_text()  # the failure is recorded, redacted


def test_what_counts_as_configured():
    env = {"OPENAI_API_KEY": "sk-abcdefgh12345678", "ANTHROPIC_AUTH_TOKEN": "tok/with+slash==",
           "MY_GATEWAY_API_BASE": "https://user:s3cr%2Bet99@gw.example.com/v1",
           "HOME": "/root", "SHORT_KEY": "abc", "PATH": "/usr/bin"}
    found = configured("sk-cascade-123456789", "http://u:hunter2hunter2@proxy:8080", env)
    assert "sk-abcdefgh12345678" in found and "sk-cascade-123456789" in found
    assert "hunter2hunter2" in found
    assert "s3cr+et99" in found and "s3cr%2Bet99" in found  # as written and as decoded
    assert "tok%2Fwith%2Bslash%3D%3D" in found  # and URL-encoded
    assert "abc" not in found and "/root" not in found and "/usr/bin" not in found
    assert scrub("key sk-abcdefgh12345678 and s3cr%2Bet99.", found) == (
        f"key {SHOWN} and {SHOWN}.")
    assert scrub("nothing here", []) == "nothing here"


def test_a_reply_that_echoes_the_key_is_written_without_it(loop_repo, fake_llm, monkeypatch):
    """A model (or a proxy before it) that puts the key into its reply: the ledger gets the
    reply, not the key -- streamed or not."""
    import json

    repo = loop_repo
    monkeypatch.setenv("CASCADE_API_KEY", KEY)
    install_plain(repo)
    for name in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
        fake_llm.script(match(name), json.dumps({"comment": f"Your key is {KEY}.",
                                                 "vote": "READY"}))
    git(repo, "add", DOC)
    landed = commit(repo)
    ledger = (repo / LEDGER).read_text()
    assert landed.returncode == 0, landed.out
    assert KEY not in ledger and KEY not in landed.out and f"Your key is {SHOWN}." in ledger
    cached = [p.read_text(errors="replace") for p in Path(repo / ".git").rglob("*")
              if p.is_file() and "cascade" in p.parts]
    assert cached and not any(KEY in text for text in cached)  # the reply cache included


def test_a_streamed_reply_is_scrubbed_across_its_pieces():
    from cascade.turns.credentials import Stream

    shown: list[str] = []
    stream = Stream(shown.append, [KEY])
    text = f"before {KEY} after and more text to come"
    for i in range(0, len(text), 5):  # the key arrives split over several pieces
        stream(text[i:i + 5])
    assert all(KEY[:10] not in piece for piece in shown)  # no part of it shown on the way
    stream.flush()
    assert "".join(shown) == f"before {SHOWN} after and more text to come"
    shown.clear()
    stream("a retry cuts it: " + KEY[:12])
    stream.restart()  # the failed reply's text is passed on, but not the key's beginning
    assert "".join(shown) == "a retry cuts it: "


def test_explain_names_the_endpoint_without_its_password(loop_repo, monkeypatch):
    """``cascade explain`` says which endpoint a rule's personas are asked through: its
    URL without the user info, in text and JSON alike."""
    import inproc

    repo = loop_repo
    monkeypatch.setenv("CASCADE_API_BASE", f"http://gateway:{PASSWORD}@127.0.0.1:9/v1")
    for args in (["explain", DOC], ["explain", DOC, "--json"]):
        proc = inproc.cascade(repo, *args)  # stdout and stderr, as a process would print them
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "127.0.0.1:9/v1" in proc.stdout and PASSWORD not in proc.stdout + proc.stderr


def test_a_declared_provider_s_password_is_a_credential(fake_llm, tmp_path):
    """A password in a declared provider's api_base, echoed by the server: scrubbed from
    the failure like the environment's."""
    import asyncio

    from cascade.config.providers import ProviderEntry, ProviderTable
    from cascade.turns.chain import ModelError, complete
    from cascade.turns.settings import Settings

    base = fake_llm.url.replace("http://", f"http://team:{PASSWORD}@")
    fake_llm.default(http_error(401, f"bad credentials team:{PASSWORD}"))
    table = ProviderTable((ProviderEntry("team", None, "openai/fake", (("api_base", base),)),))
    with pytest.raises(ModelError) as caught:
        asyncio.run(complete("team", [{"role": "user", "content": "hi"}],
                             Settings(retries=0, providers=table)))
    assert PASSWORD not in str(caught.value) and SHOWN in str(caught.value)
