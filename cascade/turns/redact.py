"""The secret boundary: credential-looking text is redacted before any prompt leaves the machine.
(Over 400 lines: the detectors share their value rules, placeholders and the overlap
resolution, and each is easier to audit beside the others than split; the token patterns are
data, in secret_patterns.yml beside this module, and the reading of a repository's own
patterns -- the format, gitleaks' subset, the bounds on a regex -- sits with the code that
applies them.)

There is no switch to turn this off. ``redact(text)`` replaces each secret with
``[REDACTED:<kind>]`` and reports the kind and line of each; ``is_secret_file(path)`` names the
files that are never read into a prompt at all. Cost is linear, every scan bounded: 35-70 ms
for 1 MB of design documents here (twice that when it holds secrets: the result is scanned
again), about a second for the worst adversarial megabyte we know -- with the bundled
patterns; a repository's own cost what their regexes cost (see _bounded).

What is read, and how -- the forms a secret takes, the detectors, secret-named keys, the value
rules, the context rule, the rescan to a fixed point, what is out of scope -- is described once,
in docs/secrets.md. The tokens found on their own are data: the patterns of
secret_patterns.yml, its format documented at its top. Their kinds, the <kind> of a marker (a
test holds this list to the file):
  aws-access-key  azure-storage-key  azure-sas-signature  (cloud accounts)
  google-api-key  google-oauth-secret  digitalocean-token  databricks-token  (cloud platforms)
  github-token  gitlab-token  npm-token  pypi-token  huggingface-token  (code and packages)
  anthropic-key  openai-key  slack-token  slack-webhook  discord-webhook  (models and chat)
  twilio-key  sendgrid-key  stripe-key  shopify-token  postman-key  grafana-token  (services)
  jwt  password-hash  vault-token  age-secret-key  (formats and vaults)
and, found by their context here: private-key, bearer-token, basic-auth, password-in-url,
aws-secret-key, secret-assignment, secret-in-table, secret-in-prose, password-in-command.

A repository adds its own, never taking one away: .cascade/secrets.yml and the gitleaks rule
files it includes, its regular expressions bounded (_bounded); a bad one is refused, one line
naming the file and the line (exit 2), before any prompt is built.
"""
from __future__ import annotations

import base64
import binascii
import bisect
import collections
import fnmatch
import functools
import math
import os
import re
import warnings
from pathlib import Path
from typing import Any

from msgspec import Struct

from cascade.config.yamlio import LineDict, check_keys, decode_utf8, items_with_lines, load_yaml
from cascade.base.errors import CascadeError
from cascade.base.safepath import read_inside

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: gitleaks rule files need the tomli package there
    try:
        import tomli as tomllib  # type: ignore[no-redef]
    except ModuleNotFoundError:
        tomllib = None  # type: ignore[assignment]

__all__ = ["PLACEHOLDER_WORDS", "Redaction", "is_placeholder", "is_secret_file", "redact"]


class Redaction(Struct, frozen=True):
    kind: str  # e.g. "aws-access-key", "private-key", "github-token", "password-in-url"
    line: int  # 1-based line in the input text where the secret started


def marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


class _Lazy:
    """A regular expression compiled the first time it is used. A redaction uses a handful of
    the ~45 below (the rest only on what the first ones found); compiling them all at import
    cost 15-20 ms of every run that asks a model. Each method asked for is then an attribute
    of the instance: no lookup beyond the first."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # only for a name not yet set on the instance
        compiled = self.__dict__.get("compiled")
        if compiled is None:
            compiled = self.__dict__["compiled"] = re.compile(*self.source)
        value = getattr(compiled, name)
        setattr(self, name, value)
        return value


# ---- tokens recognisable on their own: the pattern table, data ---------------------------------
# secret_patterns.yml, read the first time a text is redacted. Its patterns that start with a
# literal and name no keywords become one alternation grouped by that first character, so the
# engine skips ahead to where a token can start and tries one group there; each ends with an
# empty group whose number (the match's lastindex) says which matched. The others, and a
# repository's own, are tried one by one, each only when the text holds one of its keywords.
_PATTERN_FILE = Path(__file__).with_name("secret_patterns.yml")
TEAM_FILE = ".cascade/secrets.yml"
_PATTERN_KEYS = frozenset({"kind", "regex", "secret", "keywords", "holding", "entropy", "allow",
                           "glued"})
_HOLDING = {"digit": "[0-9]", "letter": "[A-Za-z]", "lower": "[a-z]", "capital": "[A-Z]",
            "digit-or-capital": "[0-9A-Z]"}
_KIND = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# A regex atom that is a literal or a class: the start of a token (_head) is made of them.
_HEAD_ATOM = re.compile(r"\\[^A-Za-z0-9]|\[(?:\\.|[^\]\\])*\]|[^\\\[\](){}|.*+?^$]")
# After a token's start, token characters up to where a token may have been cut -- taken whole
# (a lookahead and a back-reference: an atomic group), so a run that does not end there is
# not tried again shorter, once a character.
_CUT_RUN = (r"(?=(?P<run{n}>[A-Za-z0-9+/_\-.=%$~]{{0,1024}}))(?P=run{n})"
            r"(?=[`'\"]?[ \t]*\||(?i:<br)|\r?\n)")


class _Allow(Struct, frozen=True):
    """When a match is a look-alike: one of ``regexes`` finds something in its ``target``
    (the secret, the whole match or its line), or it holds one of ``stopwords``; with ``every``
    (gitleaks' condition = "AND"), both of those that are given."""

    regexes: tuple = ()
    target: str = "secret"
    stopwords: tuple[str, ...] = ()
    every: bool = False


class _Pattern(Struct, frozen=True):
    kind: str
    regex: Any  # compiled; None for a member of the alternation
    secret: int = 0  # the group that is the secret (0: the whole match; -1: the first non-empty)
    keywords: tuple[str, ...] = ()  # lower-case
    holding: Any = None  # a compiled character class the secret must hold
    entropy: float | None = None  # the secret's Shannon entropy must be more than this
    allows: tuple[_Allow, ...] = ()
    glued: bool = False  # may follow a letter or a digit
    bundled: bool = True


class _Table(Struct, frozen=True):
    alternation: Any  # the compiled alternation
    members: dict  # {number of a pattern's end group: (pattern, its groups' offset)}
    passes: tuple[_Pattern, ...]  # tried one by one


@functools.cache
def _bundled() -> _Table:
    """The bundled pattern table, read and compiled once. Each group of the alternation ends
    with the starts of its tokens followed by token characters up to where a token may have
    been cut (a line's end, a <br>, a table cell's border): where a token cut short may start
    (_cut_short), found in the same pass."""
    data = load_yaml(_PATTERN_FILE, _PATTERN_FILE.read_text("utf-8"))
    joined: dict[str, list[tuple[_Pattern, str, int]]] = {}
    passes = []
    for entry, line in _entries(data, _PATTERN_FILE, frozenset({"patterns"})):
        pattern = _pattern_of(entry, _PATTERN_FILE, line, bundled=True)
        if pattern.regex is None:
            shape = _shape(entry["regex"])
            rest = entry["regex"][len(shape.first):]
            joined.setdefault(shape.first, []).append((pattern, rest, shape.groups))
        else:
            passes.append(pattern)
    parts, members, number = [], {}, 0
    for first, alternatives in joined.items():
        rests = []
        for pattern, rest, groups in alternatives:
            members[number + groups + 1] = (pattern, number)
            number += groups + 1
            rests.append(f"{rest}()")
        heads = [h for h in dict.fromkeys(_head(rest) for _, rest, _ in alternatives) if h]
        if heads:  # a token cut short: no member
            rests.append(f"(?:{'|'.join(heads)}){_CUT_RUN.format(n=number)}()")
            number += 2
        parts.append(f"{first}(?:{'|'.join(rests)})")
    return _Table(re.compile("|".join(parts)), members, tuple(passes))


def _entries(data: object, path: Path, allowed: frozenset[str]) -> list[tuple[dict, int]]:
    """The pattern mappings of a pattern file, each with its line."""
    data = check_keys(data if data is not None else {}, path, set(allowed), set(),
                      "secret pattern file")
    patterns = data.get("patterns") or []
    if not isinstance(patterns, list):
        raise CascadeError("patterns must be a list", path, data.line_of("patterns"))
    return list(items_with_lines(patterns, data.line_of("patterns")))


def _pattern_of(entry: object, path: Path, line: int | None, *,
                bundled: bool) -> _Pattern:  # long: one check a field
    """A pattern of the documented format, checked (its regexes bounded when it is a
    repository's: _bounded)."""
    entry = check_keys(entry, path, set(_PATTERN_KEYS), {"kind", "regex"}, "secret pattern",
                       line)
    where = entry.line_of
    kind, source = entry["kind"], entry["regex"]
    if not isinstance(kind, str) or not _KIND.fullmatch(kind):
        raise CascadeError(f"kind must be lower-case letters, digits and -: {kind!r}", path,
                           where("kind"))
    if not isinstance(source, str):
        raise CascadeError("regex must be a string", path, where("regex"))
    keywords = _strings(entry.get("keywords"), "keywords", path, where("keywords"))
    shape = _shape(source) if bundled and not keywords else None
    if shape is not None and shape.first:  # the alternation compiles it
        regex, groups = None, shape.groups
    else:
        regex = _compiled(source, path, where("regex"), bundled)
        groups = regex.groups
    secret = entry.get("secret", 0)
    if not isinstance(secret, int) or isinstance(secret, bool) or not 0 <= secret <= groups:
        raise CascadeError(f"secret must be the number of a group of the regex (0 to "
                           f"{groups})", path, where("secret"))
    holding = entry.get("holding")
    if holding is not None and holding not in _HOLDING:
        raise CascadeError(f"unknown holding {holding!r} (known: {', '.join(_HOLDING)})", path,
                           where("holding"))
    entropy = _number(entry.get("entropy"), "entropy must be a number (bits a character)", path,
                      where("entropy"))
    allow = _strings(entry.get("allow"), "allow", path, where("allow"))
    glued = entry.get("glued", False)
    if not isinstance(glued, bool):
        raise CascadeError("glued must be true or false", path, where("glued"))
    allows = (_Allow(tuple(_compiled(a, path, where("allow"), bundled) for a in allow)),) \
        if allow else ()
    return _Pattern(kind, regex, secret, tuple(k.lower() for k in keywords),
                    re.compile(_HOLDING[holding]) if holding else None, entropy, allows, glued,
                    bundled)


def _strings(value: object, what: str, path: Path, line: int | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise CascadeError(f"{what} must be a list of strings", path, line)
    return value


def _number(value: object, message: str, path: Path, line: int | None) -> float | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise CascadeError(message, path, line)
    return None if value is None else float(value)


def _compiled(source: str, path: Path, line: int | None, bundled: bool = False) -> Any:
    """``source`` compiled (bounded first when it is a repository's: _bounded), or a one-line
    error naming the file and line."""
    try:
        source = source if bundled else _bounded(source)
    except ValueError as exc:
        raise CascadeError(f"regex refused: {exc}", path, line) from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a FutureWarning about nested sets: Go's syntax
            return re.compile(source)
    except (re.error, OverflowError, RecursionError) as exc:
        raise CascadeError(f"regex does not compile: {exc}", path, line) from None


def _tokens(text: str, low: str, extra: tuple[_Pattern, ...], found: list,
            cut: list[tuple[int, int]]) -> None:
    """The tokens of ``text`` in ``found``; in ``cut``, where one may start that was cut short."""
    table = _bundled()
    for m in table.alternation.finditer(text):
        member = table.members.get(m.lastindex)
        if member is None:
            cut.append(m.span())
        else:
            _take(member[0], m, member[1], text, found)
    for pattern in table.passes + extra:
        if pattern.keywords and not any(k in low for k in pattern.keywords):
            continue
        for m in pattern.regex.finditer(text):
            _take(pattern, m, 0, text, found)


def _take(pattern: _Pattern, m: re.Match, offset: int, text: str, found: list) -> None:
    """The secret of ``pattern``'s match ``m`` (its groups numbered from ``offset``), unless a
    condition of the pattern, or of every pattern, says it is none."""
    if not pattern.glued and m.start() > 0 and text[m.start() - 1].isalnum():
        return  # the middle of a longer word
    group = offset + pattern.secret if pattern.secret > 0 else 0
    if pattern.secret < 0:  # gitleaks: the first group that matched something, or the match
        group = next((g for g in range(1, (m.re.groups or 0) + 1) if m.group(g)), 0)
    start, end = m.span(group)
    secret = text[start:end]
    if not secret or _documentation_token(secret):
        return  # AKIAIOSFODNN7EXAMPLE, ghp_xxxxxxxx...
    if pattern.holding is not None and not pattern.holding.search(secret):
        return  # words: sk-learn-compatible-pipeline, xoxo-hugs-and-kisses, sig=SomeWord
    if pattern.entropy is not None and _entropy(secret) <= pattern.entropy:
        return
    if pattern.allows and any(_allowed(a, secret, m.group(), text, start)
                              for a in pattern.allows):
        return
    if not pattern.bundled and _in_marker(text, start, end):
        return  # a repository's pattern that finds something in [REDACTED:...]
    found.append((start, end, 1 if pattern.bundled else 2, pattern.kind))


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in collections.Counter(s).values())


def _allowed(allow: _Allow, secret: str, match: str, text: str, at: int) -> bool:
    if allow.target == "line":
        start, end = _line_bounds(text, at)
        target = text[start:end] if start >= 0 else match
    else:
        target = match if allow.target == "match" else secret
    checks = []
    if allow.regexes:
        checks.append(any(r.search(target) for r in allow.regexes))
    if allow.stopwords:
        low = secret.lower()
        checks.append(any(w in low for w in allow.stopwords))
    return bool(checks) and (all(checks) if allow.every else any(checks))


def _in_marker(text: str, start: int, end: int) -> bool:
    """The span overlaps a [REDACTED:...] marker (one is at most 64 characters long)."""
    at = text.rfind("[REDACTED:", max(0, start - 64), end + len("[REDACTED:") - 1)
    return at >= 0 and text.find("]", at, at + 64) >= start


# ---- key blocks -------------------------------------------------------------------------------
_PEM_BEGIN = _Lazy(r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = _Lazy(r"-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
# Key material right after the BEGIN line: base64, or, on a line of its own, an armor header
# (RFC 1421 Proc-Type: and DEK-Info:, OpenPGP Version: and Comment:, SSH2 Comment:). Quotes,
# escaped newlines and comment or quote leaders may sit in between (a key inside JSON, YAML,
# a comment, a markdown quote).
_PEM_BODY = _Lazy(r"((?:\s|\\[nrt]|[\"'`#>*;|,])*)"
                  r"(?:[A-Za-z0-9+/=]{16}|([A-Z][A-Za-z0-9\-]{1,30}:[ \t]))")

# ---- passwords in URLs ------------------------------------------------------------------------
_URL_PASSWORD = _Lazy(r"://([^\s:/@\"'<>`]{0,256}):([^\s/\"'<>`]{1,256})@(?=[^\s/@])")
_ORACLE_THIN = _Lazy(r":thin:[^\s/@:\"'`]{1,64}/([^\s/@\"'`]{1,256})@")  # oracle:thin:u/p@

# ---- bearer / basic credentials (matched on the lower-cased text) ------------------------------
_BEARER = _Lazy(r"bearer[ \t]+([a-z0-9._~+/\-]{16,}=*)"
                r"|authorization[\"']?[ \t]*[:=][ \t]*[\"']?basic[ \t]+([a-z0-9+/]{8,}={0,2})")
_DIGIT = _Lazy(r"[0-9]")
_LETTER = _Lazy(r"[A-Za-z]")
# "auth" in a Docker config.json, "_auth" in an .npmrc: base64 of user:password
_B64_AUTH = _Lazy(r"(?:\"auth\"|_auth)[ \t]*[:=][ \t]*\"?"
                  r"([A-Za-z0-9+/]{12,}={0,2})(?![A-Za-z0-9+/=])")

# ---- keys and what follows them (matched on the lower-cased text) ------------------------------
# A secret word ("key" only after a qualifier: api_key, apiKey, API key), the rest of the key
# (group 1), then one of:
#   group 2, an operator: an optional closing quote (JSON, escaped JSON), ']' (env["X"] = ...)
#            or '**' (markdown bold), then = : := => == or '>' (an XML element);
#   group 3, the end of a markdown table cell: | DB password | s3cr3t! |
#   group 4, "to" or "as" (set DB_PASSWORD to ...: _set_to);
#   none, prose or a flag: blanks, optionally is/was and now/set to/..., or for/of/on, a few
#            words and is/was, then something holding a digit or a symbol (--password Hunter2024).
# The start of the key is found by looking left. The rest of the key is matched in a lookahead
# and consumed by a backreference -- an atomic group: "passpass..." is never backtracked into.
_PROSE_VALUE = r"(?=[`'\"]?[^\s`'\"]{0,128}[0-9!@#$%^&+=?~])"
_ASSIGN = _Lazy(r"(?:pass|pwd|secret|token|k(?<=[a-z0-9_.\- ]k)ey|cred)"
                r"(?=([a-z0-9_.\-]{0,24}))\1"
                r"(?:(?:\\?[\"'])?\]?\*{0,2}[ \t]*"
                r"(=>|:=|==|=|:|>(?=[^<>\n]{1,256}</))\*{0,2}[ \t]*"
                r"|[*`]{0,2}[ \t]*(\|)(?=[ \t]*[`'\"]?[^\s|`'\"]{0,128}[0-9!@#$%^&+=?~]"
                r"|[^\n]{0,512}\n[ \t]*\|?[ \t]*:?-)"
                r"|[ \t]+(?:(?:is|was)[ \t]+)?"
                r"(?:(?:now|still|currently|set[ \t]+to|changed[ \t]+to|reset[ \t]+to)[ \t]+)?"
                + _PROSE_VALUE +
                r"|[ \t]+(?:for|of|on)[ \t]+[^\n|]{1,40}?[ \t](?:is|was)[ \t]+"
                + _PROSE_VALUE +
                r"|[`'\"*]{0,2}[ \t]+(to|as)[ \t]+" + _PROSE_VALUE + ")")
# Before a key that "to" or "as" follows: a verb that gives it a value, then at most an
# article, "value of" and two words (set the staging DB_PASSWORD to ...); or "and" or a comma
# after such a verb earlier on the line (set DB_USER to app and DB_PASSWORD to ...).
_SET_VERB = (r"(?:^|[^a-z0-9_])(?:set|sets|setting|change|changed|changing|update|updated|"
             r"reset|rotate|rotated|export|exported|assign|assigned|configure|configured)[ \t]+")
_SET_BEFORE = _Lazy(_SET_VERB + r"(?:(?:the|your|our|its|this|that|a|an)[ \t]+)?"
                    r"(?:(?:value|contents?)[ \t]+of[ \t]+)?(?:[a-z0-9_.\-]+[ \t]+){0,2}"
                    r"[`'\"*]{0,2}$")
_AND_BEFORE = _Lazy(r"(?:,|[ \t]and)[ \t]+[`'\"*]{0,2}$")
_SET_ANYWHERE = _Lazy(_SET_VERB)
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_WORDS = _Lazy(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
_SECRET_SUFFIXES = ("password", "passwd", "passphrase", "passcode", "secret", "token", "apikey",
                    "secretkey", "privatekey", "accesskey")
_SECRET_WORDS = frozenset({"pass", "pwd", "pw", "credential", "credentials", "creds",
                           "requirepass", "storepass", "keypass", "srcstorepass", "deststorepass",
                           "srckeypass", "destkeypass", "keystorepass", "truststorepass"})
_KEY_QUALIFIERS = frozenset({"api", "access", "secret", "private", "auth", "client", "app",
                             "encryption", "signing", "master", "account", "service", "storage",
                             "hmac", "jwt", "session", "license", "subscription", "consumer"})
# ... but these name tokens that are no credential: pagination, idempotency, locks, vocabularies.
_NOT_SECRET_TOKENS = frozenset({"next", "starting", "start", "page", "continuation", "lock",
                                "change", "idempotency", "request", "pagination", "sync", "resume",
                                "cursor", "max", "min", "num", "input", "output", "prompt",
                                "completion", "pad", "eos", "bos", "unk", "sep", "cls", "mask",
                                "special"})
_NOISE_WORDS = frozenset({"base", "value", "val", "plain", "plaintext", "raw", "b64", "base64",
                          "hex", "str", "string", "data"})
# A key named by one plain word in prose: "the password is ...", "Authorization: Token ...".
_PROSE_WORDS = frozenset({"password", "passwd", "passphrase", "passcode", "pwd", "secret", "token",
                          "credentials", "creds", "requirepass"})
_QUOTED = {"\\": _Lazy(r'\\"([^"\\\n]{0,4096})\\"'), "'": _Lazy(r"'([^'\n]{0,4096})'"),
           '"': _Lazy(r'"((?:[^"\\\n]|\\.){0,4096})"'), "`": _Lazy(r"`([^`\n]{0,4096})`")}
_VALUE_BARE = _Lazy(r"[^\s\"'`,;(){}\[\]<>&|]{1,4096}")
_BARE_END = _Lazy(r"[ \t]*(?:$|[\r\n,;)}\]&#`'\"|]|//)")
_PROSE_BARE = _Lazy(r"[^\s\"'`,;(){}\[\]<>|]{1,256}")
_XML_VALUE = _Lazy(r"([^<>\n]{1,4096})</")
_DOTTED_NAME = _Lazy(r"[A-Za-z_$][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_WORDLIKE = _Lazy(r"[A-Za-z][A-Za-z._\-]*")
_AWS_SECRET = _Lazy(r"[A-Za-z0-9/+]{40}")
_SPACE = _Lazy(r"\s")
_RANDOM_LOOKING = _Lazy(r"[0-9!@#$%^*+=/?~|]|[a-z][A-Z]")
# Outside an assignment (prose, a table cell, a flag) a value must hold a letter and a digit or
# one of !@#$%^&+=?~ (not *: markdown emphasis), and be none of these:
_NOT_A_SECRET = _Lazy(
    r"""v?\d+(?:\.\d+)+(?:[-+.][A-Za-z0-9.]*)?       # a version: 1.15, v2.14.3, 1.0.2-rc1
      | \d[\d.,]*[-_]?[A-Za-z]{1,12}(?:[-_][A-Za-z]+)*  # a quantity: 15min, 256-bit, 32-byte-long
      | (?:sha|md|aes|rsa|dsa|ecdsa|hs|rs|es|ps|ed|x|base|utf|oauth|http|ipv|tls|ssl|argon
         |pbkdf|crc|blake|chacha|poly|curve|secp)[-_]?\d+[A-Za-z]{0,3}\d?(?:[-_.][A-Za-z0-9]+)*
                                  # a technology: sha256, argon2id, aes-256-gcm, base64-encoded
      | \#[0-9A-Fa-f]{3,8}                          # a colour, an issue
      | [A-Za-z][A-Za-z0-9+.\-]*://.*               # a URL (its password is found on its own)
      | (?:sha\d*|md5|env|file|fd|pass|stdin):.*    # a digest, an openssl or gpg password source
      | [./~].*                                     # a path
      | [^@\s]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}       # an e-mail address
    """, re.VERBOSE | re.IGNORECASE)
_HAS_LETTER_AND_MORE = _Lazy(r"(?=.*[A-Za-z]).*[0-9!@#$%^&+=?~]")

# ---- command lines (matched on the lower-cased text) --------------------------------------------
_COMMAND = _Lazy(
    r"-(?:(pass(?:in|out|word)?[ \t]+['\"]?pass:)"   # 1: openssl -passin pass:PASSWORD
    r"|(u|-user)(?:[ \t]+|=)(?=['\"]?[^\s:'\"]{1,256}:)"  # 2: curl -u / --user user:PASSWORD
    r"|p(?=[^\s\-=])"                                # (none): mysql -pPASSWORD
    r"|([pa])[ \t]+(?=[^\s\-])"                      # 3: docker login -p, sshpass -p, redis-cli -a
    r"|([a-z]{0,4}b[a-z]{0,4})[ \t]+(?=[^\s\-]))"    # 4: htpasswd -b FILE USER PASSWORD
)
_ARG_BARE = _Lazy(r"[^\s;|&`'\"]{1,1024}")
_ARG_SQ = _Lazy(r"'([^'\n]{0,1024})'")
_ARG_DQ = _Lazy(r'"((?:[^"\\\n]|\\.){0,1024})"')
_COMMAND_BEFORE = frozenset(" \t\n'\"(=;|&`")

# ---- placeholders ------------------------------------------------------------------------------
PLACEHOLDER_WORDS = frozenset({
    "changeme", "changeit", "change_me", "change-me", "password", "passwd", "secret", "token",
    "apikey", "api_key", "example", "placeholder", "redacted", "dummy", "sample", "testing",
    "default", "required", "optional", "string", "unset", "notset", "not-set", "not_set",
    "undefined", "hidden", "masked", "secret-value", "secret_value",
    # shorter than 6 (left alone anyway) but listed so is_placeholder() says so on its own:
    "pass", "test", "empty", "none", "null", "nil", "true", "false", "yes", "no", "on", "off",
    "todo", "tbd", "fixme", "n/a",
})
_PLACEHOLDER_INFIXES = ("example", "placeholder", "changeme", "change_me", "change-me", "dummy",
                        "redacted", "${", "{{")
_PLACEHOLDER = _Lazy(
    r"""\$[A-Za-z_][A-Za-z0-9_]*            # $VAR
      | \$\(.*\)                            # $(command)
      | <[^<>]+>                            # <your-key>
      | %[A-Za-z_][A-Za-z0-9_]*%            # %VAR%
      | %\([A-Za-z_][A-Za-z0-9_]*\)[sdr]    # %(name)s
      | \{[A-Za-z_][A-Za-z0-9_.]*\}         # {name}
      | (?:your|my|insert|enter|replace|put)[-_ .].*
      | .*[-_]here""",
    re.IGNORECASE | re.VERBOSE | re.DOTALL)
_MASK_CHARS = frozenset("*xX.#-_?•")
# A documentation placeholder in a token's shape: holding one of the infixes above
# (AKIAIOSFODNN7EXAMPLE) or a mask character 8 times in a row (ghp_xxxxxxxx...).
_DOCUMENTATION_PARTS = _PLACEHOLDER_INFIXES + tuple(c * 8 for c in "0x*#?_.-")


def _documentation_token(token: str) -> bool:
    low = token.lower()
    return any(part in low for part in _DOCUMENTATION_PARTS)


def is_placeholder(value: str) -> bool:
    """True for a value that stands for a secret without being one (see the module doc)."""
    v = value.strip()
    if not v or v.startswith("[REDACTED"):
        return True
    low = v.lower()
    if low in PLACEHOLDER_WORDS or len(set(low)) == 1 or set(v) <= _MASK_CHARS:
        return True
    if any(part in low for part in _PLACEHOLDER_INFIXES):
        return True
    return _PLACEHOLDER.fullmatch(v) is not None


def _secret_named(key_words: tuple[str, ...]) -> bool:
    words = list(key_words)
    while words and words[-1] in _NOISE_WORDS:
        words.pop()
    if len(words) >= 3 and words[-3:] == ["private", "key", "id"]:
        return True  # a service-account key's id, next to the key itself
    if not words:
        return False
    last = words[-1]
    if last == "token" and len(words) > 1 and words[-2] in _NOT_SECRET_TOKENS:
        return False  # NextToken, --idempotency-token, eos_token
    if last in _SECRET_WORDS or last.endswith(_SECRET_SUFFIXES):
        return True
    return last == "key" and len(words) > 1 and words[-2] in _KEY_QUALIFIERS


def _value_at(text: str, pos: int) -> tuple[int, int, str, int]:
    """The literal value starting at ``pos``: (start, end, how, scanned_to), where ``how`` is
    "quoted", "line" (unquoted, ending the line or followed by , ; ) } ] & | a quote or a
    comment), "word" (unquoted, followed by more words) or "" (none). ``scanned_to`` is where
    an unquoted value stopped: a value starting before it would stop there too."""
    quoted = _QUOTED.get(text[pos:pos + 1])
    if quoted is not None:
        m = quoted.match(text, pos)
        if m:
            return m.start(1), m.end(1), "quoted", pos
    m = _VALUE_BARE.match(text, pos)
    if not m:
        return pos, pos, "", pos
    end = pos + len(m.group().rstrip(".?"))  # no sentence punctuation after a prose value
    if end == pos:
        return pos, pos, "", m.end()
    if _BARE_END.match(text, m.end()):
        return pos, end, "line", pos
    if m.end() < len(text) and text[m.end()] in " \t":
        return pos, end, "word", pos
    return pos, pos, "", m.end()


def _loose_value(text: str, pos: int) -> tuple[int, int]:
    """A value in prose or a table cell: quoted, or one run of non-blank characters without
    brackets, stripped of sentence punctuation."""
    quoted = _QUOTED.get(text[pos:pos + 1])
    if quoted is not None and text[pos] != "\\":
        m = quoted.match(text, pos)
        if m:
            return m.start(1), m.end(1)
    m = _PROSE_BARE.match(text, pos)
    if not m:
        return pos, pos
    return pos, pos + len(m.group().rstrip(".,:?"))


def _looks_secret(v: str) -> bool:
    """For a value found by its context outside an assignment (prose, a table cell, a flag)."""
    return (6 <= len(v) <= 256 and _HAS_LETTER_AND_MORE.match(v) is not None
            and not _SPACE.search(v) and not is_placeholder(v)
            and _NOT_A_SECRET.fullmatch(v) is None)


@functools.lru_cache(maxsize=1024)
def _key_kind(key: str) -> tuple[bool, bool]:
    """(secret-named, names an AWS secret access key)."""
    words = tuple(w.lower() for w in _WORDS.findall(key))
    return _secret_named(words), "secretaccesskey" in "".join(words)


def _word_before(text: str, pos: int) -> str:
    """The word ending one blank before ``pos`` ("API" in "API key")."""
    if pos < 2 or text[pos - 1] != " ":
        return ""
    i = pos - 1
    while i > 0 and text[i - 1].isalpha() and pos - i < 24:
        i -= 1
    return text[i:pos - 1]


def _assignments(text: str, low: str, found: list) -> None:
    done = 0  # nothing that starts before this can be a new assignment
    headers: set[int] = set()  # table header rows whose columns were read
    for m in _ASSIGN.finditer(low):
        start = m.start()
        if start < done:
            continue
        op, pipe = m.group(2, 3)
        if pipe is not None:
            _table_cell(text, m, found, headers)
            continue
        key_start = start
        while key_start > 0 and text[key_start - 1] in _KEY_CHARS and start - key_start < 64:
            key_start -= 1
        if key_start > 0 and text[key_start - 1] in _KEY_CHARS:
            continue  # an identifier longer than any key
        if op is None:
            _prose(text, m, key_start, found)
            continue
        if (op == ":" and key_start > 0 and text[key_start - 1] == ":"
                and m.start(2) == m.end(1) and m.end() == m.end(2)):
            continue  # a segment of a name: arn:aws:secretsmanager:...:secret:MyTestSecret
        if key_start >= 10 and text.startswith("[REDACTED:", key_start - 10):
            continue  # a marker is no key: [REDACTED:private-key] = ...
        key_end = m.start(2)
        while key_end > start and text[key_end - 1] in " \t\"'\\]*":
            key_end -= 1
        key = text[key_start:key_end]
        spaced = False
        if key_start == start and key.lower() == "key":
            qualifier = _word_before(text, start)  # "API key: ..."
            if not qualifier:
                continue
            key, spaced = f"{qualifier} {key}", True
        secret_named, aws = _key_kind(key)
        if not secret_named:
            continue
        if op == ">":
            if key_start > 0 and text[key_start - 1] == "<":
                _xml_element(text, m.end(), found)
            continue
        if op == ":" and not spaced and text[m.end():m.end() + 1] in "\r\n|>#!":
            empty = _YAML_EMPTY.match(text, m.end())
            column = _yaml_key_column(text, key_start) if empty else -1
            if column >= 0:
                if empty.group(1):
                    continue  # a tagged block: db_password: !vault | (encrypted)
                _yaml_next_line(text, column, empty, aws, found)
        vstart, vend, how, done = _value_at(text, m.end())
        kind = _assigned(text[vstart:vend], how, op, spaced, aws) if how else None
        if kind:
            found.append((vstart, vend, *kind))


def _assigned(v: str, how: str, op: str, spaced: bool, aws: bool) -> tuple[int, str] | None:
    """What a value ``v`` assigned with ``op`` to a secret-named key is (``how`` as _value_at
    says it): (priority, label) of a finding, or None when the value rules leave it alone."""
    if aws and _AWS_SECRET.fullmatch(v) and not is_placeholder(v):
        return 1, "aws-secret-key"
    if len(v) < 6:
        return None
    if how == "quoted":
        if _SPACE.search(v):
            return None  # prose in a string: "password": "at least 12 characters"
    else:
        colon = op == ":"
        if how == "word" and (colon or not _RANDOM_LOOKING.search(v)):
            return None  # prose: "password: required field", "token = opaque string"
        if colon and _WORDLIKE.fullmatch(v):
            return None  # a word: "token: opaque"
        if _DOTTED_NAME.fullmatch(v):
            return None  # a reference: settings.API_KEY
    if is_placeholder(v) or (spaced and not _looks_secret(v)):
        return None
    return 4, "secret-assignment"


# A YAML key whose value is not on its line: nothing after the colon but a block scalar's
# indicator (| > |- >+ |2) and a comment. Group 1, a tag before the indicator (!vault |).
_YAML_EMPTY = _Lazy(r"(![!A-Za-z]*[ \t]+(?=[|>]))?([|>][1-9+\-]{0,2})?[ \t]*"
                    r"(?:(?<=[ \t])#[^\n]*)?\r?(?=\n|$)")
_YAML_KEY_LEAD = _Lazy(r"[ \t]*(?:-[ \t]+)?[\"']?")
# Below a key, what is no value of its own: a list item, a key (a mapping), a comment, an
# anchor, an alias, a tag, a flow collection, a block indicator.
_YAML_NOT_SCALAR = _Lazy(r"[-?](?:[ \t\r]|$)|[#&*!\[{|>%@]|[^\n]*:(?:[ \t\r]|$)")
_INDENT = _Lazy(r"[ \t]*")
_YAML_BLOCK_LINES = 64  # a block scalar is looked at this many lines down, no further


def _yaml_key_column(text: str, key_start: int) -> int:
    """The column of the YAML key starting at ``key_start`` (of its quote, when quoted), or -1
    when it does not start its line (after blanks and a list's "- "): "**Password:**", "The
    password:" are no YAML keys."""
    line_start = text.rfind("\n", max(0, key_start - 256), key_start) + 1
    if line_start == 0 and key_start > 256:
        return -1
    if not _YAML_KEY_LEAD.fullmatch(text, line_start, key_start):
        return -1
    quoted = key_start > line_start and text[key_start - 1] in "\"'"
    return key_start - line_start - quoted


def _yaml_next_line(text: str, column: int, empty: re.Match, aws: bool, found: list) -> None:
    """A secret-named YAML key with its value below it: the lines of a block scalar
    (password: |), or a plain or quoted value on the next line, indented deeper than the key.
    Each line's value is held to the rules of a value on the key's line."""
    block = empty.group(2) is not None
    pos = empty.end()
    for _ in range(_YAML_BLOCK_LINES):
        if pos >= len(text):
            return
        start, end = _line_bounds(text, pos + 1)
        if start < 0:
            return
        pos = end
        indent = _INDENT.match(text, start, end).end()
        if indent >= end or text[indent:end] == "\r":
            continue  # a blank line
        if indent - start <= column:
            return  # the next key, or the end of the block
        if not block and _YAML_NOT_SCALAR.match(text, indent, end):
            return  # a mapping, a list, a comment, an anchor below the key: no value of its own
        vstart, vend, how, _ = _value_at(text, indent)
        kind = _assigned(text[vstart:vend], how, ":", False, aws) if how else None
        if kind:
            found.append((vstart, vend, *kind))
        if not block:
            return


def _xml_element(text: str, pos: int, found: list) -> None:
    m = _XML_VALUE.match(text, pos)
    if m:
        v = m.group(1).strip()
        if len(v) >= 6 and not _SPACE.search(v) and not is_placeholder(v):
            vstart = m.start(1) + m.group(1).index(v)
            found.append((vstart, vstart + len(v), 4, "secret-assignment"))


def _prose(text: str, m: re.Match, key_start: int, found: list) -> None:
    """``password is Tr0ub4dor&3``, ``log in with password hunter2024``, ``--password X``,
    ``set TWILIO_AUTH_TOKEN to 5f2c...``."""
    key = text[key_start:m.end(1)]
    if m.group(4) is not None:  # <key> to|as <value>: after a verb that sets it
        vstart, vend = _loose_value(text, m.end())
        if (vend > vstart and _looks_secret(text[vstart:vend])
                and _set_to(text, key, key_start)):
            found.append((vstart, vend, 5, "secret-in-prose"))
        return
    if key.startswith("-"):  # --password X, -storepass X
        kind, named = "password-in-command", _key_kind(key)[0]
    elif key.lower() == "key":
        kind, named = "secret-in-prose", _word_before(text, key_start).lower() in _KEY_QUALIFIERS
    else:  # "pass 2fa" is English; an identifier and a blank is not an assignment
        kind, named = "secret-in-prose", key.lower() in _PROSE_WORDS
    if not named:
        return
    vstart, vend = _loose_value(text, m.end())
    if vend > vstart and _looks_secret(text[vstart:vend]):
        found.append((vstart, vend, 5, kind))


def _set_to(text: str, key: str, key_start: int) -> bool:
    """``key`` (at ``key_start``), which "to" or "as" follows, is secret-named and given a value
    by a verb before it on its line (docs/secrets.md, "Setting a variable in prose"). Not an
    option (--token to), nor "the token to expire": the value rule sees to that."""
    if key.startswith("-"):
        return False
    if key.lower() == "key":
        qualifier = _word_before(text, key_start)
        if qualifier.lower() not in _KEY_QUALIFIERS:
            return False
        key_start -= len(qualifier) + 1
    elif not _key_kind(key)[0]:
        return False
    line_start = text.rfind("\n", max(0, key_start - 200), key_start) + 1
    before = text[max(line_start, key_start - 200):key_start].lower()
    if _SET_BEFORE.search(before) is not None:
        return True
    return _AND_BEFORE.search(before) is not None and _SET_ANYWHERE.search(before) is not None


# ---- markdown tables ----------------------------------------------------------------------------
_LINE_LIMIT = 4096  # a table row or a command line is looked at only this far back and forward


def _line_bounds(text: str, pos: int) -> tuple[int, int]:
    """The line holding ``pos``, or (-1, -1) when it reaches further than _LINE_LIMIT either
    way: every scan stays bounded, whatever the text."""
    start = text.rfind("\n", max(0, pos - _LINE_LIMIT), pos) + 1
    if start == 0 and pos > _LINE_LIMIT:
        return -1, -1
    end = text.find("\n", pos, pos + _LINE_LIMIT)
    if end < 0:
        if len(text) - pos > _LINE_LIMIT:
            return -1, -1
        end = len(text)
    return start, end


def _pipes(text: str, start: int, end: int) -> list[int]:
    """Offsets of the cell borders of a table row (an escaped \\| is not one)."""
    out = []
    i = text.find("|", start, end)
    while i >= 0:
        if i == 0 or text[i - 1] != "\\":
            out.append(i)
        i = text.find("|", i + 1, end)
    return out


def _is_row(text: str, start: int, end: int) -> bool:
    return start >= 0 and text[start:end].lstrip(" \t").startswith("|")


def _cell_secret(text: str, start: int, end: int, found: list) -> None:
    while start < end and text[start] in " \t":
        start += 1
    while end > start and text[end - 1] in " \t\r":
        end -= 1
    if end - start >= 2 and text[start] == text[end - 1] and text[start] in "`'\"":
        start, end = start + 1, end - 1
    v = text[start:end]
    if _PROSE_BARE.fullmatch(v) and _looks_secret(v):  # not `varchar(64)`, not prose
        found.append((start, end, 4, "secret-in-table"))


def _label_named(text: str, start: int, end: int) -> bool:
    label = text[start:end].strip(" \t*`")
    return len(label) <= 60 and _key_kind(label)[0]


def _table_cell(text: str, m: re.Match, found: list, headers: set[int]) -> None:
    """A secret-named cell: the value is the next cell (| DB password | s3cr3t! |) or, in a
    header row, the cells under it (| User | Password | over | app | s3cr3t! |)."""
    line_start, line_end = _line_bounds(text, m.start())
    if not _is_row(text, line_start, line_end):
        return
    pipe = m.start(3)
    left = text.rfind("|", line_start, m.start())
    if left < 0 or not _label_named(text, left + 1, pipe):
        return
    right = text.find("|", pipe + 1, line_end)
    _cell_secret(text, pipe + 1, line_end if right < 0 else right, found)
    if line_start in headers or line_end + 1 >= len(text):
        return
    headers.add(line_start)
    sep_start, sep_end = _line_bounds(text, line_end + 1)
    sep = text[sep_start:sep_end].strip() if sep_start >= 0 else ""
    if not sep or "-" not in sep or "|" not in sep or set(sep) - set("|:- \t\r"):
        return  # not a header row: no |---|---| under it
    pipes = _pipes(text, line_start, line_end)
    columns = [i for i in range(len(pipes) - 1) if _label_named(text, pipes[i] + 1, pipes[i + 1])]
    row_start = sep_end + 1
    while row_start < len(text):
        row_start, row_end = _line_bounds(text, row_start)
        if not _is_row(text, row_start, row_end):
            return
        headers.add(row_start)  # a row of this table, not the header of another
        pipes = _pipes(text, row_start, row_end)
        ends = pipes[1:] + [row_end]  # a last cell without its closing | ends with its row
        for column in columns:
            if column < len(pipes):
                _cell_secret(text, pipes[column] + 1, ends[column], found)
        row_start = row_end + 1


# ---- command lines ------------------------------------------------------------------------------

def _command_start(text: str, pos: int) -> int:
    """The start of the shell command holding ``pos``: its line, and up to 8 lines before it
    that end with a \\ continuation."""
    start = text.rfind("\n", 0, pos) + 1
    for _ in range(8):
        if start < 2 or text[start - 2] != "\\":
            break
        start = text.rfind("\n", 0, start - 2) + 1
    return start


def _arg_at(text: str, pos: int) -> tuple[int, int]:
    """The shell word at ``pos`` (inside its quotes when quoted)."""
    q = text[pos:pos + 1]
    m = (_ARG_SQ if q == "'" else _ARG_DQ if q == '"' else _ARG_BARE).match(text, pos)
    return m.span(1 if q in ("'", '"') else 0) if m else (pos, pos)


def _command_value(text: str, start: int, end: int, found: list) -> None:
    v = text[start:end]
    if len(v) >= 4 and v[0] not in "$%<{" and not is_placeholder(v):
        found.append((start, end, 3, "password-in-command"))


# What a flag's command line holds before the flag: command names, the commands sshpass runs,
# and the separators that start another command.
_COMMAND_WORDS = _Lazy(r"mysql|mariadb|sshpass|redis-cli|htpasswd|curl|wget|login"
                       r"| ssh | scp | rsync | sftp |[;&|]")


def _commands(text: str, low: str, found: list) -> None:
    # The last place of each of _COMMAND_WORDS before a flag on its command line, kept up to
    # date incrementally: each character is searched once, whatever the number of flags.
    line_start, searched = -1, 0
    last: dict[str, int] = {}
    covered = (0, 0)  # the last password found here
    for m in _COMMAND.finditer(low):
        pos = m.start()
        if covered[0] <= pos < covered[1] or (pos > 0 and low[pos - 1] not in _COMMAND_BEFORE):
            continue  # inside the password just found; part of a word or of a --long-option
        if line_start < 0 or low.rfind("\n", searched, pos) >= 0:
            line_start = searched = _command_start(low, pos)
            last = {}
        for w in _COMMAND_WORDS.finditer(low, max(line_start, searched - 9), pos):
            last[w.group()] = w.start()
        searched = pos
        cut = max(last.get(";", -1), last.get("&", -1), last.get("|", -1))
        after = functools.partial(_runs, last, cut)  # after("curl"): curl runs this flag
        before = len(found)
        if m.group(1) is not None:  # openssl ... -passin pass:PASSWORD
            _command_value(text, *_arg_at(text, m.end()), found)
        elif m.group(2) is not None:  # curl -u user:PASSWORD
            astart, aend = _arg_at(text, m.end())
            colon = text.find(":", astart, aend)
            if colon < 0 or text.startswith("[REDACTED", astart):
                continue
            if after("curl", "wget"):
                _command_value(text, colon + 1, aend, found)
            elif _looks_secret(text[colon + 1:aend]):  # elsewhere as in prose: not -u 1000:1000
                found.append((colon + 1, aend, 3, "password-in-command"))
        elif m.group(3) is not None:  # -p PASSWORD, -a PASSWORD
            flag = text[pos + 1]
            sshpass = last.get("sshpass", -1)
            if (flag == "p" and (after("login") or sshpass > cut and all(
                    last.get(w, -1) < sshpass for w in (" ssh ", " scp ", " rsync ", " sftp ")))
                    or flag == "a" and after("redis-cli")):
                _command_value(text, *_arg_at(text, m.end()), found)
        elif m.group(4) is not None:  # htpasswd -b[c] FILE USER PASSWORD, -nb USER PASSWORD
            flags = text[pos + 1:pos + 1 + len(m.group(4))]
            if "b" not in flags or not after("htpasswd"):
                continue
            _htpasswd(text, m.end(), 2 if "n" in flags else 3, found)
        elif text[pos + 1] == "p" and after("mysql", "mariadb"):  # -pPASSWORD, never -P (port)
            _command_value(text, *_arg_at(text, pos + 2), found)
        if len(found) > before:
            covered = found[-1][:2]


def _runs(last: dict[str, int], cut: int, *names: str) -> bool:
    """One of the commands ``names`` stands after the last separator before the flag."""
    return any(last.get(n, -1) > cut for n in names)


def _htpasswd(text: str, at: int, need: int, found: list) -> None:
    """The ``need``-th argument after ``at`` that is not a flag (at most 16 looked at)."""
    line_end = _line_bounds(text, at)[1]
    args = 0
    for _ in range(16):
        if at >= line_end:
            return
        vstart, vend = _arg_at(text, at)
        if vend <= vstart and text[at:at + 2] not in ("''", '""'):
            return
        if not text.startswith("-", vstart):
            args += 1
            if args == need:
                _command_value(text, vstart, vend, found)
                return
        at = vend + (1 if text[vend:vend + 1] in "'\"" else 0)
        while at < line_end and text[at] in " \t":
            at += 1


def _private_keys(text: str, found: list) -> None:
    pos = 0
    while (m := _PEM_BEGIN.search(text, pos)) is not None:
        body = _PEM_BODY.match(text, m.end())
        if not body or (body.group(2) and "\n" not in body.group(1)
                        and "\\n" not in body.group(1)):
            pos = m.end()  # the header named in prose, no key material after it
            continue
        end = _PEM_END.search(text, m.end())
        pos = len(text) if end is None else end.end()  # no END line: to the end of the text
        found.append((m.start(), pos, 0, "private-key"))


def _url_passwords(text: str, found: list) -> None:
    for m in _URL_PASSWORD.finditer(text):
        if m.start() == 0 or not text[m.start() - 1].isalnum():
            continue  # no scheme
        if m.group(1).startswith("[REDACTED"):
            continue  # the user was a token, already replaced: "[REDACTED:github-token]@host"
        if not is_placeholder(m.group(2)):
            found.append((m.start(2), m.end(2), 3, "password-in-url"))
    for m in _ORACLE_THIN.finditer(text) if ":thin:" in text else ():
        if not is_placeholder(m.group(1)):
            found.append((m.start(1), m.end(1), 3, "password-in-url"))


def _bearers(text: str, low: str, found: list) -> None:
    for m in _BEARER.finditer(low):
        if m.start() > 0 and low[m.start() - 1].isalpha():
            continue
        if m.group(1) is not None:  # Bearer <token>: must look random, not a word
            v = text[m.start(1):m.end(1)]
            if _DIGIT.search(v) and _LETTER.search(v) and not is_placeholder(v):
                found.append((m.start(1), m.end(1), 2, "bearer-token"))
        elif not is_placeholder(text[m.start(2):m.end(2)]):
            found.append((m.start(2), m.end(2), 2, "basic-auth"))


def _basic_auth_fields(text: str, found: list) -> None:
    if '"auth"' not in text and "_auth" not in text:
        return
    for m in _B64_AUTH.finditer(text):
        if m.start() > 0 and text[m.start() - 1].isalnum():
            continue
        v = m.group(1)
        try:
            decoded = base64.b64decode(v + "=" * (-len(v) % 4), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
        if ":" in decoded and decoded.isprintable():
            found.append((m.start(1), m.end(1), 2, "basic-auth"))


def _scan(text: str, extra: tuple[_Pattern, ...]) -> list[tuple[int, int, str]]:
    """Every secret in ``text`` (``extra``: the repository's patterns): (start, end, kind), in
    order, none overlapping."""
    found: list[tuple[int, int, int, str]] = []  # (start, end, priority, kind)
    cut: list[tuple[int, int]] = []  # where a token cut short may start: _cut_short
    low = text.lower()
    if len(low) != len(text):  # lower() moved offsets (rare Unicode): lower ASCII only
        low = text.translate(_ASCII_LOWER)
    _private_keys(text, found)
    _tokens(text, low, extra, found, cut)
    _url_passwords(text, found)
    _basic_auth_fields(text, found)
    _assignments(text, low, found)
    _bearers(text, low, found)
    _commands(text, low, found)
    found.sort(key=lambda f: (f[0], f[2], f[0] - f[1]))
    spans: list[tuple[int, int, str]] = []
    pos = 0
    for start, end, _, kind in found:
        if start >= pos and end > start:  # else it overlaps a secret already taken
            spans.append((start, end, kind))
            pos = end
    spans = _wrapped(text, spans) if spans else spans
    return _cut_short(text, spans, cut) if cut else spans


# ---- secrets hard-wrapped at a column, or split across the cells of a table row ---------------
_WRAP_WIDTH = 60  # a line shorter than this that ends in a secret was not wrapped
# Repeated on each line of a quote or a comment, after a list item's marker on the first line
# (- > ..., 1. > ...): > (any depth) # // ; --
_LINE_MARK = _Lazy(r"[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?(>[ \t>]*|#+|//+|;+|--)?")
_QUOTES = _Lazy(r"[> \t]*")
_LINE_ENDS = ("\n", "\r\n")
_BREAK = _Lazy(r"<br[ \t]*/?>[ \t]*", re.IGNORECASE)  # a line break inside a table cell
_CELL_BORDER = _Lazy(r"[`'\"]?[ \t]*\|[ \t]*[`'\"]?")  # a quote around each cell's value too
_CELL_END = _Lazy(r"[`'\"]?[ \t]*(?:\||\r?\n|$)")
_REST = _Lazy(r"[A-Za-z0-9+/_\-.%~]{1,1024}={0,2}")
_REST_END = frozenset(" \t\r\n`'\")]}>,;.!?&|<")
_REST_RANDOM = _Lazy(r"[0-9+%=]|[a-z][A-Z]")  # not / or ~ alone: and/or, ~user
_LOWER = _Lazy(r"[a-z]")
_UPPER = _Lazy(r"[A-Z]")
_PIECES = 8  # a token is looked for over this many pieces at most


def _classes(s: str) -> tuple[bool, bool, bool]:
    return (_LOWER.search(s) is not None, _UPPER.search(s) is not None,
            _DIGIT.search(s) is not None)


def _wrapped(text: str, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``spans`` and the rest of each secret wrapped at a column or cut by a <br> (_rest_of),
    and the next while a rest fills its line too: each rest its own redaction, on its line."""
    rests: list[tuple[int, int, str]] = []
    for i, (start, end, kind) in enumerate(spans):
        if kind == "private-key":
            continue  # a key block is already every line of its block
        limit = spans[i + 1][0] if i + 1 < len(spans) else len(text)
        secret = text[start:end]
        while (rest := _rest_of(text, end, limit, secret)) is not None:
            rests.append((rest[0], rest[1], kind))
            end = rest[1]
    return sorted(spans + rests) if rests else spans


def _next_piece(text: str, end: int, cells: bool) -> tuple[int, str] | None:
    """Where the next piece of a token that ``end`` cuts starts, and how it was cut: "line"
    (``end`` ends a line of _WRAP_WIDTH or more; the piece starts after the next line's blanks
    and the quote or comment mark of this one -- a quote's at any depth), "break" (a <br>, <br/>
    or <br />), "cell" (with ``cells``: the border of two cells of a table row)."""
    if text.startswith(_LINE_ENDS, end):
        line_start = text.rfind("\n", max(0, end - _LINE_LIMIT), end) + 1
        if end - line_start < _WRAP_WIDTH:
            return None
        mark = (_LINE_MARK.match(text, line_start).group(1) or "").rstrip(" \t")
        eol = end + 1 if text.startswith("\r", end) else end
        pos = _INDENT.match(text, eol + 1).end()
        if mark.startswith(">"):
            pos = _QUOTES.match(text, pos).end()
        elif mark and text.startswith(mark, pos):
            pos = _INDENT.match(text, pos + len(mark)).end()
        return pos, "line"
    if text.startswith("<", end) and (br := _BREAK.match(text, end)) is not None:
        return br.end(), "break"
    if cells and text[end:end + 1] in " \t|`'\"" and (cell := _CELL_BORDER.match(text, end)):
        line_start, line_end = _line_bounds(text, end)
        if _is_row(text, line_start, line_end) and text.find("|", cell.end(), line_end) >= 0:
            return cell.end(), "cell"
    return None


def _rest_of(text: str, end: int, limit: int, secret: str,
             cells: bool = False) -> tuple[int, int] | None:
    """Where the rest of a secret that ``end`` cuts stands (_next_piece), if it does: the rules
    of docs/secrets.md, "A wrapped token" (with ``cells``, it fills its cell; ``limit``: where
    the next secret starts)."""
    piece = _next_piece(text, end, cells)
    if piece is None:
        return None
    pos, cut = piece
    m = _REST.match(text, pos)
    if not m or (m.end() < len(text) and text[m.end()] not in _REST_END):
        return None  # no run, or one going on into something else: "user1: bob", "DB_HOST=db"
    rest_end = m.end()
    while rest_end > pos and text[rest_end - 1] == "." and not _BREAK.match(text, m.end()):
        rest_end -= 1  # the end of a sentence (not a piece before a <br>: eyJ...In0.<br>)
    rest = text[pos:rest_end]
    if not rest or rest_end > limit or rest[0] in ".~":
        return None
    if cut == "cell" and ((not _CELL_END.match(text, rest_end)
                           and not _BREAK.match(text, rest_end))
                          or len(rest) < 8 or not _LETTER.search(rest)):
        return None  # more in the cell, or a date, a number, a word: not the rest of one
    lower, upper, digit = _classes(rest)
    classes = _classes(secret)
    if ((lower and not classes[0]) or (upper and not classes[1]) or (digit and not classes[2])
            or not _REST_RANDOM.search(rest) or (rest.isdigit() and len(rest) < 8)
            or (rest[0] in "/-" and not (lower and upper and digit))):
        return None  # a word, a number, a path, a flag: not the rest of this secret
    return pos, rest_end


def _head(source: str) -> str:
    """The start of a token's regex: its atoms up to the first that repeats or groups."""
    pos = 0
    while (atom := _HEAD_ATOM.match(source, pos)) is not None \
            and source[atom.end():atom.end() + 1] not in ("*", "+", "?", "{"):
        pos = atom.end()
    return source[:pos]


def _cut_short(text: str, spans: list[tuple[int, int, str]],
               cut: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """The tokens cut before the length their pattern needs (docs/secrets.md, "A token cut
    short"): a start in ``cut`` (ghp_, eyJ ...) and up to _PIECES pieces after it (_rest_of,
    across cells too) that, joined, make a token reaching past the first piece."""
    table = _bundled()
    out: list[tuple[int, int, str]] = []
    starts = [s for s, _, _ in spans]
    examined = 0  # the end of the last piece looked at: each piece is looked at once
    for start, end in cut:
        i = bisect.bisect_right(starts, start)
        taken = i and spans[i - 1][:2] == (start, end)  # found whole by its context: | Token |
        if (start > 0 and text[start - 1].isalnum()) or (i and spans[i - 1][1] > start
                                                        and not taken) or start < examined:
            continue  # part of a word, of a secret already found, or of the last one tried
        limit = spans[i][0] if i < len(spans) else len(text)
        pieces = [(start, end)]
        while len(pieces) < _PIECES:
            rest = _rest_of(text, pieces[-1][1], limit, text[start:end], cells=True)
            if rest is None:
                break
            pieces.append(rest)
        examined = pieces[-1][1]
        if len(pieces) > 1:
            out += _joined(text, pieces, table)[1 if taken else 0:]
    return sorted(spans + out) if out else spans


def _joined(text: str, pieces: list[tuple[int, int]], table: _Table) -> list:
    """The pieces of the token that ``pieces`` joined make (the part of each before where it
    ends), when a bundled pattern finds one reaching past the first piece; else none."""
    joined = "".join(text[s:e] for s, e in pieces)
    found: list[tuple[int, int, int, str]] = []
    m = table.alternation.match(joined)
    if m is not None:
        pattern, offset = table.members[m.lastindex]
        _take(pattern, m, offset, joined, found)
    for pattern in table.passes if not found else ():
        if pattern.keywords and (m := pattern.regex.match(joined)) is not None:
            _take(pattern, m, 0, joined, found)
    first = pieces[0][1] - pieces[0][0]
    if not found or found[0][1] <= first:
        return []  # no token, or one within the first piece: not cut
    start, end, _, kind = found[0]
    out, at = [], 0
    for s, e in pieces:
        lo, hi = max(start, at), min(end, at + e - s)
        if lo < hi:
            out.append((s + lo - at, s + hi - at, kind))
        at += e - s
    return out


def _replace(text: str, spans: list[tuple[int, int, str]]) -> tuple[str, list[int]]:
    """``text`` with each span replaced by its marker, and where each marker starts in it."""
    out: list[str] = []
    starts: list[int] = []
    pos = size = 0
    for start, end, kind in spans:
        out.append(text[pos:start])
        size += start - pos
        starts.append(size)
        out.append(marker(kind))
        size += len(out[-1])
        pos = end
    out.append(text[pos:])
    return "".join(out), starts


def _in_text(o: int, spans: list, starts: list[int], ends: bool) -> int:
    """Where offset ``o`` of the replaced text stands in the text; an offset inside a marker
    goes to the start of its secret, or to the end when ``ends``."""
    i = (bisect.bisect_left(starts, o) if ends else bisect.bisect_right(starts, o)) - 1
    if i < 0:
        return o
    start, end, kind = spans[i]
    marker_end = starts[i] + len(marker(kind))
    if o < marker_end:
        return end if ends else start
    return end + o - marker_end


def _within(span: tuple[int, int, str], wider: list[tuple[int, int, str]]) -> bool:
    """``span`` lies inside one of ``wider`` (in order, none overlapping)."""
    i = bisect.bisect_right(wider, span[0], key=lambda w: w[0]) - 1
    return i >= 0 and span[1] <= wider[i][1]


def redact(text: str) -> tuple[str, list[Redaction]]:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]``, and what was replaced.

    Idempotent: redacting redacted text changes nothing and reports nothing. When something was
    replaced, the result is scanned once more, and what the replacing uncovered is replaced too
    (a value that read as a placeholder only because of a token inside it).
    """
    if not text:
        return text, []
    extra = _team_patterns()
    spans = _scan(text, extra)
    if not spans:
        return text, []
    out, starts = _replace(text, spans)
    for _ in range(3):
        more = _scan(out, extra)
        if not more:
            break
        wider = [(_in_text(s, spans, starts, False), _in_text(e, spans, starts, True), k)
                 for s, e, k in more]  # in order, each holding whole secrets found before
        spans = sorted(wider + [span for span in spans if not _within(span, wider)])
        out, starts = _replace(text, spans)
    redactions: list[Redaction] = []
    line, pos = 1, 0
    for start, end, kind in spans:
        line += text.count("\n", pos, start)
        redactions.append(Redaction(kind, line))
        pos = start
    return out, redactions


# ---- a repository's patterns: .cascade/secrets.yml and the gitleaks rule files it includes -----
# Found in the repository around the current folder (the hook runs at its top), read the first
# time a prompt is redacted there, and again only when one of its files changed. A bad one is a
# one-line error naming its file and line (exit 2), before any prompt leaves.
_TEAM: dict[str, tuple[tuple, tuple[_Pattern, ...], list[str]]] = {}


def _repository_top() -> Path | None:
    """The nearest folder, from the current one up, that holds a .git (folder or file)."""
    try:
        here = Path(os.getcwd())
    except OSError:
        return None
    return next((f for f in (here, *here.parents) if os.path.lexists(f / ".git")), None)


def _signature(top: Path, files: list[str]) -> tuple:
    out = []
    for rel in files:
        try:
            st = os.lstat(top / rel)
            out.append((st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            out.append(None)
    return tuple(out)


def _team_patterns() -> tuple[_Pattern, ...]:
    """The patterns of the repository around the current folder (none outside one)."""
    top = _repository_top()
    return () if top is None else repository_patterns(top)


def repository_patterns(top: Path) -> tuple[_Pattern, ...]:
    """The patterns of the repository at ``top`` (read once, again when a file changed); a
    bad file raises CascadeError naming its file and line. The hook reads them before it
    writes anything."""
    cached = _TEAM.get(str(top))
    if cached is not None and cached[0] == _signature(top, cached[2]):
        return cached[1]
    patterns, files = _load_team(top) if os.path.lexists(top / TEAM_FILE) else ((), [TEAM_FILE])
    _TEAM[str(top)] = (_signature(top, files), patterns, files)
    return patterns


def _load_team(top: Path) -> tuple[tuple[_Pattern, ...], list[str]]:
    """The patterns of ``top``'s .cascade/secrets.yml and of the rule files it includes, and
    the files read (relative to ``top``)."""
    path = top / TEAM_FILE
    try:
        raw = read_inside(top, TEAM_FILE, "the secret pattern file")
    except OSError as exc:
        raise CascadeError(f"cannot read: {exc.strerror}", path) from None
    data = load_yaml(path, decode_utf8(raw, path))
    entries = _entries(data, path, frozenset({"patterns", "include"}))
    patterns = [_pattern_of(entry, path, line, bundled=False) for entry, line in entries]
    files = [TEAM_FILE]
    include = data.get("include") if isinstance(data, dict) else None
    line = data.line_of("include") if isinstance(data, LineDict) else None
    for rel in _strings(include, "include", path, line):
        try:
            raw = read_inside(top, rel, "the included rule file", where=path, line=line)
        except OSError as exc:
            raise CascadeError(f"include {rel!r}: {exc.strerror}", path, line) from None
        patterns += _gitleaks(decode_utf8(raw, top / rel), top / rel, (path, line))
        files.append(rel)
    return tuple(patterns), files


# ---- gitleaks rule files -------------------------------------------------------------------------
# What of the format is read and what is not (a rule without a regex is skipped), and the Go
# syntax translated (_Walk): docs/secrets.md, "The pattern table, and a repository's own patterns".
_RULE_HEADER = re.compile(r"\[\[[ \t]*rules[ \t]*\]\]")
_RULE_REGEX = re.compile(r"regex[ \t]*=")


def _gitleaks(text: str, path: Path, included: tuple[Path, int | None]) -> list[_Pattern]:
    if tomllib is None:
        raise CascadeError("reading a gitleaks rule file needs Python 3.11 or the tomli "
                           "package", *included)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = re.search(r"line (\d+)", str(exc))
        raise CascadeError(f"invalid TOML: {exc}", path, int(at.group(1)) if at else None) \
            from None
    rules = data.get("rules", [])
    if not isinstance(rules, list):
        raise CascadeError("rules must be an array of tables ([[rules]])", path)
    lines: list[list[int]] = []  # [header line, regex line] of each [[rules]]
    for number, line in enumerate(text.splitlines(), 1):
        if _RULE_HEADER.match(line.strip()):
            lines.append([number, number])
        elif lines and lines[-1][0] == lines[-1][1] and _RULE_REGEX.match(line.strip()):
            lines[-1][1] = number
    shared = _shared_allowlists(data, path)
    out = [_gitleaks_rule(rule, path, tuple(lines[i]) if i < len(lines) else (None, None), shared)
           for i, rule in enumerate(rules)]
    return [pattern for pattern in out if pattern is not None]


def _gitleaks_rule(rule: object, path: Path, lines: tuple, shared: list) -> _Pattern | None:
    header, regex_line = lines
    if not isinstance(rule, dict):
        raise CascadeError("a rule must be a table", path, header)
    rule_id = rule.get("id")
    if not isinstance(rule_id, str) or not rule_id.strip():
        raise CascadeError("a rule needs an id", path, header)
    source = rule.get("regex")
    if source is None:
        return None  # a file-name rule, or one that amends a gitleaks default: nothing to match
    if not isinstance(source, str) or not source:
        raise CascadeError(f"rule {rule_id!r}: regex must be a string", path, regex_line)
    regex = _compiled(source, path, regex_line)
    group = rule.get("secretGroup", 0)
    if not isinstance(group, int) or isinstance(group, bool) or not 0 <= group <= regex.groups:
        raise CascadeError(f"rule {rule_id!r}: secretGroup must be the number of a group of "
                           f"its regex (0 to {regex.groups})", path, header)
    entropy = _number(rule.get("entropy") or None, f"rule {rule_id!r}: entropy must be a number",
                      path, header)
    keywords = _strings(rule.get("keywords"), "keywords", path, header)
    own = _allow_tables(rule, "allowlist", path, header)
    allows = [a for a in (_allow_of(t, path, header) for t in own) if a is not None]
    allows += [a for a, targets in shared if targets is None or rule_id in targets]
    kind = re.sub(r"[^a-z0-9]+", "-", rule_id.lower()).strip("-") or "gitleaks-rule"
    return _Pattern(kind, regex, group or (-1 if regex.groups else 0),
                    tuple(k.lower() for k in keywords), None, entropy, tuple(allows), True, False)


def _allow_tables(data: dict, name: str, path: Path, line: int | None) -> list[dict]:
    """The allowlist tables of a rule or of the file: ``name`` (one table, gitleaks' older
    form) and ``name`` + s (an array of tables)."""
    one, many = data.get(name), data.get(name + "s")
    if many is not None and not isinstance(many, list):
        raise CascadeError(f"{name}s must be an array of tables", path, line)
    tables = ([] if one is None else [one]) + (many or [])
    for table in tables:
        if not isinstance(table, dict):
            raise CascadeError(f"an {name} must be a table", path, line)
    return tables


def _allow_of(table: dict, path: Path, line: int | None) -> _Allow | None:
    """An allowlist as far as it can apply to text (None when it cannot: paths or commits
    only, or "AND" with one of them)."""
    regexes = tuple(_compiled(r, path, line)
                    for r in _strings(table.get("regexes"), "regexes", path, line))
    stopwords = tuple(w.lower() for w in _strings(table.get("stopwords"), "stopwords", path,
                                                  line))
    target = table.get("regexTarget", "secret")
    if target not in ("secret", "match", "line"):
        raise CascadeError(f"regexTarget must be secret, match or line: {target!r}", path, line)
    condition = str(table.get("condition", "OR")).upper()
    if condition not in ("OR", "AND"):
        raise CascadeError(f"condition must be OR or AND: {condition!r}", path, line)
    every = condition == "AND"
    if (every and (table.get("paths") or table.get("commits"))) or not (regexes or stopwords):
        return None
    return _Allow(regexes, target, stopwords, every)


def _shared_allowlists(data: dict, path: Path) -> list[tuple[_Allow, frozenset[str] | None]]:
    """The file's allowlists, each with the rules it is for (None: all)."""
    out = []
    for table in _allow_tables(data, "allowlist", path, None):
        allow = _allow_of(table, path, None)
        targets = _strings(table.get("targetRules"), "targetRules", path, None)
        if allow is not None:
            out.append((allow, frozenset(targets) if targets else None))
    return out


# ---- regular expressions: their shape, and a repository's bounded ------------------------------
_CAP = 1024  # an unbounded repeat (* + {n,}) of a repository's pattern: at most this many times
_NESTED = 16  # a group that repeats or alternates inside may itself repeat at most this often
_QUANTIFIER = re.compile(r"\*|\+|\?|\{(\d*)(,?)(\d*)\}")
_FLAGS_ONLY = re.compile(r"\(\?([A-Za-z\-]+)\)")
_POSIX = {"alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f", "blank": " \\t",
          "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9", "graph": "!-~", "lower": "a-z",
          "print": " -~", "punct": "!-/:-@\\[-`{-~", "space": " \\t\\n\\r\\f\\v", "upper": "A-Z",
          "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f"}
_OPENER = re.compile(r"\(\?(?::|=|!|<=|<!|>|P?<[A-Za-z_]\w*>|P=[A-Za-z_]\w*\)"
                     r"|[A-Za-z]*-?[A-Za-z]*:)")
_POSIX_NAME = re.compile(r"\^?[a-z]+")
_METACHARACTERS = frozenset(".^$*+?{}[]\\|()")


class _Shape(Struct, frozen=True):
    first: str  # the literal character it starts with ("\\$" escaped), or ""
    groups: int  # its capturing groups


def _shape(source: str) -> _Shape:
    first = ""
    if source[:1] == "\\" and len(source) > 1 and not source[1].isalnum():
        first = source[:2]
    elif source[:1] and source[0] not in _METACHARACTERS:
        first = source[0]
    if first and source[len(first):len(first) + 1] in ("*", "+", "?", "{"):
        first = ""  # it may repeat, or be absent: no literal to start on
    walk = _Walk(source, None)
    walk.run()
    return _Shape(first, walk.groups)


def _bounded(source: str) -> str:
    """A repository's regular expression as Python's re is to read it: Go's syntax translated,
    every unbounded repeat at most _CAP times (so a match is bounded), and ValueError for a
    group that can backtrack exponentially ((a+)+, (a|ab)*: _refuse_nested)."""
    return _Walk(source, _CAP).run()


class _Frame(Struct):
    """An open group: where it starts in the output, its first character when that is a
    literal ("" before any, None when it is not), the atoms repeated a varying number of times
    inside it (at any depth), whether it alternates, and the flags set inside it (Go's
    mid-pattern (?i), which lasts to the end of its group), each opened as (?i:."""

    start: int = 0
    first: str | None = ""
    atoms: int = 0
    repeats: list = []
    alternates: bool = False
    flags: list = []


class _Walk:
    """One pass over a regular expression's text, writing it out as Python's re reads it."""

    def __init__(self, source: str, cap: int | None) -> None:
        self.source, self.cap = source, cap
        self.out: list[str] = []
        self.frames = [_Frame()]
        self.atom_at: int | None = None  # where in ``out`` the atom a repeat would repeat starts
        self.group: _Frame | None = None  # that atom, when it is a group
        self.groups = 0
        self.folded = "(?i" in source

    def run(self) -> str:
        s, i = self.source, 0
        while i < len(s):
            c = s[i]
            q = _QUANTIFIER.match(s, i) if c in "*+?{" else None
            if c == "\\":
                self._atom("\\Z" if s.startswith("\\z", i) else s[i:i + 2])
                i += 2
            elif c == "[":
                i = self._class(i)
            elif c == "(":
                i = self._open(i)
            elif c == ")":
                i = self._close(i)
            elif c == "|":
                frame = self.frames[-1]
                self.out.append(")" * len(frame.flags) + "|"
                                + "".join(f"(?{f}:" for f in frame.flags))
                frame.alternates, self.atom_at, i = True, None, i + 1
            elif q is not None and (q.group(1) or q.group(3) or c != "{"):
                i = self._repeat(q)
            else:
                self._atom(c)
                i += 1
        self.out.append(")" * len(self.frames[0].flags))
        return "".join(self.out)

    def _atom(self, text: str) -> None:
        frame = self.frames[-1]
        if frame.first == "":
            literal = (text[0] == "\\" and len(text) == 2 and not text[1].isalnum()) \
                or (len(text) == 1 and text not in _METACHARACTERS)
            frame.first = text if literal else None
        frame.atoms += 1
        self.atom_at, self.group = len(self.out), None
        self.out.append(text)

    def _class(self, i: int) -> int:
        s, j, out = self.source, i + 1, ["["]
        if s.startswith("^", j):
            out.append("^")
            j += 1
        if s.startswith("]", j):
            out.append("\\]")
            j += 1
        while j < len(s) and s[j] != "]":
            end = s.find(":]", j + 2) if s.startswith("[:", j) else -1
            if s[j] == "\\":
                out.append(s[j:j + 2])
                j += 2
            elif end > 0 and _POSIX_NAME.fullmatch(s[j + 2:end]):
                if s[j + 2:end] not in _POSIX:
                    raise ValueError(f"the class [:{s[j + 2:end]}:] is not supported")
                out.append(_POSIX[s[j + 2:end]])
                j = end + 2
            else:  # Go reads [ & ~ | in a class as themselves; Python may not, one day
                out.append("\\" + s[j] if s[j] in "[&~|" else s[j])
                j += 1
        if j >= len(s):  # unterminated: as written, for re to say so
            self.out.append(s[i:])
            return j
        self._atom("".join(out) + "]")
        return j + 1

    def _open(self, i: int) -> int:
        s = self.source
        m = _FLAGS_ONLY.match(s, i)
        if m is not None:
            flags = m.group(1)
            if "U" in flags or "x" in flags:
                raise ValueError(f"the flag (?{flags}) is not supported")
            if i == 0:
                self.out.append(m.group())  # flags for the whole expression, as in Python
            else:  # Go's: to the end of the group it stands in
                self.out.append(f"(?{flags}:")
                self.frames[-1].flags.append(flags)
            self.atom_at = None
            return m.end()
        m = _OPENER.match(s, i)
        if m is not None and m.group().startswith("(?P="):  # a back-reference: an atom
            self._atom(m.group())
            return m.end()
        opener = m.group() if m is not None else s[i:i + 2] if s.startswith("(?", i) else "("
        taken = len(opener)
        if opener.startswith("(?<") and opener[3] not in "=!":
            opener = "(?P" + opener[2:]  # Go's (?<name>...)
        if opener == "(" or opener.startswith("(?P<"):
            self.groups += 1
        parent = self.frames[-1]
        if parent.first == "":
            parent.first = None  # a group first: no literal to start on
        parent.atoms += 1
        self.frames.append(_Frame(start=len(self.out)))
        self.out.append(opener)
        self.atom_at = None
        return i + taken

    def _close(self, i: int) -> int:
        if len(self.frames) == 1:  # unbalanced: as written, for re to say so
            self.out.append(")")
            return i + 1
        frame = self.frames.pop()
        self.out.append(")" * len(frame.flags) + ")")
        parent = self.frames[-1]
        parent.repeats += frame.repeats
        parent.alternates = parent.alternates or frame.alternates
        self.atom_at, self.group = frame.start, frame
        return i + 1

    def _repeat(self, q: re.Match) -> int:
        text = q.group()
        low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}.get(text, (None, None))
        if low is None:
            low = int(q.group(1) or 0)
            high = low if not q.group(2) else (int(q.group(3)) if q.group(3) else None)
        bound = high if high is not None or self.cap is None else max(low, self.cap)
        if self.cap is not None and self.group is not None and (bound is None or bound > _NESTED):
            self._refuse_nested(self.group)
        frame = self.frames[-1]
        if low != bound and self.atom_at is not None:
            frame.repeats.append("".join(self.out[self.atom_at:]))
        if frame.atoms == 1 and self.group is None:
            frame.first = None  # the first character may repeat or be absent
        self.out.append(text if bound == high else f"{{{low},{bound}}}")
        end = q.end()
        if self.source[end:end + 1] in ("?", "+"):  # lazy, possessive
            self.out.append(self.source[end])
            end += 1
        self.atom_at = self.group = None
        return end

    def _refuse_nested(self, group: _Frame) -> None:
        """A group repeated more than _NESTED times may hold no alternation, and what repeats
        inside it must not match its first character (a literal), which then marks where each
        repetition starts: (?:\\.[a-z]\\w+)+ is taken, (a+)+ and (a|ab)+ are not."""
        first = group.first
        if not group.alternates and not group.repeats:
            return
        if not group.alternates and first:
            char = first[-1]
            flags = re.DOTALL | (re.IGNORECASE if self.folded else 0)
            if not any(_may_match(atom, char, flags) for atom in group.repeats):
                return
        raise ValueError(f"a group repeated more than {_NESTED} times holds an alternation or "
                         "a repeat that can match where it starts, as (a+)+ or (a|ab)*: that "
                         "can take exponential time")


def _may_match(atom: str, char: str, flags: int) -> bool:
    try:
        return re.fullmatch(atom, char, flags) is not None
    except re.error:
        return True


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}

# ---- files never read into a prompt -------------------------------------------------------------
_SECRET_FILE_GLOBS = (
    ".env", ".env.*", "*.env", ".envrc", "*.pem", "*.key", "*.p12", "*.pfx", "*.keystore", "*.jks",
    ".npmrc", ".pypirc", ".netrc", "_netrc", ".git-credentials", ".htpasswd", "credentials",
    "credentials.json", "*.tfvars", "*.tfvars.json", "secrets.y*ml", ".dockercfg", "kubeconfig",
)
_SSH_KEY_GLOBS = ("id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*")


def is_secret_file(path: str) -> bool:
    """True for .env-style and credential files, which are never read into a prompt.

    ``path`` may be repository-relative with folders (either slash); the match is on the file
    name, case-insensitively, and on the tail ``.docker/config.json``.
    """
    parts = [p for p in str(path).replace("\\", "/").split("/") if p]
    if not parts:
        return False
    name = parts[-1].lower()
    if len(parts) >= 2 and parts[-2].lower() == ".docker" and name == "config.json":
        return True
    if any(fnmatch.fnmatchcase(name, g) for g in _SECRET_FILE_GLOBS):
        return True
    return not name.endswith(".pub") and any(fnmatch.fnmatchcase(name, g) for g in _SSH_KEY_GLOBS)
