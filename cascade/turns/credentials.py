"""The credentials this run is configured with (``configured``; which ones: docs/secrets.md,
"Secrets"), and their removal from any text the tool prints or writes: a server that echoes
the rejected key in its error (a 401's "Incorrect API key provided: sk-...") must not get it
into the terminal, a ledger's FAILURE line, a log or the cache, where the next commit would
put it into git for good. Pure but for reading the environment; no model, no files.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote, unquote, urlsplit

SHOWN = "[REDACTED:configured-credential]"
_NAMES = ("_API_KEY", "_API_TOKEN", "_AUTH_TOKEN", "_KEY", "_SECRET", "_PASSWORD", "_TOKEN")
_BASES = ("_API_BASE", "_BASE_URL")
_SHORTEST = 8  # a shorter value is left alone: too short to tell from words


def configured(api_key: str | None = None, api_base: str | None = None,
               env: Mapping[str, str] | None = None, bases: Iterable[str] = ()) -> list[str]:
    """The credential values configured here (``api_key``, ``api_base``: the settings';
    ``bases``: the declared providers' base URLs; and the environment's), the longest first,
    each with its URL-encoded and decoded forms."""
    env = os.environ if env is None else env
    values = [api_key or ""]
    values += [v for k, v in env.items() if k.upper().endswith(_NAMES)]
    for base in [api_base or "", *bases,
                 *(v for k, v in env.items() if k.upper().endswith(_BASES))]:
        try:
            password = urlsplit(base.strip()).password
        except ValueError:
            password = None
        values.append(password or "")
    forms = {form for v in map(str.strip, values) for form in (v, unquote(v), quote(v, safe=""))}
    return sorted((f for f in forms if len(f) >= _SHORTEST), key=len, reverse=True)


def scrub(text: str, values: Iterable[str]) -> str:
    """``text`` with every occurrence of each of ``values`` replaced by ``SHOWN``."""
    values = [v for v in values if v]
    if not values or not text:
        return text
    return re.compile("|".join(re.escape(v) for v in values)).sub(SHOWN, text)


class Stream:
    """A streamed reply's pieces passed on to ``on_text`` with every credential in ``values``
    replaced: the last characters that could begin one are held back until the next piece
    shows they do not (a reply's final text is scrubbed whole besides)."""

    def __init__(self, on_text, values: list[str]) -> None:
        self.on_text, self.values = on_text, values
        self.hold = max((len(v) for v in values), default=1) - 1
        self.pending = ""

    def __call__(self, piece: str) -> None:
        text = scrub(self.pending + piece, self.values)
        cut = max(len(text) - self.hold, 0)
        self.pending = text[cut:]
        if cut:
            self.on_text(text[:cut])

    def flush(self) -> None:
        """The reply is whole: what was held is passed on (scrubbed, as the reply is)."""
        if self.pending:
            self.on_text(self.pending)
        self.pending = ""

    def restart(self) -> None:
        """A retry starts the reply again: what was held is passed on, but for a tail that
        could begin a credential (dropped: that reply never ends)."""
        text, self.pending = self.pending, ""
        cut = next((i for i in range(len(text))
                    if any(v.startswith(text[i:]) for v in self.values)), len(text))
        if cut:
            self.on_text(text[:cut])
