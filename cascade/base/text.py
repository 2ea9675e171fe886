"""Text from outside -- a model's reply, a ledger, a document, an endpoint's message -- made
inert: it can neither act on a terminal nor make git take a ledger for a binary file.

Which characters act: the controls (C0 but the tab and the newline, DEL, C1: ESC and CSI start
terminal sequences, NUL makes git treat a file as binary, a lone CR rewinds a terminal line);
the bidi embeddings, overrides and isolates ("Trojan Source": they reorder what a reader sees);
invisible format characters that can carry hidden text (zero-width space, word joiner and
invisible operators, a BOM inside text, the Mongolian vowel separator, interlinear
annotations, and the tag characters, which spell ASCII a model reads and a person does not:
the ledger is the next persona's prompt). Left alone on purpose: the zero-width joiner and
non-joiner (emoji, Indic and Persian scripts) and the left-to-right / right-to-left marks
(right-to-left text needs them; they cannot reorder a whole line).

Two treatments, both visible (nothing silently vanishes from a review) and idempotent
(nothing they write is a character they replace):
- ``ledger_text``, for text written into a ledger: a C0 control or DEL becomes its control
  picture (ESC ``␛``, NUL ``␀``: one printable character, which can never re-form a control
  sequence), a C1 control -- and in a model's text a bidi or invisible character -- U+FFFD;
  line ends (CRLF, a lone CR) become ``\\n``.
- ``printable``, for whatever is printed: every acting character as an ASCII escape
  (``\\x1b``, ``\\u202e``), so a ledger written by hand cannot paint the terminal;
  ``json_printable`` does the same in a JSON document, with JSON's ``\\uXXXX`` escapes.
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but \t and \n, DEL, C1 (\r included)
_BIDI = "\u202a-\u202e\u2066-\u2069"
_INVISIBLE = "\u180e\u200b\u2060-\u2064\ufeff\ufff9-\ufffb\U000e0000-\U000e007f"

_LEDGER_CONTROL = re.compile(f"[{_CONTROLS}]")
_UNTRUSTED = re.compile(f"[{_CONTROLS}{_BIDI}{_INVISIBLE}]")  # every acting character
_ACTING = re.compile(f"\r\n|[{_CONTROLS}{_BIDI}{_INVISIBLE}]")

REPLACEMENT = "\ufffd"


def _picture(m: re.Match[str]) -> str:
    code = ord(m.group())
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ ... ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    return REPLACEMENT  # C1, bidi, invisible


def ledger_text(text: str, *, untrusted: bool = False) -> str:
    """``text`` ready for a ledger: line ends are ``\\n``, controls are visible pictures (C0,
    DEL) or U+FFFD (C1); with ``untrusted`` (a model's text) bidi controls and invisible
    format characters become U+FFFD too. Idempotent."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    pattern = _UNTRUSTED if untrusted else _LEDGER_CONTROL
    return pattern.sub(_picture, text) if pattern.search(text) else text


def _escape(m: re.Match[str]) -> str:
    s = m.group()
    if s == "\r\n":
        return "\n"
    code = ord(s)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def printable(text: object) -> str:
    """``text`` safe to print on a terminal: every acting character (see the module's
    docstring) as a visible ASCII escape (ESC is ``\\x1b``, U+202E ``\\u202e``); tabs and
    newlines stay, CRLF becomes a newline. Idempotent, and cheap when nothing acts."""
    s = text if isinstance(text, str) else str(text)
    return _ACTING.sub(_escape, s) if _ACTING.search(s) else s


def _json_escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_printable(document: str) -> str:
    """A JSON document (``json.dumps(..., ensure_ascii=False)``) with every acting character
    that is still raw -- DEL, C1, bidi, invisible: json escapes only C0 -- written as a
    ``\\uXXXX`` escape. Such characters only occur inside strings, so the document still
    loads to the same value."""
    return _UNTRUSTED.sub(_json_escape, document) if _UNTRUSTED.search(document) else document


def shown_url(url: str) -> str:
    """A URL as cascade prints it (a failure line names the endpoint): without its user info
    (a password in ``user:password@``) or query string (a key in ``?key=``)."""
    parts = urlsplit(url.strip())
    if not parts.scheme or not parts.netloc:
        return url.rstrip("/")
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", "")).rstrip("/")


def endpoint_url(base: str, suffix: str) -> str:
    """``base`` with ``suffix`` (``/chat/completions``) ending its path, unless the path
    already ends so; a query string (``?api-version=...``) stays after the path."""
    parts = urlsplit(base.strip())
    path = parts.path.rstrip("/")
    if not path.endswith(suffix):
        path += suffix
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, parts.fragment))
