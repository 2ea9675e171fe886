"""The secret boundary: credential-looking text is redacted before any prompt leaves the machine.

There is no switch to turn this off. ``redact(text)`` replaces each secret with
``[REDACTED:<kind>]`` and reports the kind and line of each; ``is_secret_file(path)`` names the
files that are never read into a prompt at all. Cost is linear: ~50 ms for 1 MB of prose here.

Found on their own (the whole token is replaced), whatever surrounds them -- documentation
examples such as ``AKIAIOSFODNN7EXAMPLE`` included:
  aws-access-key   AKIA / ASIA + 16 capitals or digits
  github-token     ghp_ gho_ ghu_ ghs_ ghr_ + 36 or more; github_pat_ + 22 or more
  gitlab-token     glpat- + 20 or more
  slack-token      xoxa- xoxb- xoxp- xoxo- xoxs- xoxr- + 10 or more, holding a digit
  slack-webhook    the whole https://hooks.slack.com/services|workflows|triggers/... URL
  anthropic-key    sk-ant- + 20 or more
  openai-key       sk- / sk-proj- + 20 or more of [A-Za-z0-9_-] holding a digit or a capital
                   (so sk-learn and sk-learn-compatible-pipeline-wrapper are left alone)
  google-api-key   AIza + 35
  stripe-key       sk_live_ rk_live_ sk_test_ rk_test_ + 16 or more
  twilio-key       SK + 32 hex
  sendgrid-key     SG.<16+>.<16+>
  npm-token        npm_ + 36 or more
  pypi-token       pypi-AgE + 40 or more
  jwt              eyJ<8+>.eyJ<8+>.<signature>
  private-key      a PEM "-----BEGIN ... PRIVATE KEY-----" block through its END line, or to
                   the end of the text when it has none. A BEGIN line not followed by key
                   material (base64, Proc-Type:, DEK-Info:, Comment:) is prose: left alone.
A token glued to a preceding letter or digit (``xAKIA...``, ``risk-...``) is not a token.

Found by their context (only the secret is replaced; key, scheme, user and host are kept):
  azure-storage-key  AccountKey=<base64> / SharedAccessKey=<base64>
  bearer-token       Bearer <16+ chars with a digit and a letter>
  basic-auth         Authorization: Basic <base64>
  password-in-url    scheme://user:[REDACTED:password-in-url]@host
  aws-secret-key     40 base64 chars assigned to aws_secret_access_key / SecretAccessKey
  secret-assignment  a value assigned (= : := => ==) to a secret-named key, in code, YAML,
                     JSON, .ini, .properties, shell (export X=...), markdown (**password**:)
A key is secret-named when its last word (after dropping base/value/raw/b64/hex/str/string
and digits; words split at _ - . and camelCase) is password, passwd, pwd, pass, passphrase,
passcode, secret, token, credential(s), creds (or ends with password/secret/token/...:
PGPASSWORD, csrftoken), or is "key" after api/access/secret/private/auth/client/app/encryption/
signing/master/account/service/storage/hmac/jwt/session/license/subscription/consumer.
So DB_PASS, aws_secret_access_key, apiKey, SECRET_KEY_BASE are secret-named;
password_policy, token_expiry, api_key_header, PASSWORD_FILE, key are not.

An assigned value (and a password in a URL) is left alone when ``is_placeholder`` says so:
  * empty, or already redacted: [REDACTED...]  (this is what makes redact idempotent);
  * one of PLACEHOLDER_WORDS, case-insensitively (changeme, password, secret, example, none,
    null, true, false, required, optional, default, ... -- see the set);
  * containing example, placeholder, changeme, change_me, change-me, dummy, redacted, ``${``
    or ``{{`` (so ${DB_PASSWORD}, ${{ secrets.TOKEN }}, {{ vault_pw }});
  * $VAR, $(command), <anything>, %VAR%, %(name)s, {name}; starting with your/my/insert/enter/
    replace/put followed by - _ . or a space; ending with -here or _here;
  * one character repeated (aaaaaa, 000000) or only the mask characters * x X . # - _ ? •.
and additionally, for a secret-assignment:
  * shorter than 6 characters; a quoted value holding whitespace (prose in a JSON schema:
    "password": "at least 12 characters");
  * an unquoted value followed by more words on its line, unless the operator is "=" and the
    value looks random (a digit, one of !@#$%^*+=/?~|, or a lower-case letter followed by a
    capital): "password: required field" and "token = opaque string" are left alone,
    "--password=Hunter2024 -u root" and "PGPASSWORD=Hunter2024 psql" are not;
  * a reference rather than a literal: a dotted name (settings.API_KEY, process.env.TOKEN) or
    a call or subscript (os.environ["API_KEY"], get_token());
  * with the ":" operator and no quotes (YAML, prose), a value of letters and - _ . only
    (token: opaque, password: bcrypt, scope: read-only): taken for a word. Quoted values and
    "=" assignments have no such exemption. A letters-only YAML password is therefore missed.
Not handled: XML elements (<password>x</password>), values split across lines, passwords
holding whitespace.
"""
from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass

__all__ = ["Redaction", "redact", "is_secret_file", "is_placeholder", "PLACEHOLDER_WORDS"]


@dataclass(frozen=True)
class Redaction:
    kind: str  # e.g. "aws-access-key", "private-key", "github-token", "password-in-url"
    line: int  # 1-based line in the input text where the secret started


def marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


# ---- tokens recognisable on their own ----------------------------------------------------------
# One alternation whose branches all start with a literal, so the regex engine can skip ahead
# by first character. The kind is read off the matched text.
_TOKENS = re.compile(
    r"AKIA[0-9A-Z]{16}(?![0-9A-Za-z])|ASIA[0-9A-Z]{16}(?![0-9A-Za-z])"
    r"|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}"
    r"|glpat-[A-Za-z0-9_\-]{20,}"
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}"
    r"|https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{8,}"
    r"|sk-ant-[A-Za-z0-9_\-]{20,}|sk-[A-Za-z0-9_\-]{20,}"
    r"|AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"
    r"|sk_(?:live|test)_[0-9A-Za-z]{16,}|rk_(?:live|test)_[0-9A-Za-z]{16,}"
    r"|SK[0-9a-fA-F]{32}(?![0-9A-Za-z])"
    r"|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"
    r"|npm_[A-Za-z0-9]{36,}"
    r"|pypi-AgE[A-Za-z0-9_\-]{40,}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"
    r"|AccountKey=[A-Za-z0-9+/]{20,}={0,2}|SharedAccessKey=[A-Za-z0-9+/]{20,}={0,2}"
)
_TOKEN_KINDS = (  # (prefix, kind, characters kept before the secret)
    ("AKIA", "aws-access-key", 0), ("ASIA", "aws-access-key", 0),
    ("github_pat_", "github-token", 0), ("gh", "github-token", 0),
    ("glpat-", "gitlab-token", 0), ("xox", "slack-token", 0),
    ("https://hooks.slack.com/", "slack-webhook", 0),
    ("sk-ant-", "anthropic-key", 0), ("sk-", "openai-key", 0),
    ("AIza", "google-api-key", 0), ("sk_", "stripe-key", 0), ("rk_", "stripe-key", 0),
    ("SK", "twilio-key", 0), ("SG.", "sendgrid-key", 0), ("npm_", "npm-token", 0),
    ("pypi-", "pypi-token", 0), ("eyJ", "jwt", 0),
    ("AccountKey=", "azure-storage-key", len("AccountKey=")),
    ("SharedAccessKey=", "azure-storage-key", len("SharedAccessKey=")),
)
_DIGIT_OR_CAPITAL = re.compile(r"[0-9A-Z]")

# ---- PEM private keys -------------------------------------------------------------------------
_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
# Key material right after the BEGIN line: base64, or an RFC 1421 / SSH2 header line. Quotes,
# escaped newlines and comment leaders may sit in between (a key inside JSON, YAML, a comment).
_PEM_BODY = re.compile(r"(?:\s|\\[nrt]|[\"'`#>*;|,])*"
                       r"(?:[A-Za-z0-9+/=]{16}|Proc-Type:|DEK-Info:|Comment:)")

# ---- passwords in URLs ------------------------------------------------------------------------
_URL_PASSWORD = re.compile(r"://([^\s:/@\"'<>`]{0,256}):([^\s/\"'<>`]{1,256})@(?=[^\s/@])")

# ---- bearer / basic credentials (matched on the lower-cased text) ------------------------------
_BEARER = re.compile(r"bearer[ \t]+([a-z0-9._~+/\-]{16,}=*)"
                     r"|authorization[\"']?[ \t]*[:=][ \t]*[\"']?basic[ \t]+([a-z0-9+/]{8,}={0,2})")
_DIGIT = re.compile(r"[0-9]")
_LETTER = re.compile(r"[A-Za-z]")

# ---- generic assignments (matched on the lower-cased text) -------------------------------------
# A secret word ("key" only after a qualifier: api_key, apiKey), the rest of the key, an
# optional closing quote (JSON, escaped JSON), ']' (env["X"] = ...) or '**' (markdown bold),
# then the operator. The start of the key is found by looking left. The rest of the key is
# matched in a lookahead and consumed by a backreference -- an atomic group, so a run like
# "passpasspass..." is never backtracked into.
_ASSIGN = re.compile(r"(?:pass|pwd|secret|token|k(?<=[a-z0-9_.\-]k)ey|cred)"
                     r"(?=([a-z0-9_.\-]{0,24}))\1"
                     r"(?:\\?[\"'])?\]?\*{0,2}[ \t]*(=>|:=|==|=|:)\*{0,2}[ \t]*")
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
_SECRET_SUFFIXES = ("password", "passwd", "passphrase", "passcode", "secret", "token", "apikey",
                    "secretkey", "privatekey", "accesskey")
_SECRET_WORDS = frozenset({"pass", "pwd", "pw", "credential", "credentials", "creds"})
_KEY_QUALIFIERS = frozenset({"api", "access", "secret", "private", "auth", "client", "app",
                             "encryption", "signing", "master", "account", "service", "storage",
                             "hmac", "jwt", "session", "license", "subscription", "consumer"})
_NOISE_WORDS = frozenset({"base", "value", "val", "plain", "plaintext", "raw", "b64", "base64",
                          "hex", "str", "string"})
_VALUE_DQ = re.compile(r'"((?:[^"\\\n]|\\.){0,4096})"')
_VALUE_EDQ = re.compile(r'\\"([^"\\\n]{0,4096})\\"')
_VALUE_SQ = re.compile(r"'([^'\n]{0,4096})'")
_VALUE_BT = re.compile(r"`([^`\n]{0,4096})`")
_QUOTED = {"\\": _VALUE_EDQ, '"': _VALUE_DQ, "'": _VALUE_SQ, "`": _VALUE_BT}
_VALUE_BARE = re.compile(r"[^\s\"'`,;(){}\[\]<>&]{1,4096}")
_BARE_END = re.compile(r"[ \t]*(?:$|[\r\n,;)}\]&#]|//)")
_DOTTED_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_WORDLIKE = re.compile(r"[A-Za-z][A-Za-z._\-]*")
_AWS_SECRET = re.compile(r"[A-Za-z0-9/+]{40}")
_SPACE = re.compile(r"\s")
_RANDOM_LOOKING = re.compile(r"[0-9!@#$%^*+=/?~|]|[a-z][A-Z]")

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
_PLACEHOLDER = re.compile(
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
    if not words:
        return False
    last = words[-1]
    if last in _SECRET_WORDS or last.endswith(_SECRET_SUFFIXES):
        return True
    return last == "key" and len(words) > 1 and words[-2] in _KEY_QUALIFIERS


def _value_at(text: str, pos: int) -> tuple[int, int, str, int]:
    """The literal value starting at ``pos``: (start, end, how, scanned_to), where ``how`` is
    "quoted", "line" (unquoted, ending the line or followed by , ; ) } ] & or a comment),
    "word" (unquoted, followed by more words) or "" (none). ``scanned_to`` is where an
    unquoted value stopped: a value starting before it would stop there too."""
    quoted = _QUOTED.get(text[pos:pos + 1])
    if quoted is not None:
        m = quoted.match(text, pos)
        if m:
            return m.start(1), m.end(1), "quoted", pos
    m = _VALUE_BARE.match(text, pos)
    if not m:
        return pos, pos, "", pos
    end = m.end()
    while end > pos and text[end - 1] in ".!?":  # sentence punctuation after a prose value
        end -= 1
    if end == pos:
        return pos, pos, "", m.end()
    if _BARE_END.match(text, m.end()):
        return pos, end, "line", pos
    if m.end() < len(text) and text[m.end()] in " \t":
        return pos, end, "word", pos
    return pos, pos, "", m.end()


@functools.lru_cache(maxsize=1024)
def _key_kind(key: str) -> tuple[bool, bool]:
    """(secret-named, names an AWS secret access key)."""
    words = tuple(w.lower() for w in _WORDS.findall(key))
    return _secret_named(words), "secretaccesskey" in "".join(words)


def _assignments(text: str, low: str, found: list) -> None:
    done = 0  # nothing that starts before this can be a new assignment
    for m in _ASSIGN.finditer(low):
        start = m.start()
        if start < done:
            continue
        key_start = start
        while key_start > 0 and text[key_start - 1] in _KEY_CHARS and start - key_start < 64:
            key_start -= 1
        if key_start > 0 and text[key_start - 1] in _KEY_CHARS:
            continue  # an identifier longer than any key
        key_end = m.start(2)
        while key_end > start and text[key_end - 1] in " \t\"'\\]*":
            key_end -= 1
        secret_named, aws = _key_kind(text[key_start:key_end])
        if not secret_named:
            continue
        vstart, vend, how, done = _value_at(text, m.end())
        if not how:
            continue
        v = text[vstart:vend]
        if aws and _AWS_SECRET.fullmatch(v):
            found.append((vstart, vend, 1, "aws-secret-key"))
            continue
        if len(v) < 6:
            continue
        if how == "quoted":
            if _SPACE.search(v):
                continue  # prose in a string: "password": "at least 12 characters"
        else:
            colon = m.group(2) == ":"
            if how == "word" and (colon or not _RANDOM_LOOKING.search(v)):
                continue  # prose: "password: required field", "token = opaque string"
            if colon and _WORDLIKE.fullmatch(v):
                continue  # a word: "token: opaque"
            if _DOTTED_NAME.fullmatch(v):
                continue  # a reference: settings.API_KEY
        if is_placeholder(v):
            continue
        found.append((vstart, vend, 4, "secret-assignment"))


def _tokens(text: str, found: list) -> None:
    for m in _TOKENS.finditer(text):
        s = m.group()
        if m.start() > 0 and text[m.start() - 1].isalnum() and not s.startswith("https://"):
            continue  # the middle of a longer word
        for prefix, kind, keep in _TOKEN_KINDS:
            if s.startswith(prefix):
                break
        if kind == "openai-key" and not _DIGIT_OR_CAPITAL.search(s, 3):
            continue  # hyphenated words: sk-learn-compatible-pipeline
        if kind == "slack-token" and not _DIGIT.search(s, 5):
            continue  # words again: xoxo-hugs-and-kisses
        found.append((m.start() + keep, m.end(), 1, kind))


def _private_keys(text: str, found: list) -> None:
    pos = 0
    while True:
        m = _PEM_BEGIN.search(text, pos)
        if not m:
            return
        if not _PEM_BODY.match(text, m.end()):
            pos = m.end()  # the header named in prose, no key material after it
            continue
        end = _PEM_END.search(text, m.end())
        if end is None:
            found.append((m.start(), len(text), 0, "private-key"))
            return
        found.append((m.start(), end.end(), 0, "private-key"))
        pos = end.end()


def _url_passwords(text: str, found: list) -> None:
    for m in _URL_PASSWORD.finditer(text):
        if m.start() == 0 or not text[m.start() - 1].isalnum():
            continue  # no scheme
        if m.group(1).startswith("[REDACTED"):
            continue  # the user was a token, already replaced: "[REDACTED:github-token]@host"
        if not is_placeholder(m.group(2)):
            found.append((m.start(2), m.end(2), 3, "password-in-url"))


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


def redact(text: str) -> tuple[str, list[Redaction]]:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]``, and what was replaced.

    Idempotent: redacting redacted text changes nothing and reports nothing.
    """
    if not text:
        return text, []
    found: list[tuple[int, int, int, str]] = []  # (start, end, priority, kind)
    _private_keys(text, found)
    _tokens(text, found)
    _url_passwords(text, found)
    low = text.lower()
    if len(low) == len(text):  # lower() kept every offset (true unless rare Unicode is present)
        _assignments(text, low, found)
        _bearers(text, low, found)
    else:
        ascii_low = text.translate(_ASCII_LOWER)
        _assignments(text, ascii_low, found)
        _bearers(text, ascii_low, found)
    if not found:
        return text, []
    found.sort(key=lambda f: (f[0], f[2], f[0] - f[1]))
    out: list[str] = []
    redactions: list[Redaction] = []
    pos = 0
    line = 1
    for start, end, _, kind in found:
        if start < pos:
            continue  # overlaps a secret already replaced
        line += text.count("\n", pos, start)
        out.append(text[pos:start])
        out.append(marker(kind))
        redactions.append(Redaction(kind, line))
        line += text.count("\n", start, end)
        pos = end
    out.append(text[pos:])
    return "".join(out), redactions


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
