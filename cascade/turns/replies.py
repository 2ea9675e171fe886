"""Tolerant parsing of a persona's reply: never crashes, raises ReplyError with a one-line reason.
(Over 400 lines: every repair a reply may need, in the order they are tried.)

The contract: a reply is a JSON object ``{"comment": "<markdown>", "vote": "READY" | "CHANGES" |
"REJECT" | null}`` (extra fields such as position or confidence allowed) or
``{"sentinel": "NO_RESPONSE"}``. Models wrap the object in prose or code fences, or break it.

How a reply is read, in order:
  1. Empty, None or whitespace: ``empty reply``. A bare ``NO_RESPONSE`` (quotes, backticks,
     ``*`` or a final ``.`` around it allowed) is the sentinel.
  2. The whole text (or the inside of one ```` ``` ```` fence that is the whole text) as JSON. An
     array, string, number... there is an error (``reply is a JSON array, not an object``),
     except a JSON string that itself holds an object (a doubly encoded reply), which is read.
  3. Otherwise every ``{...}`` in the text, found by one linear scan that skips braces inside
     double-quoted strings: first the outermost objects in order, then objects nested inside
     them that open with a "comment" or "sentinel" key, then an object left open at the end.
     Each is tried with ``json.loads(strict=False)`` (raw newlines, tabs, control characters in
     strings), then again with trailing commas removed. The first object with a "comment" or
     "sentinel" key (case-insensitive) decides: it is the reply, or the reason for the error.
  4. Last resort, the ``json_repair`` library on at most three of the objects that failed to
     parse and mention comment or sentinel (single quotes, unquoted keys, missing commas...).
     Its result is held to the same rules as any other: a dict with a non-empty string
     "comment", or a sentinel.
Truncated JSON: an object cut off inside a string, or right after a ``:`` or ``,``, is rejected
(``reply JSON is truncated``) -- a half comment must not enter an append-only ledger. An object
whose last value is complete and that merely lacks its closing brace is repaired.
A vote written only in prose (``VOTE: READY`` without JSON) is no reply. The comment is
returned as-is (only lone surrogates, which cannot be written as UTF-8, become U+FFFD);
neutralising forged ledger markers and control characters inside it is another module's job
(cascade.ledger.render).

Size. A reply is asked for with ``max_tokens`` = the reply budget (CASCADE_REPLY_TOKENS); an
endpoint that ignores it can answer with megabytes. A raw reply past ``raw_limit`` (589,824
characters for the default 1,024 tokens) is refused unread (``too_large``): no parse, no
cache, no repair re-ask that would send it back. A comment past ``comment_limit`` (9,216) is
cut and its vote dropped (``cut_reply``): a reply that overran its budget is not a reply the
gate can trust.
"""
from __future__ import annotations

import json
import math
import re
import string
from typing import Any

from msgspec import Struct, field

from cascade.ledger.grammar import fence_state

__all__ = ["Reply", "ReplyError", "parse_reply", "normalise_vote", "VOTES", "SENTINEL",
           "comment_limit", "raw_limit", "too_large", "cut_reply"]

VOTES = ("READY", "CHANGES", "REJECT")
SENTINEL = "NO_RESPONSE"


class Reply(Struct, frozen=True):
    comment: str  # markdown ("" for a sentinel)
    vote: str | None = None  # "READY" | "CHANGES" | "REJECT" | None
    sentinel: str | None = None  # "NO_RESPONSE" or None
    extra: dict = field(default_factory=dict)  # other fields (position, confidence, ...)
    cut: int | None = None  # the comment's length when it was cut to the reply budget


class ReplyError(ValueError):
    """A reply that cannot be read; ``str(err)`` is a short one-line reason."""


_VOTE_WORDS = {
    "READY": "READY", "ACCEPT": "READY", "ACCEPTED": "READY", "APPROVE": "READY",
    "APPROVED": "READY", "LGTM": "READY", "YES": "READY",
    "CHANGES": "CHANGES", "REQUEST_CHANGES": "CHANGES", "CHANGES_REQUESTED": "CHANGES",
    "REVISE": "CHANGES",
    "REJECT": "REJECT", "REJECTED": "REJECT", "BLOCK": "REJECT", "BLOCKED": "REJECT",
    "NO": "REJECT",
    "": None, "NONE": None, "NULL": None,
}
_TRIM = string.whitespace + string.punctuation
_SEPARATORS = re.compile(r"[\s\-]+")

# A double-quoted JSON string, unrolled so that it never backtracks (an unterminated one fails
# in one pass).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACE = re.compile(r"[{}]")
_TRAILING_COMMA_OR_QUOTE = re.compile(r'"|,(?=\s*[}\]])')
_KEYED_OPEN = re.compile(r"""\{\s*\\?["']?(?:comment|sentinel)\b""", re.IGNORECASE)
_MENTIONS_KEY = re.compile(r"comment|sentinel", re.IGNORECASE)
_BARE_SENTINEL = re.compile(r"""[`"'*\s]*NO[_ -]?RESPONSE[`"'*.\s]*""", re.IGNORECASE)

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

_MAX_NESTED = 8  # nested objects tried per reply
_MAX_REPAIRS = 3  # json_repair calls per reply
_MAX_REPAIR_CHARS = 100_000
_FAILED = object()


def parse_reply(text: str | None, *, reply_tokens: int | None = None) -> Reply:
    """The reply in a model's text; raises ReplyError (only) when there is none. With
    ``reply_tokens`` (the budget the reply was asked for), a comment over its budget is cut
    and its vote dropped (``cut_reply``)."""
    if text is not None and not isinstance(text, str):
        raise ReplyError("reply is not text")
    if text is None or not text.strip():
        raise ReplyError("empty reply")
    reply = _parse(text, unwrap=True)
    return reply if reply_tokens is None else cut_reply(reply, reply_tokens)


CHARS_PER_TOKEN = 4


_COMMENT_KEY = re.compile(r'"comment"\s*:\s*"')
# A piece of a JSON string's text: plain characters, a \u escape, or another escape.
_STRING_PIECE = re.compile(r'[^"\\]+|\\u(.{4})|\\([^u])', re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t", "r": "", '"': '"', "\\": "\\", "/": "/", "b": "", "f": ""}


def streamed_comment(text: str) -> str:
    """The comment of a reply still streaming in, for a live display: the text so far of its
    ``"comment"`` string (escapes decoded, an unfinished one left out); a reply that is not
    JSON, as it is. Never used for what the ledger gets (that is parse_reply's)."""
    m = _COMMENT_KEY.search(text)
    if m is None:
        return "" if text.lstrip().startswith(("{", "`")) else text
    out = []
    piece = _STRING_PIECE.match(text, m.end())
    while piece is not None:  # up to the closing quote, or an escape not whole yet
        code, escaped = piece.groups()
        if code is not None:
            try:
                out.append(chr(int(code, 16)))
            except ValueError:
                pass
        else:
            out.append(piece.group() if escaped is None else _ESCAPES.get(escaped, escaped))
        piece = _STRING_PIECE.match(text, piece.end())
    return "".join(out)


def comment_limit(reply_tokens: int) -> int:
    """The longest comment a reply of ``reply_tokens`` tokens is taken to hold: twice the
    ~4 characters a token, and 1,024 characters more."""
    return 2 * CHARS_PER_TOKEN * max(int(reply_tokens), 1) + 1024


def raw_limit(reply_tokens: int) -> int:
    """The longest raw reply read at all: 64 times ``comment_limit``."""
    return 64 * comment_limit(reply_tokens)


def too_large(text: str | None, reply_tokens: int) -> str | None:
    """Why a raw reply is refused unread (one line), or None when it may be parsed."""
    if not isinstance(text, str) or len(text) <= raw_limit(reply_tokens):
        return None
    return (f"reply refused unread: {len(text):,} characters, more than 64 times what the "
            f"{reply_tokens:,}-token reply budget allows (CASCADE_REPLY_TOKENS)")


def cut_reply(reply: Reply, reply_tokens: int) -> Reply:
    """``reply`` with its comment cut to ``comment_limit(reply_tokens)`` (at a line end near
    the limit, a code fence it leaves open closed) and a note saying so, no vote, and
    ``cut``: the comment's length; unchanged when the comment fits."""
    limit = comment_limit(reply_tokens)
    if reply.sentinel or len(reply.comment) <= limit:
        return reply

    text = reply.comment[:limit].replace("\r\n", "\n").replace("\r", "\n")
    line_end = text.rfind("\n", limit * 3 // 4)
    if line_end > 0:
        text = text[:line_end]
    text = text.rstrip()
    fence = fence_state(text.split("\n"))
    if fence is not None:
        text += "\n" + fence
    note = (f"*[reply cut by cascade: {len(reply.comment):,} characters, over the "
            f"{reply_tokens:,}-token reply budget; the rest, and the vote, were dropped]*")
    return Reply(f"{text}\n\n{note}", None, None, reply.extra, cut=len(reply.comment))


def normalise_vote(value: Any) -> str | None:
    """READY / CHANGES / REJECT / None from a vote field, synonyms and stray punctuation allowed."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ReplyError(f"unrecognised vote '{_short(json.dumps(value, default=str))}'")
    word = _SEPARATORS.sub("_", value.strip(_TRIM).upper())
    if word in _VOTE_WORDS:
        return _VOTE_WORDS[word]
    raise ReplyError(f"unrecognised vote '{_short(value)}'")


def _parse(text: str, unwrap: bool) -> Reply:
    s = text.strip().lstrip("\ufeff")
    if _BARE_SENTINEL.fullmatch(s):
        return Reply("", None, SENTINEL, {})
    if not _MENTIONS_KEY.search(s):  # nothing here can be a reply, broken or not
        raise ReplyError("no JSON object in the reply" if "{" not in s else
                         "reply has no 'comment' string")
    for whole in _whole_texts(s):
        obj = _loads(whole)
        if obj is _FAILED:
            continue
        if isinstance(obj, dict):
            if _reply_keys(obj):
                return _from_object(obj)
            break  # an object, but not a reply: perhaps a wrapper around one
        if unwrap and isinstance(obj, str) and obj.strip().startswith("{"):
            return _parse(obj, unwrap=False)  # a doubly encoded reply
        raise ReplyError(f"reply is a JSON {_json_type(obj)}, not an object")

    closed, nested, open_tail = _candidates(text)
    if not closed and not nested and open_tail is None:
        raise ReplyError("no JSON object in the reply")
    saw_object = False
    broken: list[str] = []
    for start, end in closed + nested:
        span = text[start:end]
        obj = _loads(span)
        if isinstance(obj, dict):
            saw_object = True
            if _reply_keys(obj):
                return _from_object(obj)
        elif obj is _FAILED and _MENTIONS_KEY.search(span):
            broken.append(span)

    truncated = False
    if open_tail is not None:
        start, in_string = open_tail
        tail = text[start:].rstrip().rstrip("`").rstrip()
        if in_string or tail.endswith((":", ",")):
            truncated = True
        elif _MENTIONS_KEY.search(tail):
            obj = _loads(tail)
            if isinstance(obj, dict) and _reply_keys(obj):
                return _from_object(obj)
            broken.append(tail)

    for span in broken[:_MAX_REPAIRS]:
        obj = _repair(span)
        if isinstance(obj, dict) and _reply_keys(obj):
            return _from_object(obj)
    if truncated:
        raise ReplyError("reply JSON is truncated")
    if saw_object:
        raise ReplyError("reply has no 'comment' string")
    raise ReplyError("no valid JSON object in the reply")


def _whole_texts(s: str) -> list[str]:
    out = [s]
    if s.startswith("```") and s.endswith("```") and len(s) > 6:
        first_newline = s.find("\n")
        if 0 < first_newline < len(s) - 3:
            out.append(s[first_newline + 1:-3].strip())
    return out


def _scan_object(text: str, start: int) -> tuple[int | None, bool]:
    """Where the object opening at ``start`` closes: (end, False), or (None, in_string) when the
    text ends first -- ``in_string`` when it ends inside a string."""
    depth = 1
    i = start + 1
    while True:
        quote = text.find('"', i)
        stop = len(text) if quote < 0 else quote
        closes = text.count("}", i, stop)
        if closes < depth:  # the object cannot close before the next string: count, don't walk
            depth += text.count("{", i, stop) - closes
        else:
            for m in _BRACE.finditer(text, i, stop):
                depth += 1 if m.group() == "{" else -1
                if depth == 0:
                    return m.end(), False
        if quote < 0:
            return None, False
        sm = _STRING.match(text, quote)
        if sm is None:
            return None, True
        i = sm.end()


def _candidates(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]],
                                    tuple[int, bool] | None]:
    """Outermost closed objects, nested objects that open with a reply key, and the object left
    open at the end of the text, if any: (start, in_string)."""
    closed: list[tuple[int, int]] = []
    open_tail: tuple[int, bool] | None = None
    pos = 0
    while True:
        start = text.find("{", pos)
        if start < 0:
            break
        end, in_string = _scan_object(text, start)
        if end is None:
            open_tail = (start, in_string)
            break
        closed.append((start, end))
        pos = end
    tops = {s for s, _ in closed}
    if open_tail:
        tops.add(open_tail[0])
    nested: list[tuple[int, int]] = []
    tried = 0
    for m in _KEYED_OPEN.finditer(text):
        if m.start() in tops:
            continue
        tried += 1
        if tried > _MAX_NESTED:
            break
        end, _ = _scan_object(text, m.start())
        if end is not None:
            nested.append((m.start(), end))
    return closed, nested, open_tail


def _loads(s: str) -> Any:
    """json.loads, lenient about control characters and trailing commas; _FAILED if not JSON."""
    try:
        return json.loads(s, strict=False, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        pass
    fixed = _drop_trailing_commas(s)
    if fixed is None:
        return _FAILED
    try:
        return json.loads(fixed, strict=False, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return _FAILED


def _drop_trailing_commas(s: str) -> str | None:
    """``s`` without commas that directly precede a closing bracket (outside strings); None
    when there are none to drop."""
    parts: list[str] = []
    pos = i = 0
    while True:
        m = _TRAILING_COMMA_OR_QUOTE.search(s, i)
        if m is None:
            break
        j = m.start()
        if m.group() == '"':
            sm = _STRING.match(s, j)
            if sm is None:
                break
            i = sm.end()
        else:
            parts.append(s[pos:j])
            pos = i = j + 1
    if not parts:
        return None
    parts.append(s[pos:])
    return "".join(parts)


def _repair(span: str) -> Any:
    if len(span) > _MAX_REPAIR_CHARS:
        return _FAILED
    try:
        import json_repair  # imported only when a reply is broken
    except ImportError:  # pragma: no cover - a declared dependency
        return _FAILED
    try:
        obj = json_repair.loads(span)
    except Exception:  # the library's own failures (e.g. nesting too deep) mean "not JSON"
        return _FAILED
    if isinstance(obj, list):  # several objects side by side: the first that is a reply
        obj = next((o for o in obj if isinstance(o, dict) and _reply_keys(o)), _FAILED)
    return obj


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")  # NaN, Infinity: left to json_repair, then checked


def _reply_keys(obj: dict) -> dict[str, str]:
    """Lower-cased reply keys present in ``obj`` -> the key as written."""
    keys: dict[str, str] = {}
    for k in obj:
        if isinstance(k, str):
            low = k.strip().lower()
            if low in ("comment", "vote", "sentinel") and low not in keys:
                keys[low] = k
    if "comment" not in keys and "sentinel" not in keys:
        return {}
    return keys


def _from_object(obj: dict) -> Reply:
    keys = _reply_keys(obj)
    extra = {str(k): _json_safe(v) for k, v in obj.items() if k not in keys.values()}
    if "sentinel" in keys:
        value = obj[keys["sentinel"]]
        if value is not None and not (isinstance(value, str) and not value.strip()):
            if isinstance(value, str) and _SEPARATORS.sub("_", value.strip(_TRIM).upper()) == SENTINEL:
                return Reply("", None, SENTINEL, extra)
            raise ReplyError(f"unrecognised sentinel '{_short(str(value))}'")
    if "comment" not in keys:
        raise ReplyError("reply has no 'comment' string")
    comment = obj[keys["comment"]]
    if not isinstance(comment, str):
        raise ReplyError(f"reply has no 'comment' string (it is a JSON {_json_type(comment)})")
    if not comment.strip():
        raise ReplyError("reply has an empty 'comment'")
    vote = normalise_vote(obj[keys["vote"]]) if "vote" in keys else None
    return Reply(_valid_text(comment), vote, None, extra)


def _json_safe(value: Any, depth: int = 0) -> Any:
    if depth > 100:
        return None
    if isinstance(value, dict):
        return {str(k): _json_safe(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v, depth + 1) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str):
        return _valid_text(value)
    if value is None or isinstance(value, (int, float, bool)):
        return value
    return _valid_text(str(value))


def _valid_text(text: str) -> str:
    """``text`` with lone surrogates (JSON "\\ud800") replaced: it must encode as UTF-8."""
    return _LONE_SURROGATE.sub("\ufffd", text) if _LONE_SURROGATE.search(text) else text


_JSON_TYPES = {list: "array", str: "string", bool: "boolean", int: "number", float: "number",
               type(None): "null", dict: "object"}


def _json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _short(value: str, limit: int = 40) -> str:
    one_line = " ".join(value.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 3] + "..."
