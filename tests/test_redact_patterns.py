"""A repository's own secret patterns: .cascade/secrets.yml (the format of the bundled
cascade/turns/secret_patterns.yml) and the gitleaks rule files it includes. They redact what
the bundled table does not know, through the real hook; a bad file is one line naming the
file and line (exit 2) before any prompt leaves; a repository's regular expression is bounded.

Made-up tokens are assembled from pieces so that this file does not look like a leak.
"""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import inproc
import pytest
from conftest import git
from test_hook import DOC, LEDGER, loop_repo, match, reply  # noqa: F401 (a fixture)

from cascade.base.errors import CascadeError
from cascade.turns import redact as redact_module
from cascade.turns.redact import redact

ACME = "acme" + "_live_" + "9f2c4e6a8b0d1f3e5a7c9b2d4f6e8a0c"
INITECH = "initech" + "_" + "Q7wE9rT2yU4iO6pA8sD0fG3h"


def _patterns(repo: Path, text: str, toml: str | None = None) -> None:
    (repo / ".cascade").mkdir(exist_ok=True)
    (repo / ".cascade" / "secrets.yml").write_text(text)
    if toml is not None:
        (repo / "gitleaks.toml").write_text(toml)


TEAM = """\
# our own tokens, and the gitleaks rules the security team keeps
patterns:
  - kind: acme-token
    regex: 'acme_(?:live|test)_[0-9a-f]{32}(?![0-9a-f])'
include: [gitleaks.toml]
"""
GITLEAKS = """\
title = "security team rules"

[extend]
useDefault = true

[allowlist]
description = "test tokens"
regexes = ['''^initech_test''']

[[rules]]
id = "initech-api-token"
description = "Initech API token"
regex = '''\\b(initech_(?i)[a-z0-9]{24})(?:['"\\s;]|\\z)'''
keywords = ["initech_"]
entropy = 3.0

[[rules]]
id = "Umbrella Key"
regex = '''umbrella[_-]key\\s*[:=]\\s*"([A-Za-z0-9+/]{20,}={0,2})"'''
secretGroup = 1
keywords = ["umbrella"]

[rules.allowlist]
stopwords = ["sample"]

[[rules]]
id = "pkcs12-file"
description = "a file-name rule: nothing to match in text"
path = '''(?i)\\.p12$'''
"""


# ---- through the real hook ------------------------------------------------------------------

def test_a_team_pattern_redacts_an_in_house_token_through_the_hook(loop_repo, fake_llm):
    repo = loop_repo
    _patterns(repo, TEAM, GITLEAKS)
    proc = inproc.cascade(repo, "init", "--plain")
    assert proc.returncode == 0, proc.stderr
    (repo / DOC).write_text("# Use SQLite\n\nThe billing job calls Acme with\n"
                            f"`ACME_KEY={ACME}` and Initech with {INITECH} (rotated monthly).\n")
    for name in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
        fake_llm.script(match(name), reply("fine", "READY"))
    git(repo, "add", DOC)
    commit = subprocess.run(["git", "commit", "-m", "adr"], cwd=repo, capture_output=True,
                            text=True, timeout=120, check=False)
    output = commit.stdout + commit.stderr
    assert fake_llm.calls() == 3, output
    sent = fake_llm.all_text()
    assert "The billing job calls Acme with" in sent  # the document went in
    assert ACME not in sent and INITECH not in sent
    assert "[REDACTED:acme-token]" in sent and "[REDACTED:initech-api-token]" in sent
    assert f"redacted before sending: {DOC}:4 acme-token" in output
    assert f"redacted before sending: {DOC}:4 initech-api-token" in output


@pytest.mark.parametrize("team, toml, where, message", [
    ("patterns:\n  - kind: acme-token\n    regex: 'acme_[a-z'\n", None,
     ".cascade/secrets.yml:3", "regex does not compile"),
    ("patterns:\n  - kind: acme-token\n    regex: 'acme_(?:[a-z]+)+_'\n", None,
     ".cascade/secrets.yml:3", "regex refused: a group repeated more than 16 times"),
    ("patterns:\n  - kind: acme-token\n    regex: 'acme_[[:^alpha:]]{8}'\n", None,
     ".cascade/secrets.yml:3", "regex refused: the class [:^alpha:] is not supported"),
    ("patterns:\n  - kind: acme-token\n    regex: 'acme_[a-z]{8}'\n    allow: ['(x+)+']\n",
     None, ".cascade/secrets.yml:4", "regex refused"),
    ("patterns:\n  - kind: Acme Token\n    regex: 'acme_[a-z]{8}'\n", None,
     ".cascade/secrets.yml:2", "kind must be lower-case letters"),
    ("patterns:\n  - kind: acme-token\n    regex: 'acme_[a-z]{8}'\n    colour: red\n", None,
     ".cascade/secrets.yml:4", "unknown secret pattern key 'colour'"),
    ("patterns:\n  - kind: acme-token\n    regex: 'acme_[a-z]{8}'\n    holding: vowels\n",
     None, ".cascade/secrets.yml:4", "unknown holding 'vowels'"),
    ("patterns:\n  - kind: acme-token\n    regex: 'acme_[a-z]{8}'\n    secret: 2\n", None,
     ".cascade/secrets.yml:4", "secret must be the number of a group"),
    ("patterns:\n  - kind: acme-token\n    regex: [unclosed\n", None,
     ".cascade/secrets.yml:3", "invalid YAML"),
    ("include: [rules/missing.toml]\n", None, ".cascade/secrets.yml:1", "include"),
    ("include: [../outside.toml]\n", None, ".cascade/secrets.yml:1", "outside the repository"),
    ("include: [gitleaks.toml]\n", "[[rules]]\nid = 'x'\n\nregex = '''x(?P<'''\n",
     "gitleaks.toml:4", "regex does not compile"),
    ("include: [gitleaks.toml]\n", "title = 'x'\n[[rules]]\nid = \n", "gitleaks.toml:3",
     "invalid TOML"),
    ("include: [gitleaks.toml]\n", "[[rules]]\nid = 'x'\nregex = '''(x)'''\nsecretGroup = 2\n",
     "gitleaks.toml:1", "secretGroup must be the number of a group"),
])
def test_a_bad_pattern_file_names_file_and_line(loop_repo, fake_llm, team, toml, where, message):
    repo = loop_repo
    _patterns(repo, team, toml)
    git(repo, "add", DOC)
    proc = inproc.cascade(repo, "hook", DOC)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip() == proc.stderr.strip().splitlines()[0]  # one line
    assert proc.stderr.startswith(f"cascade: {where}: "), proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert fake_llm.calls() == 0  # nothing left the machine
    assert not list(repo.rglob("*.discussion.md"))  # and nothing was written before the stop


def test_a_linked_pattern_file_is_refused(loop_repo, fake_llm, tmp_path):
    repo = loop_repo
    elsewhere = tmp_path / "elsewhere.yml"
    elsewhere.write_text(TEAM)
    (repo / ".cascade").mkdir()
    (repo / ".cascade" / "secrets.yml").symlink_to(elsewhere)
    git(repo, "add", DOC)
    proc = inproc.cascade(repo, "hook", DOC)
    assert proc.returncode == 2 and "symbolic link" in proc.stderr, proc.stderr
    assert fake_llm.calls() == 0


# ---- in-process: the format, gitleaks' subset, the bounds ------------------------------------

@pytest.fixture
def team_repo(repo):
    """The repository of ``repo`` (the current folder) with TEAM and GITLEAKS in it."""
    _patterns(repo, TEAM, GITLEAKS)
    return repo


def test_a_gitleaks_rule_file_loads(team_repo):
    umbrella = "umbrella_key = \"" + "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5" + "\""
    text = "\n".join([
        f"Initech: {INITECH}",  # (?i) in mid-pattern, \z: Go's syntax, translated
        "Initech: initech_" + INITECH[len("initech_"):].upper(),
        "low entropy: initech_" + "ab" * 12,  # entropy 1.0, the rule asks more than 3.0
        "for the tests: initech_test" + "Q7wE9rT2yU4iO6pA8s" + "X",  # the file's allowlist
        umbrella,  # secretGroup 1: the key stays
        'umbrella-key: "' + "Sample0Key1234567890abcdefgh" + '"',  # a stopword: "sample"
        "see keystore.p12",  # the path-only rule is not a text rule
    ])
    out, found = redact(text)
    assert out.split("\n") == [
        "Initech: [REDACTED:initech-api-token]",
        "Initech: [REDACTED:initech-api-token]",
        "low entropy: initech_" + "ab" * 12,
        "for the tests: initech_test" + "Q7wE9rT2yU4iO6pA8s" + "X",
        'umbrella_key = "[REDACTED:umbrella-key]"',
        'umbrella-key: "' + "Sample0Key1234567890abcdefgh" + '"',
        "see keystore.p12",
    ]
    assert [r.line for r in found] == [1, 2, 5]
    assert redact(out) == (out, [])


def test_the_pattern_fields_do_what_the_format_says(repo):
    _patterns(repo, """\
patterns:
  - kind: build-key                # secret: 1 -- the name stays
    regex: 'BUILDKEY=([A-Z0-9]{12})'
    secret: 1
  - kind: lab-token                # holding: a word in the shape is no token
    regex: 'lab-[a-z0-9]{10}'
    holding: digit
  - kind: seed                     # entropy: aaaa... is no secret
    regex: 'seed:[a-z]{16}'
    entropy: 2.5
  - kind: ticket-signature         # allow: the documented test value stays
    regex: 'tsig_[A-Za-z0-9]{16}'
    allow: ['^tsig_TEST']
  - kind: internal-url             # glued: may follow a letter; keywords: tried only then
    regex: 'https://vault\\.corp/[a-z0-9]{8}'
    glued: true
    keywords: [vault.corp]
""")
    text = ("BUILDKEY=AB12CD34EF56 lab-abcdefghij lab-abc1234567 seed:aaaaaaaaaaaaaaaa "
            "seed:qwertyuiopasdfgh tsig_TESTabcdefghijkl tsig_Q1w2E3r4T5y6U7i8 "
            "urlhttps://vault.corp/k3y5s3cr")
    out, found = redact(text)
    assert out == ("BUILDKEY=[REDACTED:build-key] lab-abcdefghij [REDACTED:lab-token] "
                   "seed:aaaaaaaaaaaaaaaa [REDACTED:seed] tsig_TESTabcdefghijkl "
                   "[REDACTED:ticket-signature] url[REDACTED:internal-url]")
    assert redact(out) == (out, [])


def test_a_pattern_finding_nothing_outside_its_keywords_is_not_run(repo):
    _patterns(repo, "patterns:\n  - kind: x\n    regex: 'zz[0-9]{4}'\n    keywords: [zulu]\n")
    assert redact("zz1234")[1] == []
    assert [r.kind for r in redact("zulu zz1234")[1]] == ["x"]


def test_the_team_file_is_read_again_when_it_changes(repo):
    _patterns(repo, "patterns:\n  - kind: one\n    regex: 'one_[0-9]{6}'\n")
    assert redact("one_123456 two_123456")[0] == "[REDACTED:one] two_123456"
    _patterns(repo, "patterns:\n  - kind: two\n    regex: 'two_[0-9]{6}'\n# longer now\n")
    assert redact("one_123456 two_123456")[0] == "one_123456 [REDACTED:two]"
    (repo / ".cascade" / "secrets.yml").unlink()
    assert redact("one_123456 two_123456")[1] == []


def test_outside_a_repository_only_the_bundled_patterns_apply(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert redact_module._team_patterns() == ()


def test_a_gitleaks_file_on_a_python_without_tomllib(team_repo, monkeypatch):
    monkeypatch.setattr(redact_module, "tomllib", None)
    with pytest.raises(CascadeError) as err:
        redact("anything")
    assert str(err.value).startswith(".cascade/secrets.yml:5: ") and "tomli" in str(err.value)


def test_a_team_pattern_never_matches_a_marker(repo):
    _patterns(repo, "patterns:\n  - kind: shouting\n    regex: '[A-Z]{4}'\n")
    out, found = redact("token = " + "gh" + "p_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5")
    assert out == "token = [REDACTED:github-token]" and redact(out) == (out, [])


@pytest.mark.parametrize("source, python", [
    ("acme_[a-z0-9]{32}", "acme_[a-z0-9]{32}"),  # bounded already: as it is
    ("[a-z]+[0-9]*x", "[a-z]{1,1024}[0-9]{0,1024}x"),
    ("a{3,}b+?", "a{3,1024}b{1,1024}?"),
    ("(?:\\.[a-z]\\w+)+", "(?:\\.[a-z]\\w{1,1024}){1,1024}"),  # each repetition starts on "."
    ("(?:[\\r\\n]{1,2}.*){1,5}", "(?:[\\r\\n]{1,2}.{0,1024}){1,5}"),  # 5 repetitions at most
    ("ab(?i)cd|ef", "ab(?i:cd)|(?i:ef)"),  # Go: the flag lasts to the end of its group
    ("(x(?i)y)z", "(x(?i:y))z"),
    ("(?i)key", "(?i)key"),  # at the start: Python's own
    ("end\\z", "end\\Z"),
    ("[[:alnum:]_]{4}", "[0-9A-Za-z_]{4}"),
    ("(?<id>[0-9]{4})", "(?P<id>[0-9]{4})"),
])
def test_a_repository_regex_is_bounded_and_read_as_gitleaks_writes_it(source, python):
    assert redact_module._bounded(source) == python


@pytest.mark.parametrize("source", ["(a+)+", "(a|ab)*", "(?:x.*)+b", "(?:a\\w+)+", "(?U)a+",
                                    "[[:^alpha:]]"])
def test_an_exponential_or_foreign_regex_is_refused(source):
    with pytest.raises(ValueError):
        redact_module._bounded(source)


@pytest.mark.timeout(60)
def test_a_repository_regex_cannot_make_the_scan_quadratic(repo):
    """Unbounded, [a-z]+[0-9]+x tries the whole rest of the text at every position of a run
    of letters: quadratic, hours for this text. Bounded, each try stops after 1,024."""
    _patterns(repo, "patterns:\n  - kind: x\n    regex: '[a-z]+[0-9]+x'\n")
    started = time.monotonic()
    assert redact("a" * 200_000)[1] == []
    assert time.monotonic() - started < 30
