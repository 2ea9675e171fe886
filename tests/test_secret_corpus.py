"""The secret boundary measured on a corpus: tests/data/secret_corpus.yml holds credentials
written the ways people write them into design documents (inline code, tables, prose, shell
commands, configuration files of common tools, key blocks, JSON key files, titles), and
look-alikes that are not secrets.

Unit: ``redact`` removes every listed secret, reports exactly what it replaced (kind and line of
each marker), is idempotent, and leaves every look-alike alone.
End to end: every corpus secret planted in one staged ADR (and some in a human comment, the
ledger's background and a repository persona file) goes through the real hook, ``git commit``
and all, to a fake model endpoint that never receives one of them.
"""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import inproc
import pytest
import yaml
from conftest import REPO, git
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hook import RULES  # the same adr rule as the loop tests

from cascade.turns.redact import redact

CORPUS_FILE = Path(__file__).parent / "data" / "secret_corpus.yml"
JOIN = "«»"  # written inside provider tokens in the data file so it does not look like a leak


def _unjoin(s: str) -> str:
    return s.replace(JOIN, "")


def _load() -> tuple[list[tuple[str, str, list[str], list[str]]], list[tuple[str, str]]]:
    data = yaml.safe_load(CORPUS_FILE.read_text("utf-8"))
    secrets = [(e["id"], _unjoin(e["text"]), [_unjoin(s) for s in e["secrets"]],
                [_unjoin(k) for k in e.get("keep", [])]) for e in data["secrets"]]
    clean = [(e["id"], _unjoin(e["text"])) for e in data["clean"]]
    return secrets, clean


SECRETS, CLEAN = _load()  # (id, text, secret values, what must stay), (id, text)
MARKER = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")


def replaced_spans(text: str, out: str, lines: list[int]) -> list[tuple[int, int]]:
    """Where in ``text`` each marker of ``out`` stands: ``out`` must be ``text`` with non-empty
    spans replaced by ``[REDACTED:...]`` markers, nothing else, the i-th span starting on line
    ``lines[i]``. Found by a search over the places each following piece of ``out`` could
    start (pieces can occur inside a secret too)."""
    parts = MARKER.split(out)
    pieces, n = parts[0::2], len(parts) // 2
    assert len(lines) == n and text.startswith(pieces[0])
    failed: set[tuple[int, int]] = set()

    def solve(i: int, pos: int) -> list[tuple[int, int]] | None:  # span i starts at pos
        if (i, pos) in failed or text.count("\n", 0, pos) + 1 != lines[i]:
            return None
        nxt = pieces[i + 1]
        if i + 1 == n:
            end = len(text) - len(nxt)
            if end > pos and text.endswith(nxt):
                return [(pos, end)]
        else:
            end = text.find(nxt, pos + 1)
            while end >= 0:
                rest = solve(i + 1, end + len(nxt))
                if rest is not None:
                    return [(pos, end)] + rest
                end = text.find(nxt, end + 1)
        failed.add((i, pos))
        return None

    spans = solve(0, len(pieces[0])) if n else ([] if text == out else None)
    assert spans is not None, "the output is not the input with spans at the reported lines " \
                              "replaced by [REDACTED:...] markers"
    return spans


def check_report(text: str) -> str:
    """Redact ``text`` and check the report against what was actually replaced: one marker per
    reported redaction, of its kind, replacing text that starts on its line; and idempotence."""
    out, found = redact(text)
    assert out.count("[REDACTED:") == len(found)
    assert MARKER.findall(out) == [r.kind for r in found]
    replaced_spans(text, out, [r.line for r in found])
    again, more = redact(out)
    assert (again, more) == (out, [])
    return out


# ---- the corpus itself ---------------------------------------------------------------------------

def test_the_corpus_is_what_it_claims() -> None:
    assert len(SECRETS) >= 60 and len(CLEAN) >= 40
    ids = [s[0] for s in SECRETS] + [c[0] for c in CLEAN]
    assert len(ids) == len(set(ids))
    for entry_id, text, values, keep in SECRETS:
        assert values, entry_id
        for value in values + keep:
            assert value in text, (entry_id, value)


# ---- unit ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, values, keep", [s[1:] for s in SECRETS],
                         ids=[s[0] for s in SECRETS])
def test_every_corpus_secret_is_redacted(text: str, values: list[str], keep: list[str]) -> None:
    out = check_report(text)
    assert [v for v in values if v in out] == []
    assert [k for k in keep if k not in out] == []  # only the secret goes: keys, users stay


@pytest.mark.parametrize("text", [c[1] for c in CLEAN], ids=[c[0] for c in CLEAN])
def test_no_look_alike_is_redacted(text: str) -> None:
    assert redact(text) == (text, [])


def test_the_whole_corpus_as_one_document() -> None:
    doc = adr_text()
    out = check_report(doc)
    leaked = sorted({s[0] for s in SECRETS for v in s[2] if v in out})
    assert leaked == []
    for _, text in CLEAN:  # the look-alikes stay as they are next to the secrets
        assert text in out


# Corpus passages cut and glued with the words the detectors key on: whatever the mix, the report
# matches the replacements and a second redaction changes nothing.
_PIECES = [s[1] for s in SECRETS] + [c[1] for c in CLEAN] + [
    "password", "token", "API key", "secret", "is", "for the db", ":", "=", "|", "\n|---|\n",
    "`", "'", '"', "-p", "-u", "-a", "-b", "mysql", "curl", "sshpass", "ssh", "login",
    "redis-cli", "htpasswd", "pass:", "\\\n", "-----BEGIN RSA " + "PRIVATE KEY-----",
    "Version: 1", "<password>", "</password>", '"auth": "', "_auth=", ":thin:", "a/b@",
    "hunter2024", "Tr0ub4dor&3", "Xy7!pq9z", "AK" + "IAIOSFODNN7EXAMPLE", "$apr1$", ";", "&&",
    "**", "si" + "g=", ": |", ": >-", "\n    ", "!vault |", ">", "EXAMPLE", "x" * 60,
    "set the", "change", "export", " to ", " as ", "and", "<br>", "> ", ">> ", "- > ",
    "Ab3dE5gH7jK9mN1pQ3sT5vX7Ab3dE5gH7jK9mN1pQ3sT5vX7Ab3dE5gH7jK9mN1pQ3sT5vX7"]


@st.composite
def _mixes(draw) -> str:
    out = []
    for _ in range(draw(st.integers(1, 12))):
        piece = draw(st.sampled_from(_PIECES))
        if draw(st.booleans()):
            a = draw(st.integers(0, len(piece)))
            piece = piece[a:draw(st.integers(a, len(piece)))]
        out += [piece, draw(st.sampled_from(["", " ", "\n", "\n\n", " | ", "`", "\t"]))]
    return "".join(out)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mixes())
def test_any_mix_is_reported_as_replaced_and_idempotent(text: str) -> None:
    check_report(text)


# ---- end to end: the real hook, a real git commit, a fake model endpoint ------------------------

DOC = "docs/adr/0001-rotate-keys.md"
LEDGER = "docs/adr/discussions/0001-rotate-keys.discussion.md"
TITLE_KEY = "AK" + "IA" + "J7QW2ER5TY8UI3OP"
PERSONA_SECRET = "Per5ona!Leak42"
COMMENT_SECRETS = {
    "comment-prose": ("For the record, the staging admin password is C0mment!Pw99.",
                      "C0mment!Pw99"),
    "comment-inline-code": ("I tried `REDIS_PASSWORD=Rd!Comment77` and it worked.", "Rd!Comment77"),
    "comment-curl": ("curl -u ops:0ps!Curl2024 https://grafana.example.com", "0ps!Curl2024"),
}
BACKGROUND_SECRETS = {
    "background-table": ("| Service | Password |\n|---|---|\n| broker | Bkr!Bg2024x |",
                         "Bkr!Bg2024x"),
    "background-mysql": ("mysql -u root -pBgMysql!55 -e 'show tables'", "BgMysql!55"),
}
CANARY = "The end of the document reached the model."


def adr_text() -> str:
    parts = [f"# Rotate {TITLE_KEY} and every other leaked credential", "",
             "## Context", "", "Secrets, as people write them:", ""]
    for entry_id, text, _, _ in SECRETS:
        parts += [f"### {entry_id}", "", text, ""]
    parts += ["## Look-alikes", ""]
    for entry_id, text in CLEAN:
        parts += [f"### {entry_id}", "", text, ""]
    parts += ["## Decision", "", CANARY, ""]
    return "\n".join(parts)


def _reply(comment: str, vote: str) -> str:
    """A reply; a blocking vote names a finding, as the step asks."""
    found = [] if vote == "READY" else [{"severity": "major", "where": "-", "what": comment}]
    return json.dumps({"comment": comment, "vote": vote, "findings": found})


def _run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=repo, capture_output=True, text=True, timeout=120,
                          check=False)


def _commit(repo: Path) -> str:
    proc = _run(repo, "git", "commit", "-m", "change")
    return proc.stdout + proc.stderr  # git shows hook output on stderr


REDACTION_LINE = re.compile(r"cascade: redacted before sending: (.+?):(\d+) ([a-z0-9-]+)$",
                            re.MULTILINE)


def _reports(output: str) -> list[tuple[str, int, str]]:
    return [(path, int(line), kind) for path, line, kind in REDACTION_LINE.findall(output)]


def _leaks(sent: str) -> list[str]:
    leaked = [entry_id for entry_id, _, values, _ in SECRETS if any(v in sent for v in values)]
    leaked += [k for k, (_, v) in {**COMMENT_SECRETS, **BACKGROUND_SECRETS}.items() if v in sent]
    return leaked


@pytest.fixture
def secret_repo(repo, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    monkeypatch.setenv("CASCADE_SOURCE_TOKENS", "100000")  # the whole document goes in
    monkeypatch.setenv("CASCADE_CONTEXT_TOKENS", "100000")
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    (repo / ".ai-rules.yml").write_text(RULES)
    personas = repo / ".cascade" / "personas"
    personas.mkdir(parents=True)
    bundled = yaml.safe_load((REPO / "personas" / "security.yml").read_text("utf-8"))
    bundled["personality"] += (f"For the staging demo the admin password is {PERSONA_SECRET}; "
                               "never repeat it.\n")
    (personas / "security.yml").write_text(yaml.safe_dump(bundled, sort_keys=False))
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "start")
    proc = inproc.cascade(repo, "init", "--plain")
    assert proc.returncode == 0, proc.stderr
    (repo / "docs/adr").mkdir(parents=True)
    (repo / DOC).write_text(adr_text(), encoding="utf-8")
    return repo


@pytest.mark.timeout(60)
def test_no_corpus_secret_reaches_the_model(secret_repo, fake_llm):
    repo = secret_repo
    for name in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
        fake_llm.script(f"Reply as {name} ", _reply(f"{name}: reviewed.", "CHANGES"))

    # 1. the staged ADR: every corpus secret, and an AWS key in the title
    git(repo, "add", DOC)
    first = _commit(repo)
    assert fake_llm.calls() == 3, first
    sent = fake_llm.all_text()
    assert CANARY in sent  # the whole document went in
    assert _leaks(sent) == [], "leaked to the model, by corpus id"
    doc_text = (repo / DOC).read_text("utf-8")
    expected = {(r.line, r.kind) for r in redact(doc_text)[1]}
    reported = _reports(first)
    assert {(line, kind) for path, line, kind in reported if path == DOC} == expected
    assert TITLE_KEY not in sent, "the title's AWS key reached the model (cascade/turns/prompt.py)"
    assert PERSONA_SECRET not in sent, \
        "the persona file's secret reached the model (cascade/turns/prompt.py)"

    # 2. a human comment and the ledger's background, on a second commit
    ledger = repo / LEDGER
    text = ledger.read_text("utf-8")
    background = "\n\n".join(t for t, _ in BACKGROUND_SECRETS.values())
    at = text.index("\n---")  # the first block of the ledger starts after the background
    ledger.write_text(text[:at] + "\n\n" + background + "\n" + text[at:], encoding="utf-8")
    body = " ".join(t for t, _ in COMMENT_SECRETS.values())
    proc = inproc.cascade(repo, "comment", LEDGER, f"@security {body}")
    assert proc.returncode == 0, proc.stderr
    calls = fake_llm.calls()
    git(repo, "add", LEDGER)
    second = _commit(repo)
    assert fake_llm.calls() > calls, second
    sent = fake_llm.all_text()
    assert "Rotate" in sent and "the staging admin password is" in sent  # the comment went in
    assert _leaks(sent) == [], "leaked to the model, by corpus id"
    reported = [(line, kind) for path, line, kind in _reports(second) if path == LEDGER]
    staged = git(repo, "show", f":{LEDGER}").split("\n")
    planted = [TITLE_KEY] + [v for _, v in {**COMMENT_SECRETS, **BACKGROUND_SECRETS}.values()]
    assert len(reported) >= len(planted)
    # Each reported line of the ledger holds a planted secret, and each secret is reported at
    # its line.
    wrong = [(line, kind, staged[line - 1]) for line, kind in reported
             if not any(v in staged[line - 1] for v in planted)]
    wrong += [("not reported at its line", value) for value in planted
              if not any(value in staged[line - 1] for line, _ in reported)]
    assert not wrong, f"ledger redactions reported at the wrong lines: {wrong}"
