"""How fast the turn's text work is: redaction and reply parsing.

    python bench/parsing.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _table import table, timed  # noqa: E402

from cascade.turns.redact import redact  # noqa: E402
from cascade.turns.replies import ReplyError, parse_reply  # noqa: E402


def attempt(text: str) -> None:
    try:
        parse_reply(text)
    except ReplyError:
        pass


def main() -> None:
    page = ("## Decision\nWe store the API key in the secret manager; the token expiry is one "
            "hour and the password policy requires 12 characters.\n```yaml\npassword: "
            "${DB_PASSWORD}\napi_key: <your-key>\n```\n| password | string | required |\n")
    doc = (page * (1_000_000 // len(page) + 1))[:1_000_000]
    prose = ("The reviewer considered the comment from the architect; the design is sound, but "
             "the rollout needs a feature flag. VOTE: READY\n" * 2_000)[:200_000]
    reply = "Here you go:\n```json\n" + json.dumps(
        {"comment": "A paragraph with {braces} and \"quotes\".\n" * 4_000, "vote": "CHANGES"}) + "\n```"
    rows = []
    for label, text, fn in [
        ("redact: 1 MB design document", doc, redact),
        ("redact: 1 MB of 'a'", "a" * 1_000_000, redact),
        ("redact: 1 MB of 'password='", "password=" * 110_000, redact),
        ("parse_reply: 200 KB prose, no JSON", prose, attempt),
        ("parse_reply: 200 KB of '{'", "{" * 200_000, attempt),
        ("parse_reply: 170 KB fenced reply", reply, attempt),
    ]:
        best, median = timed(lambda: fn(text))
        rows.append((label, f"{best * 1000:.1f}", f"{median * 1000:.1f}"))
    table("Text work (milliseconds; best and median of 5)", ("case", "best", "median"), rows)


if __name__ == "__main__":
    main()
