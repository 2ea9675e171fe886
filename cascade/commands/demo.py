"""``cascade demo``: the whole loop, offline, in a temporary repository.

A sample ADR is committed through the real (plain) git hook; the commit is blocked while the
panel reviews; the author answers in the ledger; the commit lands once the panel agrees.
Uses the embedded model (or CASCADE_MODEL / CASCADE_API_BASE when set).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from cascade.base.errors import CascadeError
from cascade.turns.tiers import local_model_available, resolve_model
from cascade.turns.settings import Settings

ADR = "docs/adr/0001-record-events-in-sqlite.md"
LEDGER = "docs/adr/discussions/0001-record-events-in-sqlite.discussion.md"

RULES = """\
# The demo's panel advises and a person decides: the personas review and vote, their votes
# are shown, and only people's votes count toward consensus. On a real project with a real
# model, drop persona_votes (or set it to counted) and the panel's votes gate the commit.
rules:
  - name: adr
    match: "docs/adr/*.md"
    template: adr
    discussion: "docs/adr/discussions/{stem}.discussion.md"
    participants: [architect, security, pragmatist]
    protocol: review
    consensus: {threshold_ready: 1.0, persona_votes: advisory}
"""

ADR_TEXT = """\
# Record domain events in SQLite

## Status

PROPOSED

## Context

The order service emits about 200 domain events a minute. Three projections read them in
order. We have no event store today; events live in the message queue for seven days.

## Decision

Store every event in an append-only SQLite table (WAL mode), one database file per tenant,
with a nightly backup to object storage. Projections read by sequence number.

## Consequences

- Simple to run: one file per tenant, no new server.
- Writes serialise per tenant; 200 events a minute is far below SQLite's limits.
"""

ANSWERS = [
    ("Thanks. Backups are encrypted and restore is tested monthly. Access to the files is "
     "limited to the service account. @security does that cover it?", "READY"),
    ("Added: if one tenant outgrows SQLite we move that tenant to Postgres; the projections "
     "only read by sequence number, so they do not change.", "READY"),
    ("Agreed to revisit after one quarter in production.", "READY"),
]


def _say(text: str = "") -> None:
    print(text, flush=True)


def _step(text: str) -> None:
    _say(f"\n\033[1m== {text}\033[0m" if sys.stdout.isatty() else f"\n== {text}")


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> int:
    _say("$ " + " ".join(a if " " not in a else repr(a) for a in args))
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if out := (proc.stdout + proc.stderr).rstrip():
        _say(textwrap.indent(out, "  "))
    return proc.returncode


def demo(keep: bool = False) -> int:
    model = resolve_model(None, None, Settings.from_env())  # fails early, saying how to fix it
    tmp = Path(tempfile.mkdtemp(prefix="cascade-demo-"))
    env = {**os.environ, "CASCADE_PYTHON": sys.executable, "GIT_AUTHOR_NAME": "Dana Demo",
           "GIT_AUTHOR_EMAIL": "dana@example.com", "GIT_COMMITTER_NAME": "Dana Demo",
           "GIT_COMMITTER_EMAIL": "dana@example.com"}
    py = [sys.executable, "-m", "cascade"]
    try:
        _step(f"A fresh repository in {tmp}, with the cascade hooks (model: {model})")
        if model.startswith("cascade-local/") and local_model_available():
            _say("The embedded model is SmolLM2-135M: it proves the loop offline; its reviews "
                 "are not meaningful. Set CASCADE_MODEL for a real review.")
        _say("This demo's rule makes the panel advisory: it reviews and votes, and the "
             "author's vote decides (consensus: persona_votes: advisory).")
        for args in (["git", "init", "-q"], ["git", "config", "user.name", "Dana Demo"],
                     ["git", "config", "user.email", "dana@example.com"]):
            subprocess.run(args, cwd=tmp, check=True, capture_output=True)
        (tmp / ".ai-rules.yml").write_text(RULES)
        _run(py + ["init", "--plain"], tmp, env)
        (tmp / "docs/adr").mkdir(parents=True)
        (tmp / ADR).write_text(ADR_TEXT)

        _step("Commit an ADR: the hook asks the panel and blocks the commit")
        _run(["git", "add", ".ai-rules.yml", ".gitattributes", ADR], tmp, env)
        code = _run(["git", "commit", "-m", "ADR 0001: record events in SQLite"], tmp, env)
        for round_no, (answer, vote) in enumerate(ANSWERS, start=1):
            if code == 0:
                break
            _step("The ledger: the panel's comments and votes")
            _run(py + ["status", LEDGER], tmp, env)
            _step(f"Answer as the author (round {round_no}), stage, commit again")
            _run(py + ["comment", LEDGER, answer, "--vote", vote], tmp, env)
            _run(["git", "add", LEDGER], tmp, env)
            code = _run(["git", "commit", "-m", "ADR 0001: record events in SQLite"], tmp, env)
            answered = subprocess.run(["git", "diff", "--quiet", "--", LEDGER], cwd=tmp).returncode
            if code != 0 and answered:
                _say("The panel answered the new input; stage its replies and commit again:")
                _run(["git", "add", LEDGER], tmp, env)
                code = _run(["git", "commit", "-m", "ADR 0001: record events in SQLite"], tmp, env)
        _step("Result")
        if code == 0:
            _run(["git", "log", "--stat", "-1"], tmp, env)
            _say("\nThe commit landed with its ledger.")
            _step("What CI runs: the same verdict from the committed ledger, no model call")
            code = _run(py + ["check"], tmp, env)
        else:
            _run(py + ["status", LEDGER], tmp, env)
            _say("\nThe panel did not reach consensus in this demo's rounds: this is what a "
                 "blocked change looks like.")
        _say(f"\nThe demo repository is {'kept at ' + str(tmp) if keep else 'removed'}.")
        return 0 if code == 0 else 1
    except (OSError, subprocess.SubprocessError) as exc:
        raise CascadeError(f"demo failed: {exc}") from None
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
