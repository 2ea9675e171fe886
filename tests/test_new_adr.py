"""`cascade new TITLE --rule NAME [--supersedes N] [--dir AREA]`: the next numbered document of a
rule's folder, from the repository's template (or the built-in one), and its ledger where the
hook would create it -- in real repositories laid out as adr-tools, MADR and folder-per-ADR
users lay them out, and committed through the real hook."""
from __future__ import annotations

import datetime as _dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import inproc
from conftest import REPO, git

from cascade import Discussion
from cascade.commands.new import fill


def today() -> str:
    """Today, asked when a test runs, not when the module is imported (a run may cross
    midnight)."""
    return _dt.date.today().isoformat()


RULES = """\
rules:
  - name: adr
    match: "docs/adr/*.md"
    exclude: ["docs/adr/README.md", "docs/adr/template.md"]
    template: adr
    discussion: "docs/adr/discussions/{stem}.discussion.md"
    participants: [architect, security, pragmatist]
    consensus: {threshold_ready: 0.67, threshold_reject: 0.01, human_required: false}
"""
NYGARD = "# {n}. {title}\n\nDate: 2020-01-01\n\n## Status\n\nAccepted\n\n## Context\n\nWhy {title}.\n"
ADR_TOOLS_TEMPLATE = ("# NUMBER. TITLE\n\nDate: DATE\n\n## Status\n\nSTATUS\n\n## Context\n\n"
                      "Our own template: the issue motivating this decision.\n")
# MADR 3's adr-template.md (abridged: its sections after the first are the same kind of text)
MADR_TEMPLATE = """\
---
status: {proposed | rejected | accepted | deprecated | … | superseded by [ADR-0005](0005-example.md)}
date: {YYYY-MM-DD when the decision was last updated}
deciders: {list everyone involved in the decision}
---
# {short title of solved problem and solution}

## Context and Problem Statement

{Describe the context and problem statement, e.g., in free form using two to three sentences.}

## Considered Options

* {title of option 1}
"""
MADR_DOC = "---\nstatus: accepted\ndate: 2020-01-01\n---\n# {title}\n\n## Context and Problem Statement\n\nx\n"


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink() and ".git" not in p.parts}


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def commit_all(root: Path, message: str = "setup") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message, "--no-verify")


def adopt(root: Path, files: dict[str, str]) -> None:
    """A repository with legacy ADRs, adopted with `cascade init` and committed."""
    write(root, files)
    commit_all(root, "legacy ADRs")
    proc = inproc.cascade(root, "init", "--plain", env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    commit_all(root, "adopt cascade")


def changed_lines(before: bytes, after: bytes) -> list[tuple[str, str]]:
    """The lines that differ, pairwise (both texts must have the same number of lines)."""
    old, new = before.split(b"\n"), after.split(b"\n")
    assert len(old) == len(new), (before, after)
    return [(a.decode(), b.decode()) for a, b in zip(old, new) if a != b]


# ---- numbering --------------------------------------------------------------------------------

@pytest.mark.parametrize("existing, expected", [
    ([], "0001-use-postgresql.md"),
    (["0001-a.md", "0002-b.md", "0005-c.md"], "0006-use-postgresql.md"),  # after a gap
    (["0009-a.md", "0010-b.md"], "0011-use-postgresql.md"),
    (["7-a.md", "9-b.md"], "10-use-postgresql.md"),                        # unpadded stays so
    (["001-a.md", "012-b.md"], "013-use-postgresql.md"),                   # width 3 kept
    (["ADR-006-a.md", "ADR-007-b.md"], "ADR-008-use-postgresql.md"),       # prefix kept
    (["0003-a.md", "README.md", "template.md", "notes-2.md"], "0004-use-postgresql.md"),
    (["20240105-a.md", "20240219-b.md"], "{today}-use-postgresql.md"),  # today, dated
])
def test_the_next_number_after_the_existing_ones(repo, cli, existing, expected):
    write(repo, {".ai-rules.yml": RULES, **{f"docs/adr/{name}": "# x\n" for name in existing}})
    commit_all(repo)
    code, out, err = cli("new", "Use PostgreSQL", "--rule", "adr")
    assert code == 0, err
    expected = expected.format(today=today().replace("-", ""))
    doc = f"docs/adr/{expected}"
    ledger = f"docs/adr/discussions/{expected[:-3]}.discussion.md"
    assert (repo / doc).is_file() and (repo / ledger).is_file()
    assert f"Created: {doc}" in out and f"Created: {ledger}" in out
    assert f"next: write the decision in {doc}, then: git add {doc} {ledger} && git commit" in out


def test_numbers_of_drafts_not_yet_committed_count(repo, cli):
    write(repo, {".ai-rules.yml": RULES, "docs/adr/0001-a.md": "# a\n"})
    commit_all(repo)
    assert cli("new", "First draft", "--rule", "adr")[0] == 0
    assert cli("new", "Second draft", "--rule", "adr")[0] == 0
    assert (repo / "docs/adr/0002-first-draft.md").is_file()
    assert (repo / "docs/adr/0003-second-draft.md").is_file()


# ---- the document's text ----------------------------------------------------------------------

def test_built_in_template_without_one_of_the_repository(repo, cli):
    write(repo, {".ai-rules.yml": RULES, "docs/adr/0003-use-mysql.md": NYGARD.format(
        n=3, title="Use MySQL")})
    commit_all(repo)
    code, out, _ = cli("new", "Use PostgreSQL", "--rule", "adr")
    assert code == 0
    assert "(from the built-in ADR template)" in out
    text = (repo / "docs/adr/0004-use-postgresql.md").read_text()
    bundled = (REPO / "templates/documents/adr.md").read_text()
    assert text == fill(bundled, number="4", title="Use PostgreSQL", date=today())
    assert text.startswith(f"# 4. Use PostgreSQL\n\nDate: {today()}\n\n## Status\n\nProposed\n\n"
                           "## Context\n\n")
    assert "\n## Decision\n\n" in text and "\n## Consequences\n\n" in text
    assert "NUMBER" not in text and "TITLE" not in text and "STATUS" not in text


def test_adr_tools_repository_template(repo, cli):
    """adr-tools: `.adr-dir` names the folder; `<dir>/templates/template.md` is the template."""
    folder = "doc/architecture/decisions"
    adopt(repo, {".adr-dir": folder + "\n",
                 f"{folder}/0001-record-architecture-decisions.md": NYGARD.format(
                     n=1, title="Record architecture decisions"),
                 f"{folder}/0002-use-mysql.md": NYGARD.format(n=2, title="Use MySQL"),
                 f"{folder}/templates/template.md": ADR_TOOLS_TEMPLATE})
    code, out, err = cli("new", "Use PostgreSQL", "--rule", "adr")
    assert code == 0, err
    assert f"(from {folder}/templates/template.md)" in out
    text = (repo / folder / "0003-use-postgresql.md").read_text()
    assert text == (f"# 3. Use PostgreSQL\n\nDate: {today()}\n\n## Status\n\nProposed\n\n"
                    "## Context\n\nOur own template: the issue motivating this decision.\n")
    d = Discussion.load(repo / folder / "discussions/0003-use-postgresql.discussion.md", root=repo)
    assert d.source == f"{folder}/0003-use-postgresql.md"


def test_madr_template_front_matter_and_title(repo, cli):
    adopt(repo, {"docs/decisions/0000-use-markdown-any-decision-records.md": MADR_DOC.format(
                     title="Use MADR"),
                 "docs/decisions/0001-use-python.md": MADR_DOC.format(title="Use Python"),
                 "docs/decisions/adr-template.md": MADR_TEMPLATE})
    code, out, err = cli("new", "Use PostgreSQL", "--rule", "adr")
    assert code == 0, err
    assert "(from docs/decisions/adr-template.md)" in out
    text = (repo / "docs/decisions/0002-use-postgresql.md").read_text()
    expected = MADR_TEMPLATE.split("\n")
    expected[1] = "status: proposed"  # in the template's case
    expected[2] = f"date: {today()}"
    expected[5] = "# Use PostgreSQL"
    assert text == "\n".join(expected)  # nothing else of the template changed
    d = Discussion.load(repo / "docs/decisions/discussions/0002-use-postgresql.discussion.md",
                        root=repo)
    assert d.title == "Use PostgreSQL" and d.source == "docs/decisions/0002-use-postgresql.md"


@pytest.mark.parametrize("template, expected", [
    # log4brains / MADR 2: bullets, placeholders in brackets
    (("# [short title of solved problem and solution]\n\n"
      "* Status: [proposed | rejected | accepted | deprecated | superseded by [ADR-0005](x.md)] "
      "<!-- optional -->\n* Date: [YYYY-MM-DD when the decision was last updated] <!-- optional -->"
      "\n\n## Context\n"),
     "# Use X\n\n* Status: proposed\n* Date: {today}\n\n## Context\n"),
    # a status section with a fixed word, quoted front matter, an H1 inside a code fence
    (('---\ntitle: "placeholder"\n---\n\n```\n# not a heading\n```\n\n# Title here\n\n'
      "## Status\n\nAccepted\n"),
     '---\ntitle: "Use X"\n---\n\n```\n# not a heading\n```\n\n# Use X\n\n## Status\n\nProposed\n'),
    # no heading at all, an empty status section
    ("## Status\n\n## Context\n", "# Use X\n\n## Status\n\nProposed\n\n## Context\n"),
    # adr-tools tokens, once each, in one pass (a title holding a token word stays as it is)
    ("# NUMBER. TITLE\n\nDate: DATE\n", "# 7. Use X\n\nDate: {today}\n"),
])
def test_fill(template, expected):
    assert fill(template, number="7", title="Use X", date=today()) == expected.format(today=today())
    assert fill("# TITLE\n", number="1", title="DATE and STATUS", date=today()) == "# DATE and STATUS\n"


def test_folder_per_adr(repo, cli):
    adopt(repo, {"docs/adr/event-store/index.md": NYGARD.format(n=1, title="Event store"),
                 "docs/adr/0002-auth/index.md": NYGARD.format(n=2, title="Auth"),
                 "docs/adr/index.md": "# All decisions\n"})
    code, _, err = cli("new", "Use Kafka", "--rule", "adr")
    assert code == 0, err
    doc = "docs/adr/0003-use-kafka/index.md"
    ledger = "docs/adr/0003-use-kafka/discussions/index.discussion.md"
    assert (repo / doc).read_text().startswith("# 3. Use Kafka\n")
    assert Discussion.load(repo / ledger, root=repo).source == doc
    assert inproc.cascade(repo, "explain", doc).returncode == 0


def test_area_folders_take_dir(repo, cli):
    adopt(repo, {"docs/adr/payments/0001-a.md": NYGARD.format(n=1, title="A"),
                 "docs/adr/payments/0002-b.md": NYGARD.format(n=2, title="B"),
                 "docs/adr/infra/0001-c.md": NYGARD.format(n=1, title="C")})
    assert cli("new", "Retry payments", "--rule", "adr", "--dir", "payments")[0] == 0
    assert (repo / "docs/adr/payments/0003-retry-payments.md").is_file()
    assert (repo / "docs/adr/payments/discussions/0003-retry-payments.discussion.md").is_file()
    assert cli("new", "Everywhere", "--rule", "adr")[0] == 0  # no --dir: the rule's folder
    assert (repo / "docs/adr/0001-everywhere.md").is_file()
    code, _, err = cli("new", "Out", "--rule", "adr", "--dir", "../elsewhere")
    assert code == 2 and "--dir '../elsewhere' must be a folder below docs/adr/" in err


# ---- the ledger -------------------------------------------------------------------------------

def test_the_ledger_is_the_rules(repo, cli):
    """At the rule's discussion: path, with its template, participants, protocol and consensus:
    the header the hook writes for a missing ledger; the rule file may sit in a subfolder."""
    write(repo, {"services/pay/.ai-rules.yml": """\
rules:
  - name: decisions
    match: "adr/*.md"
    template: code-review
    discussion: "reviews/{slug}.discussion.md"
    participants: [architect, researcher]
    protocol: phased
    consensus: {threshold_ready: 1.0, human_required: true}
""", "services/pay/adr/0041-x.md": "# x\n"})
    commit_all(repo)
    code, out, err = cli("new", "Shard the ledger", "--rule", "decisions")
    assert code == 0, err
    assert "(rule 'decisions', services/pay/.ai-rules.yml:2)" in out
    ledger = repo / "services/pay/reviews/0042-shard-the-ledger.discussion.md"
    d = Discussion.load(ledger, root=repo)
    h = d.header
    assert (h.title, h.source, h.template, h.protocol, h.participants) == (
        "42. Shard the ledger", "services/pay/adr/0042-shard-the-ledger.md", "code-review",
        "phased", ["architect", "researcher"])
    assert h.consensus["threshold_ready"] == "1.0" and h.consensus["human_required"] == "true"
    assert d.header_differences() == [] and d.comments == [] and d.source_revision is None


# ---- --supersedes -----------------------------------------------------------------------------

def test_supersedes_adr_tools_style_changes_only_the_status(repo, cli):
    old = "docs/adr/0003-use-mysql.md"
    write(repo, {".ai-rules.yml": RULES, "docs/adr/0001-a.md": NYGARD.format(n=1, title="A"),
                 old: NYGARD.format(n=3, title="Use MySQL") + "\n## Consequences\n\n- one\n"})
    commit_all(repo)
    before = (repo / old).read_bytes()
    code, out, err = cli("new", "Use PostgreSQL", "--rule", "adr", "--supersedes", "3")
    assert code == 0, err
    assert changed_lines(before, (repo / old).read_bytes()) == [
        ("Accepted", "Superseded by [4. Use PostgreSQL](0004-use-postgresql.md)")]
    text = (repo / "docs/adr/0004-use-postgresql.md").read_text()
    assert "## Status\n\nProposed\n\nSupersedes [3. Use MySQL](0003-use-mysql.md)\n\n## Context" in text
    assert f"git add docs/adr/0004-use-postgresql.md docs/adr/discussions/0004-use-postgresql.discussion.md {old} && git commit" in out
    assert "has no ledger (adopted before cascade)" in out


def test_supersedes_madr_front_matter_by_path(repo, cli):
    adopt(repo, {"docs/decisions/0001-use-mysql.md": MADR_DOC.format(title="Use MySQL"),
                 "docs/decisions/adr-template.md": MADR_TEMPLATE})
    old = "docs/decisions/0001-use-mysql.md"
    before = (repo / old).read_bytes()
    (repo / "docs").mkdir(exist_ok=True)
    os.chdir(repo / "docs")  # a path relative to where the command runs
    code, out, err = cli("new", "Use PostgreSQL", "--rule", "adr", "--supersedes",
                         "decisions/0001-use-mysql.md")
    assert code == 0, err
    assert changed_lines(before, (repo / old).read_bytes()) == [
        ("status: accepted", "status: superseded by [ADR-0002](0002-use-postgresql.md)")]
    assert "git add decisions/0002-use-postgresql.md" in out
    new = (repo / "docs/decisions/0002-use-postgresql.md").read_text()
    assert "status: proposed\n" in new and "Supersedes" not in new  # MADR: one status value


def test_supersedes_folder_per_adr_links_across_folders(repo, cli):
    adopt(repo, {"docs/adr/0001-auth/index.md": NYGARD.format(n=1, title="Auth")})
    before = (repo / "docs/adr/0001-auth/index.md").read_bytes()
    assert cli("new", "Auth v2", "--rule", "adr", "--supersedes", "1")[0] == 0
    assert changed_lines(before, (repo / "docs/adr/0001-auth/index.md").read_bytes()) == [
        ("Accepted", "Superseded by [2. Auth v2](../0002-auth-v2/index.md)")]
    assert ("Supersedes [1. Auth](../0001-auth/index.md)"
            in (repo / "docs/adr/0002-auth-v2/index.md").read_text())


def test_supersedes_records_a_status_only_revision_in_the_old_ledger(repo, cli):
    from cascade.protocol.revisions import record_revision

    old = "docs/adr/0001-use-mysql.md"
    ledger = "docs/adr/discussions/0001-use-mysql.discussion.md"
    write(repo, {".ai-rules.yml": RULES, old: NYGARD.format(n=1, title="Use MySQL")})
    d = Discussion.create("1. Use MySQL", "adr", path=repo / ledger, source=old, root=repo)
    record_revision(d, old, (repo / old).read_bytes())  # as the hook records a revision
    d.save()
    commit_all(repo)
    earlier = (repo / ledger).read_bytes()
    code, out, err = cli("new", "Use PostgreSQL", "--rule", "adr", "--supersedes", "1")
    assert code == 0, err
    grown = (repo / ledger).read_bytes()
    assert grown.startswith(earlier) and grown != earlier  # appended, nothing rewritten
    d = Discussion.load(repo / ledger, root=repo)
    last = d.events[-1]
    assert last.kind == "SOURCE-REVISION" and "same-as" in last.fields
    assert d.source_revision == git(repo, "hash-object", old).strip()
    assert f"{ledger}: it differs from the reviewed text only in its status" in out
    assert f"git add docs/adr/0002-use-postgresql.md docs/adr/discussions/0002-use-postgresql.discussion.md {old} {ledger} && git commit" in out


def test_supersedes_refuses_unstaged_changes_and_a_missing_status(repo, cli):
    old = "docs/adr/0001-use-mysql.md"
    write(repo, {".ai-rules.yml": RULES, old: NYGARD.format(n=1, title="Use MySQL"),
                 "docs/adr/0002-no-status.md": "# 2. No status\n\nText.\n"})
    commit_all(repo)
    (repo / old).write_text(NYGARD.format(n=1, title="Use MySQL") + "An edit in progress.\n")
    before = snapshot(repo)
    code, out, err = cli("new", "Use PostgreSQL", "--rule", "adr", "--supersedes", "1")
    assert (code, out) == (2, "")
    assert err == f"cascade: {old}: has unstaged changes: stage or stash them first (cascade " \
                  "new changes only its status, and would mix the two)\n"
    code, _, err = cli("new", "Use PostgreSQL", "--rule", "adr", "--supersedes", "2")
    assert code == 2 and err.startswith("cascade: docs/adr/0002-no-status.md: states no status")
    code, _, err = cli("new", "Use PostgreSQL", "--rule", "adr", "--supersedes", "9")
    assert code == 2 and err == ("cascade: docs/adr: --supersedes 9: no document numbered 9 "
                                 "here (give its path)\n")
    assert snapshot(repo) == before


# ---- errors: exit 2, one line naming the file, nothing written --------------------------------

def _symlinked_folder(repo: Path) -> None:
    (repo / "elsewhere").mkdir()
    (repo / "docs").mkdir()
    (repo / "docs/adr").symlink_to(repo / "elsewhere")


def _symlinked_ledgers(repo: Path) -> None:
    (repo / "elsewhere").mkdir()
    (repo / "docs/adr").mkdir(parents=True)
    (repo / "docs/adr/discussions").symlink_to(repo / "elsewhere")


def _ledger_exists(repo: Path) -> None:
    write(repo, {"docs/adr/discussions/0001-use-postgresql.discussion.md": "mine\n"})


@pytest.mark.parametrize("args, prepare, message", [
    (["--rule", "nope"], None, "cascade: .ai-rules.yml: no rule 'nope' (known: adr)"),
    (["--rule", "adr"], _ledger_exists,
     ("cascade: docs/adr/discussions/0001-use-postgresql.discussion.md: already exists: cascade "
      "new never overwrites a file")),
    (["--rule", "adr"], _symlinked_folder,
     "the document folder docs/adr is a symbolic link: cascade never follows one"),
    (["--rule", "adr"], _symlinked_ledgers,
     ("the ledger docs/adr/discussions/0001-use-postgresql.discussion.md passes through "
      "docs/adr/discussions, which is a symbolic link: cascade never follows one")),
    (["--rule", "adr", "--template", "adr"], None,
     "cascade: --template: not with --rule (the rule decides them)"),
    (["--supersedes", "3"], None, "cascade: --supersedes and --dir need --rule"),
])
def test_errors_exit_2_with_one_line_and_write_nothing(repo, cli, args, prepare, message):
    write(repo, {".ai-rules.yml": RULES})
    if prepare:
        prepare(repo)
    before = snapshot(repo)
    code, out, err = cli("new", "Use PostgreSQL", *args)
    assert code == 2 and out == ""
    assert err.startswith("cascade: ") and message in err, err
    assert len(err.splitlines()) == 1, err
    assert snapshot(repo) == before


def test_a_rule_that_would_not_govern_the_document(repo, cli):
    write(repo, {".ai-rules.yml": RULES.replace('"docs/adr/template.md"]',
                                                '"docs/adr/template.md", "docs/adr/0001-*"]')})
    code, _, err = cli("new", "Use PostgreSQL", "--rule", "adr")
    assert code == 2
    assert err == ("cascade: .ai-rules.yml:3: docs/adr/0001-use-postgresql.md would be governed "
                   "by no rule, not by rule 'adr' (area folders: --dir AREA)\n")


def test_no_jinja2_for_the_document_and_no_litellm(repo):
    """The ledger is rendered from its Jinja2 template, as the hook renders it; the document's
    template is plain text, and nothing loads a model client."""
    write(repo, {".ai-rules.yml": RULES})
    code = ("import sys; from cascade.commands.new import fill, _template; from pathlib import "
            "Path; fill(_template(Path('.').resolve(), ['docs/adr'])[0], number='1', title='x', "
            "date='d'); print('jinja2' in sys.modules); from cascade.main import main; "
            "main(['new', 'X', '--rule', 'adr']); print('litellm' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "False" and lines[-1] == "False"


# ---- end to end: the real hook asks the panel about the new ADR -------------------------------

PANEL = ("AI-Architect", "AI-Security", "AI-Pragmatist")


def test_new_then_commit_through_the_hook(repo, fake_llm, monkeypatch):
    for name, value in (("CASCADE_MODEL", "openai/fake"), ("CASCADE_API_BASE", fake_llm.url),
                        ("CASCADE_BACKOFF", "0.05"), ("PYTHONPATH", str(REPO)),
                        ("CASCADE_PYTHON", sys.executable)):
        monkeypatch.setenv(name, value)
    for name in PANEL:
        fake_llm.script(f"Reply as {name} ", json.dumps({"comment": f"{name}: fine.",
                                                         "vote": "READY"}))
    old = "docs/adr/0001-use-mysql.md"
    write(repo, {".ai-rules.yml": RULES, old: NYGARD.format(n=1, title="Use MySQL")})
    assert inproc.cascade(repo, "init", "--plain").returncode == 0
    commit_all(repo, "rules")  # (the ADR too: a committed ADR the panel reviews next)

    def commit() -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "commit", "-m", "adr"], cwd=repo, capture_output=True,
                              text=True, timeout=300, check=False)

    # The old ADR is reviewed first: an edit, the panel's review, then it lands.
    (repo / old).write_text(NYGARD.format(n=1, title="Use MySQL") + "\nMore context.\n")
    git(repo, "add", old)
    landed = commit()  # READY from all three: it lands with its ledger, in one commit
    assert landed.returncode == 0, landed.stdout + landed.stderr
    assert fake_llm.calls() == 3

    proc = inproc.cascade(repo, "new", "Use PostgreSQL", "--rule", "adr", "--supersedes", "1")
    assert proc.returncode == 0, proc.stderr
    command = proc.stdout.splitlines()[-1].split(", then: ", 1)[1]
    assert command.startswith("git add docs/adr/0002-use-postgresql.md ")
    subprocess.run(command.removesuffix(" && git commit"), shell=True, cwd=repo, check=True)

    # the panel is asked about the new ADR, and only about it; READY from all three: it
    # lands, and the superseded ADR's review holds
    landed = commit()
    assert landed.returncode == 0, landed.stdout + landed.stderr
    assert fake_llm.calls() == 6
    assert all("0002-use-postgresql.md" in r.text for r in fake_llm.chat_requests[3:])
    new = Discussion.load(repo / "docs/adr/discussions/0002-use-postgresql.discussion.md", root=repo)
    assert sorted(c.author for c in new.comments) == sorted(PANEL)
    check = inproc.cascade(repo, "check", "--from-ref", "HEAD~1")
    assert check.returncode == 0, check.stdout + check.stderr


# ---- the repository's conventions: opendatahub's prefixes and template, MADR's status ---------

# opendatahub-io/architecture-decision-records' template (abridged after the metadata table)
ODH_TEMPLATE = """\
# Open Data Hub - Architecture Decision Record template

<!-- copy and paste this template to start authoring your own ADR -->

|                |            |
| -------------- | ---------- |
| Date           | insert data |
| Scope          | |
| Status         | Approved |
| Authors        | [name](@github-username) |
| Supersedes     | N/A |
| Superseded by: | N/A |

## What

A couple sentences describing what this ADR is about.
"""
ODH_DOC = ("# Open Data Hub - {title}\n\n|  |  |\n| --- | --- |\n| Date | 2023-01-01 |\n"
           "| Status | Approved |\n\n## What\n\n{title}.\n")
ODH_TOP = "architecture-decision-records"
ODH_FILES = {
    "README.md": "# Open Data Hub ADRs\n",
    f"{ODH_TOP}/README.md": "# ADRs\n",
    f"{ODH_TOP}/ODH-ADR-0000-template.md": ODH_TEMPLATE,
    f"{ODH_TOP}/ODH-ADR-0003-use-apache-2-0-licence.md": ODH_DOC.format(title="Apache 2.0"),
    f"{ODH_TOP}/ODH-ADR-0005-github-labels-standards.md": ODH_DOC.format(title="Labels"),
    f"{ODH_TOP}/ODH-ADR-0007-data-plane-layer.md": ODH_DOC.format(title="Data plane"),
    f"{ODH_TOP}/ODH-ADR-0007-repository-rulesets.md": ODH_DOC.format(title="Rulesets"),
    f"{ODH_TOP}/automl/ODH-ADR-0001-automl.md": ODH_DOC.format(title="AutoML"),
    f"{ODH_TOP}/automl/ODH-ADR-0002-experiment-settings.md": ODH_DOC.format(title="Settings"),
    f"{ODH_TOP}/model-serving/ODH-ADR-MS-0002-kserve-modelcache.md": ODH_DOC.format(title="Cache"),
    f"{ODH_TOP}/model-serving/ODH-ADR-MS-0005-per-model-quota-limits.md":
        ODH_DOC.format(title="Quota"),
    f"{ODH_TOP}/model-serving/ODH-ADR-MaaS-0001-apiserver-for-maas.md":
        ODH_DOC.format(title="MaaS"),
}


def test_opendatahub_prefix_next_number_and_own_template(repo, cli):
    """`ODH-ADR-NNNN-title.md`: the prefix stays, the number follows the highest one of the
    folder (never 0001 again, never one that exists), in each area its own prefix; the text
    is the repository's `ODH-ADR-0000-template.md` with its table's Status and Date filled."""
    adopt(repo, ODH_FILES)
    code, out, err = cli("new", "Cut CI time in half", "--rule", "adr")
    assert code == 0, err
    doc = f"{ODH_TOP}/ODH-ADR-0008-cut-ci-time-in-half.md"
    assert f"Created: {doc} (from {ODH_TOP}/ODH-ADR-0000-template.md)" in out
    text = (repo / doc).read_text()
    expected = ODH_TEMPLATE.split("\n")
    expected[0] = "# Cut CI time in half"
    expected[6] = f"| Date           | {today()} |"
    expected[8] = "| Status         | Proposed |"
    assert text == "\n".join(expected)
    assert (repo / f"{ODH_TOP}/discussions/ODH-ADR-0008-cut-ci-time-in-half.discussion.md"
            ).is_file()

    assert cli("new", "Serve from cache", "--rule", "adr", "--dir", "model-serving")[0] == 0
    assert (repo / f"{ODH_TOP}/model-serving/ODH-ADR-MS-0006-serve-from-cache.md").is_file()
    assert cli("new", "Tune trials", "--rule", "adr", "--dir", "automl")[0] == 0
    assert (repo / f"{ODH_TOP}/automl/ODH-ADR-0003-tune-trials.md").read_text().startswith(
        "# Tune trials\n")  # the template of the folder above the area's

    code, out, err = cli("new", "Data plane v2", "--rule", "adr", "--supersedes", "3")
    assert code == 0, err
    old = (repo / f"{ODH_TOP}/ODH-ADR-0003-use-apache-2-0-licence.md").read_text()
    assert "| Status | Superseded by [ODH-ADR-0009](ODH-ADR-0009-data-plane-v2.md) |" in old


# MADR 4's docs/decisions/adr-template.md: the metadata commented out in the front matter
MADR4_TEMPLATE = """\
---
# Configuration for the Jekyll template "Just the Docs"
parent: Decisions
nav_order: 100
title: ADR Template

# These are optional elements. Feel free to remove any of them.
# status: "{proposed | rejected | accepted | deprecated | … | superseded by ADR-0123"
# date: {YYYY-MM-DD when the decision was last updated}
# decision-makers: {list everyone involved in the decision}
---
<!-- markdownlint-disable-next-line MD025 -->
# {short title, representative of solved problem and found solution}

## Context and Problem Statement

{Describe the context and problem statement.}
"""
MADR4_DOC = ("---\nparent: Decisions\nnav_order: {n}\nstatus: accepted\n---\n# {title}\n\n"
             "## Context and Problem Statement\n\n{title}.\n")
MADR_MINIMAL = "# {short title of solved problem and solution}\n\n## Context and Problem Statement\n\n{x}\n"


@pytest.mark.parametrize("template, status_line", [
    (MADR4_TEMPLATE, "status: proposed"),
    (MADR_MINIMAL, "status: proposed"),
])
def test_madr_new_adr_states_its_status(repo, cli, template, status_line):
    """A template whose status is commented out (MADR 4's own docs/decisions) or absent (MADR's
    minimal one): the new ADR still states `status: proposed` in its front matter, so
    `--supersedes` works on it and `status: true` can move it."""
    adopt(repo, {"docs/decisions/0000-use-markdown-architectural-decision-records.md":
                 MADR4_DOC.format(n=0, title="Use MADR"),
                 "docs/decisions/0001-use-cc0-or-mit-as-license.md":
                 MADR4_DOC.format(n=1, title="Use CC0"),
                 "docs/decisions/adr-template.md": template})
    code, _, err = cli("new", "Use PostgreSQL", "--rule", "adr")
    assert code == 0, err
    doc = "docs/decisions/0002-use-postgresql.md"
    text = (repo / doc).read_text()
    assert status_line in text.split("---")[1].split("\n")  # in the front matter
    assert "# Use PostgreSQL\n" in text
    from cascade.base import docstatus
    assert docstatus.find(text).value == "proposed"
    commit_all(repo, "draft")
    code, _, err = cli("new", "Use CockroachDB", "--rule", "adr", "--supersedes", "2")
    assert code == 0, err
    assert "status: superseded by [ADR-0003](0003-use-cockroachdb.md)" in (repo / doc).read_text()


def test_madr_adr_new_made_is_accepted_at_consensus(repo, fake_llm, monkeypatch):
    """The rule `init` writes says `status: true`: the panel's consensus moves the MADR ADR
    that `new` made from MADR 4's template (its status commented out) to `accepted`."""
    for name, value in (("CASCADE_MODEL", "openai/fake"), ("CASCADE_API_BASE", fake_llm.url),
                        ("CASCADE_BACKOFF", "0.05"), ("PYTHONPATH", str(REPO)),
                        ("CASCADE_PYTHON", sys.executable)):
        monkeypatch.setenv(name, value)
    for name in PANEL:
        fake_llm.script(f"Reply as {name} ", json.dumps({"comment": f"{name}: fine.",
                                                         "vote": "READY"}))
    adopt(repo, {"docs/decisions/0000-use-markdown-architectural-decision-records.md":
                 MADR4_DOC.format(n=0, title="Use MADR"),
                 "docs/decisions/adr-template.md": MADR4_TEMPLATE})
    assert "status: true" in (repo / ".ai-rules.yml").read_text()
    proc = inproc.cascade(repo, "new", "Use PostgreSQL", "--rule", "adr")
    assert proc.returncode == 0, proc.stderr
    doc = "docs/decisions/0001-use-postgresql.md"
    ledger = "docs/decisions/discussions/0001-use-postgresql.discussion.md"
    for _attempt in range(3):
        git(repo, "add", doc, ledger)
        landed = subprocess.run(["git", "commit", "-m", "adr"], cwd=repo, capture_output=True,
                                text=True, timeout=300, check=False)
        if landed.returncode == 0:
            break
    assert landed.returncode == 0, landed.stdout + landed.stderr
    committed = git(repo, "show", f"HEAD:{doc}")
    assert "\nstatus: accepted\n" in committed, committed
    assert fake_llm.calls() == 3
