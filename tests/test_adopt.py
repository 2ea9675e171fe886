"""Adopting cascade in a repository that already has ADRs (issue 10): `cascade init` finds the
layout and governs it, records the adoption baseline so history stays green, and the hook
reviews only what a commit changes (`pre-commit run --all-files` asks no model)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import inproc
from conftest import REPO, git

from cascade.check.baseline import BASELINE, parse
from cascade.config.layout import find_layout

ADR = "# {title}\n\n## Status\n\nAccepted\n\n## Decision\n\nWe do {title}.\n"

LAYOUTS = {
    "adr-tools": {
        "dir": "doc/architecture/decisions",
        "files": {
            ".adr-dir": "doc/architecture/decisions\n",
            "doc/architecture/decisions/0001-record-decisions.md": ADR.format(title="records"),
            "doc/architecture/decisions/0002-use-postgres.md": ADR.format(title="postgres"),
            "doc/architecture/decisions/0003-use-kafka.md": ADR.format(title="kafka"),
            "doc/architecture/decisions/template.md": "# Title\n\n## Status\n",
            "doc/architecture/decisions/README.md": "# Decisions\n",
        },
        "docs": ["doc/architecture/decisions/0001-record-decisions.md",
                 "doc/architecture/decisions/0002-use-postgres.md",
                 "doc/architecture/decisions/0003-use-kafka.md"],
        "not": ["doc/architecture/decisions/template.md", "doc/architecture/decisions/README.md"],
    },
    "madr": {
        "dir": "docs/decisions",
        "files": {
            "docs/decisions/0000-use-markdown-adrs.md": ADR.format(title="madr"),
            "docs/decisions/0001-use-python.md": ADR.format(title="python"),
            "docs/decisions/adr-template.md": "# {short title}\n",
            "docs/decisions/README.md": "# Decisions\n",
        },
        "docs": ["docs/decisions/0000-use-markdown-adrs.md", "docs/decisions/0001-use-python.md"],
        "not": ["docs/decisions/adr-template.md", "docs/decisions/README.md"],
    },
    "folder-per-adr": {
        "dir": "docs/adr",
        "files": {
            "docs/adr/event-store/index.md": ADR.format(title="event store"),
            "docs/adr/auth/index.md": ADR.format(title="auth"),
            "docs/adr/index.md": "# All decisions\n",
            "docs/adr/README.md": "# Decisions\n",
        },
        "docs": ["docs/adr/auth/index.md", "docs/adr/event-store/index.md"],
        "not": ["docs/adr/index.md", "docs/adr/README.md"],
    },
}


def run(repo, *args, env=None):
    return subprocess.run(list(args), cwd=repo, capture_output=True, text=True, timeout=300,
                          env=env, check=False)


def run_cascade(*args, cwd, env=None):
    """``cascade ARGS`` in ``cwd``, in this process (what these tests assert is what the
    command prints and decides, not how a process starts)."""
    return inproc.cascade(cwd, *args, env=env)


def fake_model(fake_llm):
    """The environment that points cascade's model calls at the fake endpoint."""
    return {"CASCADE_MODEL": "openai/fake", "CASCADE_API_BASE": fake_llm.url}


def adopt(repo, layout):
    for rel, text in layout["files"].items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "legacy ADRs")
    proc = run_cascade("init", cwd=repo, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_init_governs_the_layout_and_history_stays_green(repo, name):
    layout = LAYOUTS[name]
    out = adopt(repo, layout)
    assert f"ADRs in {layout['dir']}/" in out
    assert f"governs {len(layout['docs'])} document(s)" in out
    for doc in layout["docs"]:
        assert run_cascade("explain", doc, cwd=repo).returncode == 0, doc
    for other in layout["not"]:
        assert run_cascade("explain", other, cwd=repo).returncode == 1, other
    baseline = parse((repo / BASELINE).read_text())
    assert sorted(baseline) == sorted(layout["docs"])
    config = (repo / ".pre-commit-config.yaml").read_text()
    assert "language: system" in config and "\n        files:" not in config  # no filter
    assert "cascade` on PATH" in out  # the teammates' requirement, said plainly

    git(repo, "add", ".")
    git(repo, "commit", "-qm", "adopt cascade", "--no-verify")
    proc = run_cascade("check", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"({len(layout['docs'])} legacy, unchanged since adoption)" in proc.stdout
    assert "warning" not in proc.stdout  # healthy: one line
    github = run_cascade("check", "--format", "github", cwd=repo)
    assert github.returncode == 0 and "::warning" not in github.stdout
    proc = run_cascade("check", "--from-ref", "HEAD~1", cwd=repo)  # the adoption PR
    assert proc.returncode == 0, proc.stdout + proc.stderr

    # an unreviewed change to a legacy ADR fails, in both modes
    doc = layout["docs"][0]
    (repo / doc).write_text((repo / doc).read_text() + "\nAmended without review.\n")
    git(repo, "commit", "-qam", "amend an ADR", "--no-verify")
    for args in ((), ("--from-ref", "HEAD~1")):
        proc = run_cascade("check", *args, cwd=repo)
        assert proc.returncode == 1, proc.stdout
        assert f"{doc}:1: governed by rule" in proc.stdout

    # writing the changed document's new blob into the baseline later lets nothing through
    blob = git(repo, "rev-parse", f"HEAD:{doc}").strip()
    text = (repo / BASELINE).read_text()
    (repo / BASELINE).write_text("".join(
        f"{blob} {doc}\n" if line.endswith(f" {doc}") else line + "\n"
        for line in text.splitlines()))
    git(repo, "commit", "-qam", "sneak the change into the baseline", "--no-verify")
    for args in ((), ("--from-ref", "HEAD~1"), ("--from-ref", "HEAD~2")):
        proc = run_cascade("check", *args, cwd=repo)
        assert proc.returncode == 1, (args, proc.stdout)
        assert f"{doc}:1: governed by rule" in proc.stdout


def test_a_range_that_adopts_and_changes_a_document_fails(repo):
    """An entry written in the range vouches only for documents the range does not change."""
    layout = LAYOUTS["madr"]
    for rel, text in layout["files"].items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "legacy ADRs")
    doc = layout["docs"][1]
    (repo / doc).write_text("# changed before adoption\n")
    git(repo, "commit", "-qam", "change")
    assert run_cascade("init", cwd=repo, env={"PATH": "/usr/bin:/bin"}).returncode == 0
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "adopt", "--no-verify")
    proc = run_cascade("check", "--from-ref", "HEAD~2", cwd=repo)
    assert proc.returncode == 1 and f"{doc}:1: governed by rule" in proc.stdout
    assert run_cascade("check", "--from-ref", "HEAD~1", cwd=repo).returncode == 0


def test_pre_commit_all_files_asks_no_model(repo, fake_llm):
    layout = LAYOUTS["adr-tools"]
    adopt(repo, layout)
    config = (repo / ".pre-commit-config.yaml").read_text()
    config = config.replace("entry: cascade ", f"entry: {sys.executable} -m cascade ")
    (repo / ".pre-commit-config.yaml").write_text(config)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "adopt cascade", "--no-verify")
    env = {**os.environ, "CASCADE_MODEL": "openai/fake", "CASCADE_API_BASE": fake_llm.url,
           "PYTHONPATH": str(REPO)}
    assert run(repo, sys.executable, "-m", "pre_commit", "install", env=env).returncode == 0
    proc = run(repo, sys.executable, "-m", "pre_commit", "run", "--all-files", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert fake_llm.calls() == 0
    # the hook itself, given every tracked governed file (what --all-files passes)
    proc = run_cascade("hook", *layout["docs"], cwd=repo, env=fake_model(fake_llm))
    assert proc.returncode == 0 and fake_llm.calls() == 0


def test_hook_skips_a_document_back_at_its_baseline_blob(repo, fake_llm):
    layout = LAYOUTS["madr"]
    adopt(repo, layout)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "adopt cascade", "--no-verify")
    doc = layout["docs"][0]
    original = (repo / doc).read_text()
    (repo / doc).write_text("# changed\n")
    git(repo, "commit", "-qam", "unreviewed change", "--no-verify")
    (repo / doc).write_text(original)  # back to the adopted text
    git(repo, "add", doc)
    proc = run_cascade("hook", doc, cwd=repo, env=fake_model(fake_llm))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert fake_llm.calls() == 0


@pytest.mark.parametrize("name", ["adr-tools", "madr"])
def test_superseding_a_legacy_adr_is_not_a_change_to_review(repo, fake_llm, name):
    """`cascade new --supersedes` on an adopted ADR without a ledger: only its status
    changes, so the hook asks no one and check still vouches for it; its content changing
    afterwards is caught."""
    layout = LAYOUTS[name]
    adopt(repo, layout)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "adopt cascade", "--no-verify")
    doc = layout["docs"][0]
    text = (repo / doc).read_text()
    (repo / doc).write_text(text.replace("Accepted", "Superseded by [9. Other](0009-other.md)"))
    git(repo, "add", doc)
    proc = run_cascade("hook", doc, cwd=repo, env=fake_model(fake_llm))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert fake_llm.calls() == 0
    git(repo, "commit", "-qm", "supersede", "--no-verify")
    for args in ((), ("--from-ref", "HEAD~1")):
        proc = run_cascade("check", *args, cwd=repo)
        assert proc.returncode == 0, (args, proc.stdout)
    (repo / doc).write_text((repo / doc).read_text().replace("We do", "We now do"))
    git(repo, "commit", "-qam", "reword", "--no-verify")
    proc = run_cascade("check", cwd=repo)
    assert proc.returncode == 1 and f"{doc}:1: governed by rule" in proc.stdout


def test_layout_nested_areas_and_kept_files():
    files = ["docs/adr/payments/0001-a.md", "docs/adr/payments/0002-b.md", "docs/adr/infra/0001-a.md",
             "docs/adr/README.md", "docs/adr/templates/template.md", "docs/adr/0000-template.md",
             "docs/adr/infra/discussions/0001-a.discussion.md"]
    (found,) = find_layout(files, None)
    assert found.shape == "area folders"
    assert sorted(found.documents) == ["docs/adr/infra/0001-a.md", "docs/adr/payments/0001-a.md",
                                       "docs/adr/payments/0002-b.md"]


def test_nested_areas_get_one_ledger_each(repo):
    """Two areas with the same file name: {dir} keeps their ledgers apart."""
    for area in ("payments", "infra"):
        path = repo / f"docs/adr/{area}/0001-storage.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(ADR.format(title=area))
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "legacy")
    out = run_cascade("init", cwd=repo, env={"PATH": "/usr/bin:/bin"})
    assert out.returncode == 0 and "governs 2 document(s)" in out.stdout
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "adopt", "--no-verify")
    proc = run_cascade("check", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_init_keeps_an_existing_baseline(repo):
    adopt(repo, LAYOUTS["madr"])
    (repo / BASELINE).write_text("# mine\n")
    proc = run_cascade("init", cwd=repo, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0 and f"kept your {BASELINE}" in proc.stdout
    assert (repo / BASELINE).read_text() == "# mine\n"


def test_baseline_leaves_out_documents_already_under_review(repo):
    layout = LAYOUTS["madr"]
    for rel, text in layout["files"].items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    reviewed = "docs/decisions/discussions/0000-use-markdown-adrs.discussion.md"
    (repo / reviewed).parent.mkdir()
    (repo / reviewed).write_text("<!-- a ledger from an earlier cascade -->\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "legacy")
    assert run_cascade("init", cwd=repo, env={"PATH": "/usr/bin:/bin"}).returncode == 0
    assert sorted(parse((repo / BASELINE).read_text())) == ["docs/decisions/0001-use-python.md"]


def test_ledger_title_skips_front_matter():
    """MADR's template opens its front matter with a `# ...` YAML comment: not the title."""
    from cascade.base.docstatus import document_title as _title

    madr = b"---\n# These are optional elements.\nstatus: proposed\n---\n# Use Postgres\n"
    assert _title("docs/decisions/0003-use-postgres.md", madr) == "Use Postgres"
    assert _title("docs/decisions/0003-use-postgres.md", b"---\nstatus: x\n") == (
        "0003 use postgres")


# ---- the gate never goes quiet; init finds, or is told, where the ADRs are -----------------

ODH = {  # opendatahub-io/architecture-decision-records: area folders, prefixed numbers
    "architecture-decision-records/README.md": "# ADRs\n",
    "architecture-decision-records/ODH-ADR-0000-template.md": "# Title\n",
    "architecture-decision-records/ODH-ADR-0001-kserve.md": ADR.format(title="kserve"),
    "architecture-decision-records/operator/ODH-ADR-Operator-0001-manifests.md":
        ADR.format(title="manifests"),
    "architecture-decision-records/operator/ODH-ADR-Operator-0002-rbac.md":
        ADR.format(title="rbac"),
    "architecture-decision-records/data-science-pipelines/ODH-ADR-DSP-0001-argo.md":
        ADR.format(title="argo"),
    "README.md": "# Open Data Hub\n",
}
JPH = {  # joelparkerhenderson/architecture-decision-record: one folder per example ADR
    "locales/en/examples/microsoft-azure/index.md": ADR.format(title="azure"),
    "locales/en/examples/programming-languages/index.md": ADR.format(title="languages"),
    "locales/en/index.md": "# Architecture decision record\n",
    "README.md": "# ADR\n",
}


def _commit_files(repo, files):
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "legacy")


def test_init_finds_numbered_decisions_in_area_folders(repo):
    _commit_files(repo, ODH)
    out = run_cascade("init", cwd=repo, env={"PATH": "/usr/bin:/bin"}).stdout
    assert "found: ADRs in architecture-decision-records/ (area folders)" in out
    assert "governs 4 document(s)" in out  # not the README, not the 0000 template
    assert "next: commit init's files; then commit a document under " \
           "architecture-decision-records/" in out
    assert "feature-spec" not in (repo / ".ai-rules.yml").read_text()  # no docs/features/


def test_init_says_what_it_looked_for_and_takes_the_folder_it_is_given(repo):
    _commit_files(repo, JPH)
    proc = run_cascade("init", cwd=repo, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0
    assert "no ADR folder found (looked for --dir, .adr-dir, .log4brains.yml, doc/adr/, docs/adr/" \
        in proc.stdout
    assert "next: cascade init --dir PATH" in proc.stdout
    for name in (".ai-rules.yml", ".pre-commit-config.yaml", BASELINE):
        (repo / name).unlink(missing_ok=True)
    proc = run_cascade("init", "--dir", "locales/en/examples", cwd=repo,
                       env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert "named: ADRs in locales/en/examples/ (folder-per-ADR)" in proc.stdout
    assert "governs 2 document(s)" in proc.stdout
    assert "a document under locales/en/examples/ to see the panel" in proc.stdout
    proc = run_cascade("init", "--dir", "../elsewhere", cwd=repo,
                       env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2 and "--dir ../elsewhere: not a folder inside the repository" \
        in proc.stderr


def test_a_rule_added_after_init_is_reviewed_through_pre_commit(repo, fake_llm):
    """No files: filter to drift: a document of a rule added after `init` reaches the hook
    (pre-commit does not print "(no files to check) Skipped")."""
    adopt(repo, LAYOUTS["madr"])
    config = (repo / ".pre-commit-config.yaml").read_text()
    (repo / ".pre-commit-config.yaml").write_text(
        config.replace("entry: cascade ", f"entry: {sys.executable} -m cascade "))
    rules = (repo / ".ai-rules.yml").read_text()
    (repo / ".ai-rules.yml").write_text(rules.replace("rules:\n", (
        "rules:\n  - name: rfc\n    match: \"rfcs/*.md\"\n    template: feature\n"
        "    discussion: \"rfcs/discussions/{stem}.discussion.md\"\n"
        "    participants: [architect]\n"), 1))
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "adopt cascade, and a rule for RFCs", "--no-verify")
    env = {**os.environ, "CASCADE_MODEL": "openai/fake", "CASCADE_API_BASE": fake_llm.url,
           "PYTHONPATH": str(REPO)}
    assert run(repo, sys.executable, "-m", "pre_commit", "install", env=env).returncode == 0
    (repo / "rfcs").mkdir()
    (repo / "rfcs/0001-streaming.md").write_text("# Streaming\n\nWe stream.\n")
    git(repo, "add", "rfcs/0001-streaming.md")
    proc = run(repo, "git", "commit", "-qm", "an RFC", env=env)
    assert "Skipped" not in proc.stdout, proc.stdout
    assert fake_llm.calls() > 0 and (repo / "rfcs/discussions/0001-streaming.discussion.md"
                                     ).exists(), proc.stdout + proc.stderr


def test_a_files_filter_kept_from_before_is_named_by_init_and_check(repo):
    _commit_files(repo, LAYOUTS["madr"]["files"])
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n  - repo: local\n    hooks:\n      - id: cascade\n        name: cascade\n"
        "        entry: cascade hook\n        language: system\n"
        "        files: '^docs/adr/'\n")
    proc = run_cascade("init", cwd=repo, env={"PATH": "/usr/bin:/bin"})
    assert "kept your .pre-commit-config.yaml" in proc.stdout
    assert ("warning: .pre-commit-config.yaml: the cascade hook runs only for files: "
            "'^docs/adr/': it hides 2 governed document(s) now (e.g. docs/decisions/") \
        in proc.stdout
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "adopt", "--no-verify")
    doc = "docs/decisions/0003-use-kafka.md"
    (repo / doc).write_text(ADR.format(title="kafka"))
    git(repo, "add", doc)
    git(repo, "commit", "-qm", "a new ADR, never seen by the hook", "--no-verify")
    proc = run_cascade("check", cwd=repo)
    assert proc.returncode == 1
    assert f"{doc}:1: governed by rule 'adr'" in proc.stdout
    assert ("docs/decisions/discussions/0003-use-kafka.discussion.md is not committed: "
            ".pre-commit-config.yaml runs the cascade hook only for files: '^docs/adr/', "
            "which hides it: remove that filter") in proc.stdout
    (repo / ".pre-commit-config.yaml").unlink()
    git(repo, "commit", "-qam", "no config", "--no-verify")
    proc = run_cascade("check", cwd=repo)
    assert (f"is not committed: review its committed revision and commit the ledger: cascade "
            f"review {doc} && git commit -m 'Review of {doc}'") in proc.stdout


def test_the_config_checks_against_the_default_branch_of_origin(repo):
    _commit_files(repo, LAYOUTS["adr-tools"]["files"])
    git(repo, "update-ref", "refs/remotes/origin/trunk", "HEAD")
    git(repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
    assert run_cascade("init", cwd=repo, env={"PATH": "/usr/bin:/bin"}).returncode == 0
    config = (repo / ".pre-commit-config.yaml").read_text()
    assert "--from-ref origin/trunk --to-ref HEAD" in config and "origin/main" not in config


def test_list_shows_the_decisions_as_adr_list_does(repo):
    files = dict(LAYOUTS["adr-tools"]["files"])
    first = "doc/architecture/decisions/0001-record-decisions.md"
    files[first] = ("# 1. Record decisions\n\n## Status\n\nSuperseded by "
                    "[3. Use Kafka](0003-use-kafka.md)\n\n## Decision\n\nWe record.\n")
    _commit_files(repo, files)
    assert run_cascade("init", cwd=repo, env={"PATH": "/usr/bin:/bin"}).returncode == 0
    proc = run_cascade("list", cwd=repo, env={"COLUMNS": "120"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["No.", "Title", "Status", "Review", "Path"]
    rows = [line.split("  ") for line in lines[1:]]
    rows = [[c.strip() for c in row if c.strip()] for row in rows]
    assert rows == [
        ["0001", "Record decisions", "Superseded by 3. Use Kafka", "unreviewed", first],
        ["0002", "postgres", "Accepted", "unreviewed",
         "doc/architecture/decisions/0002-use-postgres.md"],
        ["0003", "kafka", "Accepted", "unreviewed",
         "doc/architecture/decisions/0003-use-kafka.md"]]  # no template, no README
    proc = run_cascade("list", "--status", "superseded", cwd=repo, env={"COLUMNS": "120"})
    assert [line.split()[0] for line in proc.stdout.splitlines()[1:]] == ["0001"]
    proc = run_cascade("list", "--status", "bogus", cwd=repo)
    assert proc.returncode == 2
    assert "--status bogus: not a status (known: accepted, changes, deprecated" in proc.stderr


# ---- the repository's own status words -----------------------------------------------------

def _odh_adr(title: str, status: str) -> str:
    return (f"# {title}\n\n|                |            |\n| -------------- | ---------- |\n"
            f"| Date           | 2024-01-01 |\n| Status         | {status} |\n"
            f"| Authors        | [a](@a) |\n\n## What\n\nWe do {title}.\n")


ODH_APPROVED = {  # most of opendatahub's ADRs say Approved for a decision taken
    "architecture-decision-records/README.md": "# ADRs\n",
    "architecture-decision-records/ODH-ADR-0000-template.md": _odh_adr("Template", "Approved"),
    "architecture-decision-records/ODH-ADR-0001-kserve.md": _odh_adr("kserve", "Approved"),
    "architecture-decision-records/operator/ODH-ADR-Operator-0001-manifests.md":
        _odh_adr("manifests", "Approved"),
    "architecture-decision-records/operator/ODH-ADR-Operator-0002-rbac.md":
        _odh_adr("rbac", "Accepted"),
    "architecture-decision-records/model-serving/ODH-ADR-MS-0001-network.md":
        _odh_adr("network", "**Approved**"),
    "architecture-decision-records/model-serving/ODH-ADR-MS-0002-cache.md":
        _odh_adr("cache", "Rejected"),
}


def test_init_writes_the_status_words_the_adrs_use_and_consensus_writes_approved(
        repo, fake_llm, monkeypatch):
    from test_hook import script

    _commit_files(repo, ODH_APPROVED)
    proc = run_cascade("init", "--plain", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "their status words: Approved (accepted), Rejected (rejected)" in proc.stdout
    rules = (repo / ".ai-rules.yml").read_text()
    assert "    status: {ready: Approved, reject: Rejected}   # at consensus, Proposed -> " \
           "Approved, as these ADRs say\n" in rules and "status: true" not in rules
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "adopt cascade", "--no-verify")
    for name, value in (("CASCADE_MODEL", "openai/fake"), ("CASCADE_API_BASE", fake_llm.url),
                        ("CASCADE_BACKOFF", "0.05"), ("PYTHONPATH", str(REPO))):
        monkeypatch.setenv(name, value)
    doc = "architecture-decision-records/operator/ODH-ADR-Operator-0003-webhooks.md"
    text = _odh_adr("webhooks", "Proposed")
    (repo / doc).write_text(text)
    script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", doc)
    landed = inproc.commit(repo)  # the hook stages the ledger and the status it moved
    assert landed.returncode == 0, landed.out
    assert f"{doc}'s status is now 'Approved'" in landed.out, landed.out
    assert (repo / doc).read_text() == text.replace("| Proposed |", "| Approved |")
    assert "| Status         | Approved |" in git(repo, "show", f"HEAD:{doc}")
    assert git(repo, "status", "--porcelain") == ""
    assert run_cascade("check", cwd=repo).returncode == 0


@pytest.mark.parametrize("statuses, words", [
    (["Approved", "Approved", "Accepted", "Rejected"], {"READY": "Approved", "REJECT": "Rejected"}),
    (["Accepted", "Approved", "Declined", "Declined"], {"READY": "Accepted", "REJECT": "Declined"}),
    (["accepted", "proposed", "rejected"], None),  # MADR: cascade's own words, in its case
    (["Proposed", "Superseded by [2. X](0002-x.md)"], None),
])
def test_status_words_are_the_most_common_of_each_kind(statuses, words):
    from cascade.config.layout import status_words

    assert status_words([_odh_adr("x", s) for s in statuses]) == words


# ---- the six shapes users already have, read as they wrote them ----------------------------
# Fixtures shaped like the public repositories (names, config files, front matter), not copies.

def _madr2(title: str, status: str = "accepted") -> str:  # log4brains' template (MADR 2)
    return (f"# {title}\n\n- Status: {status}\n- Date: 2020-10-02\n\n"
            f"## Context and Problem Statement\n\nWe need {title}.\n")


def _madr3(title: str, status: str = "accepted") -> str:
    return f"---\nstatus: {status}\ndate: 2022-11-10\n---\n# {title}\n\n## Context\n\nX.\n"


def _nygard(n: int, title: str, status: str = "Accepted") -> str:  # adr-tools' own
    return f"# {n}. {title}\n\nDate: 2016-02-12\n\n## Status\n\n{status}\n\n## Decision\n\nX.\n"


LOG4BRAINS_YML = """\
---
project:
  name: Log4brains
  tz: Europe/Paris
  adrFolder: ./docs/adr

  packages:
    - name: core
      path: ./packages/core
      adrFolder: ./packages/core/docs/adr
    - name: pwa
      path: ./packages/pwa
      adrFolder: ./packages/pwa/docs/adr
    - name: cli
      path: ./packages/cli
      adrFolder: ./packages/cli/docs/adr
"""
_L4B_PROJECT = ["20200924-use-markdown-architectural-decision-records",
                "20200925-multi-packages-architecture-in-a-monorepo-with-yarn-and-lerna",
                "20200925-use-prettier-eslint-airbnb-for-the-code-style",
                "20200926-react-nextjs-static-site-generator",
                "20200927-avoid-default-exports",
                "20201002-use-markdown-architectural-decision-records",
                "20201003-markdown-parsing-is-part-of-the-domain",
                "20201016-use-the-adr-slug-as-its-unique-id",
                "20210113-distribute-log4brains-as-a-global-npm-package"]
_L4B_PACKAGES = {"core": ["20200924-use-hexagonal-architecture", "20200925-use-explicit-di",
                          "20201016-use-awilix", "20201103-use-lunr-for-search"],
                 "pwa": ["20200926-use-the-nextjs-getstaticprops", "20201007-next-js-persistent-layout"],
                 "cli": ["20201029-use-commander", "20201103-use-ink"]}
LOG4BRAINS = {
    ".log4brains.yml": LOG4BRAINS_YML,
    "docs/adr/README.md": "# Architecture Decision Records\n\nlog4brains adr new\n",
    "docs/adr/index.md": "<!-- This file is the homepage of your decision log. -->\n# Hello\n",
    "docs/adr/template.md": _madr2("[short title of solved problem and solution]",
                                   "[draft | proposed | rejected | accepted | deprecated]"),
    **{f"docs/adr/{slug}.md": _madr2(slug[9:].replace("-", " ").capitalize()) for slug in _L4B_PROJECT},
    **{f"packages/{pkg}/docs/adr/{slug}.md": _madr2(slug[9:].replace("-", " ").capitalize())
       for pkg, slugs in _L4B_PACKAGES.items() for slug in slugs},
    "packages/core/docs/adr/README.md": "# core's ADRs\n",
    "packages/core/src/index.ts": "export {};\n",
}
ADR_TOOLS = {  # npryce/adr-tools: doc/adr, named by .adr-dir
    ".adr-dir": "doc/adr\n",
    "README.md": "# ADR Tools\n",
    **{f"doc/adr/{n:04d}-{slug}.md": _nygard(n, slug.replace("-", " ").capitalize())
       for n, slug in enumerate(["record-architecture-decisions", "implement-as-shell-scripts",
                                 "single-command-with-subcommands", "markdown-format",
                                 "help-comments", "packaging-and-distribution-in-other-version-"
                                 "control-repositories", "invoke-adr-config-executable-to-get-"
                                 "configuration", "use-iso-8601-format-for-dates",
                                 "help-scripts"], start=1)},
}
MADR_REPO = {  # adr/madr: docs/decisions, front matter status:
    "docs/decisions/adr-template.md": "---\nstatus: \"{proposed | rejected | accepted}\"\n---\n"
                                      "# {short title}\n",
    "docs/decisions/index.md": "---\nnav_order: 1\n---\n# Decisions\n",
    **{f"docs/decisions/{n:04d}-{slug}.md": _madr3(slug.replace("-", " ").capitalize())
       for n, slug in enumerate(["use-markdown-architectural-decision-records",
                                 "use-crlf-as-line-endings", "do-not-emphasize-list-items",
                                 "use-yaml-front-matter-for-meta-data",
                                 "use-dashes-in-filenames", "use-link-titles"])},
}
_ODH_AREAS = {"": ("ODH-ADR", ["kserve-modelmesh", "component-versioning", "notebooks"]),
              "operator": ("ODH-ADR-Operator", ["manifests", "rbac", "webhooks"]),
              "data-science-pipelines": ("ODH-ADR-DSP", ["argo", "caching"]),
              "model-serving": ("ODH-ADR-MS", ["network", "cache"]),
              "distributed-workloads": ("ODH-ADR-DW", ["kuberay", "codeflare"]),
              "explainability": ("ODH-ADR-TrustyAI", ["guardrails"])}
OPENDATAHUB = {  # opendatahub-io/architecture-decision-records: areas, prefixed numbers
    "README.md": "# Open Data Hub ADRs\n",
    "architecture-decision-records/README.md": "# ADRs\n",
    "architecture-decision-records/ODH-ADR-0000-template.md": _odh_adr("Template", "Approved"),
    **{(f"architecture-decision-records/{area}/" if area else "architecture-decision-records/")
       + f"{prefix}-{n:04d}-{slug}.md": _odh_adr(slug.capitalize(), "Approved")
       for area, (prefix, slugs) in _ODH_AREAS.items() for n, slug in enumerate(slugs, start=1)},
}
_JPH_EXAMPLES = ["amazon-web-services", "css-framework", "environment-variable-configuration",
                 "metrics-monitors-alerts", "microsoft-azure", "monorepo-vs-multirepo",
                 "programming-languages", "secrets-storage", "timestamp-format"]
JOELPARKERHENDERSON = {  # joelparkerhenderson/architecture-decision-record: folder per ADR
    "README.md": "# Architecture decision record (ADR)\n",
    "locales/en/index.md": "# Architecture decision record (ADR)\n",
    "locales/en/templates/decision-record-template-by-michael-nygard/index.md": "# Title\n",
    **{f"locales/en/examples/{slug}/index.md": ADR.format(title=slug.replace("-", " "))
       for slug in _JPH_EXAMPLES},
}
RUST_RFCS = {  # rust-lang/rfcs: text/NNNN-slug.md, about 650 of them, no status section
    "README.md": "# Rust RFCs\n",
    "0000-template.md": "- Feature Name: (fill me in)\n\n# Summary\n",
    **{f"text/{n:04d}-rfc-number-{n}.md": f"- Feature Name: `f{n}`\n- Start Date: 2014-03-11\n"
       f"- RFC PR: [rust-lang/rfcs#{n}]\n\n# Summary\n\nRFC {n}.\n" for n in range(1, 651)},
    "text/3113-rfc-number-3113/diagram.svg": "<svg/>\n",
}


def _docs_under(files: dict, folders: tuple[str, ...], leaf: str | None = None) -> list[str]:
    """The decision records of a fixture: its Markdown files under ``folders``, but for the
    READMEs, the templates and a folder's own ``index.md``."""
    out = []
    for path in files:
        folder = next((f for f in folders if path.startswith(f + "/")), None)
        name = path.rsplit("/", 1)[-1]
        if (folder is None or not path.endswith(".md") or name == "README.md"
                or "template" in path or path == f"{folder}/index.md"
                or (leaf is not None and name != leaf)):
            continue
        out.append(path)
    return sorted(out)


SIX = {  # name: (files, init's arguments, the documents to govern)
    "log4brains": (LOG4BRAINS, (), _docs_under(LOG4BRAINS, (
        "docs/adr", "packages/core/docs/adr", "packages/pwa/docs/adr", "packages/cli/docs/adr"))),
    "adr-tools": (ADR_TOOLS, (), _docs_under(ADR_TOOLS, ("doc/adr",))),
    "madr": (MADR_REPO, (), _docs_under(MADR_REPO, ("docs/decisions",))),
    "opendatahub": (OPENDATAHUB, (), _docs_under(OPENDATAHUB, ("architecture-decision-records",))),
    "joelparkerhenderson": (JOELPARKERHENDERSON, ("--dir", "locales/en/examples"),
                            _docs_under(JOELPARKERHENDERSON, ("locales/en/examples",), "index.md")),
    "rust-rfcs": (RUST_RFCS, (), _docs_under(RUST_RFCS, ("text",))),
}
GOVERNED = {"log4brains": 17, "adr-tools": 9, "madr": 6, "opendatahub": 13,
            "joelparkerhenderson": 9, "rust-rfcs": 650}


def _governed(repo) -> list[str]:
    from cascade.base.gitio import tracked
    from cascade.config.ruleset import RuleSet

    rules = RuleSet(repo)
    return sorted(p for p in tracked(repo) if rules.governing(p) is not None)


@pytest.mark.parametrize("name", list(SIX))
def test_init_governs_every_decision_of_the_six_shapes(repo, name):
    """Each shape: init governs every decision record it has, says how many per rule, and
    nothing else (READMEs, templates, the log's home page)."""
    from inproc import cascade

    files, args, docs = SIX[name]
    _commit_files(repo, files)
    ran = cascade(repo, "init", *args, env={"PATH": "/usr/bin:/bin"})
    assert ran.returncode == 0, ran.out
    assert len(docs) == GOVERNED[name]
    assert _governed(repo) == docs
    said = sum(int(n) for n in re.findall(r"-> governs (\d+) document\(s\)", ran.stdout))
    assert said == GOVERNED[name], ran.stdout
    assert sorted(parse((repo / BASELINE).read_text())) == docs  # history stays green


def test_init_reads_log4brains_packages_and_date_names_are_numbers(repo):
    """log4brains' own repository: 8 of its 17 ADRs are its packages' (``packages[].adrFolder``
    in .log4brains.yml); init governs them, each package under its own rule."""
    from inproc import cascade

    _commit_files(repo, LOG4BRAINS)
    ran = cascade(repo, "init", env={"PATH": "/usr/bin:/bin"})
    assert "from .log4brains.yml: ADRs in docs/adr/ (flat)" in ran.stdout
    assert "from .log4brains.yml: ADRs in packages/core/docs/adr/ (flat)" in ran.stdout
    assert re.search(r"rule 'adr-core' \(\.ai-rules\.yml:\d+\): packages/core/docs/adr/\*\.md "
                     r"-> governs 4 document", ran.stdout), ran.stdout
    # without .log4brains.yml, date-named files are still numbered decisions
    assert [f.folder for f in find_layout([p for p in LOG4BRAINS if p.startswith("packages/")],
                                          None)] == [f"packages/{p}/docs/adr" for p in
                                                     ("cli", "core", "pwa")]


def test_new_and_list_take_log4brains_slugs(repo):
    from inproc import cascade

    _commit_files(repo, LOG4BRAINS)
    assert cascade(repo, "init", "--plain", env={"PATH": "/usr/bin:/bin"}).returncode == 0
    ran = cascade(repo, "list", "--format", "json")
    rows = {r["path"]: r for r in json.loads(ran.stdout)}
    assert rows["docs/adr/20201016-use-the-adr-slug-as-its-unique-id.md"]["number"] == "20201016"
    ran = cascade(repo, "new", "Use Vite", "--rule", "adr", "--supersedes",
                  "20200926-react-nextjs-static-site-generator")
    assert ran.returncode == 0, ran.out
    old = (repo / "docs/adr/20200926-react-nextjs-static-site-generator.md").read_text()
    new = next(p for p in (repo / "docs/adr").glob("*-use-vite.md"))
    assert f"- Status: superseded by [{new.stem}]({new.name})\n" in old
    ran = cascade(repo / "packages/core", "new", "Use Zod", "--rule", "adr-core", "--supersedes",
                  "core/20201016-use-awilix")
    assert ran.returncode == 0, ran.out
    assert "superseded by" in (repo / "packages/core/docs/adr/20201016-use-awilix.md").read_text()
    ran = cascade(repo, "new", "X", "--rule", "adr", "--supersedes", "20991231-nothing")
    assert ran.returncode == 2 and "--supersedes 20991231-nothing: no document" in ran.stderr


def test_list_fits_a_terminal_and_keeps_area_prefixes(repo):
    """A status as text (not a markdown link), the number once (not again in the title), the
    area prefixes kept (opendatahub's areas each number from 0001), 80 columns."""
    from inproc import cascade

    files = dict(OPENDATAHUB)
    first = "architecture-decision-records/operator/ODH-ADR-Operator-0001-manifests.md"
    files[first] = _odh_adr("ODH-ADR-Operator-0001: Manifests in the operator", "Superseded by "
                            "[ODH-ADR-Operator-0003](ODH-ADR-Operator-0003-webhooks.md)")
    _commit_files(repo, files)
    assert cascade(repo, "init", "--plain", env={"PATH": "/usr/bin:/bin"}).returncode == 0
    ran = cascade(repo, "list", env={"COLUMNS": "80"})
    assert ran.returncode == 0, ran.out
    lines = ran.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), "\n".join(lines)
    numbers = [line.split()[0] for line in lines[1:]]
    assert "ODH-ADR-Operator-0001" in numbers and "ODH-ADR-DSP-0001" in numbers
    assert numbers.count("ODH-ADR-0001") == 1
    row = next(line for line in lines if line.startswith("ODH-ADR-Operator-0001 "))
    assert "Manifests in the operator" in row and "ODH-ADR-Operator-0001:" not in row
    assert "](" not in ran.stdout and "Superseded" in row

    ran = cascade(repo, "list", "--format", "json")
    rows = json.loads(ran.stdout)
    assert len(rows) == GOVERNED["opendatahub"]
    entry = next(r for r in rows if r["path"] == first)
    assert entry == {"number": "ODH-ADR-Operator-0001", "title": "Manifests in the operator",
                     "status": "Superseded by ODH-ADR-Operator-0003", "review": "unreviewed",
                     "superseded_by": "ODH-ADR-Operator-0003", "path": first,
                     "kind": "document"}
    ran = cascade(repo / "architecture-decision-records/operator", "list")
    assert ran.stdout.splitlines()[1].split()[0] == "ODH-ADR-Operator-0001"


def test_new_writes_a_folder_per_adr_document_as_the_folder_does(repo):
    """joelparkerhenderson's examples are ``<slug>/index.md``, unnumbered: so is a new one; a
    numbered folder-per-ADR layout (``0007-slug/index.md``) keeps its numbers."""
    from inproc import cascade

    _commit_files(repo, JOELPARKERHENDERSON)
    assert cascade(repo, "init", "--plain", "--dir", "locales/en/examples",
                   env={"PATH": "/usr/bin:/bin"}).returncode == 0
    ran = cascade(repo, "new", "Use Rust for the CLI", "--rule", "adr")
    assert ran.returncode == 0, ran.out
    doc = repo / "locales/en/examples/use-rust-for-the-cli/index.md"
    assert doc.is_file(), ran.out
    assert doc.read_text().startswith("# Use Rust for the CLI\n")
    assert (repo / "locales/en/examples/use-rust-for-the-cli/discussions/"
            "index.discussion.md").is_file()
    assert not list((repo / "locales/en/examples").glob("0001-*"))
    ran = cascade(repo, "new", "Timestamp format", "--rule", "adr")  # the name is taken
    assert ran.returncode == 2 and "already exists" in ran.stderr

    (repo / "decisions/0007-use-kafka").mkdir(parents=True)
    (repo / "decisions/0007-use-kafka/index.md").write_text(ADR.format(title="kafka"))
    rules = (repo / ".ai-rules.yml").read_text()
    (repo / ".ai-rules.yml").write_text(rules.replace("locales/en/examples", "decisions"))
    ran = cascade(repo, "new", "Use Flink", "--rule", "adr")
    assert ran.returncode == 0, ran.out
    assert (repo / "decisions/0008-use-flink/index.md").is_file()


# ---- init after init; init in a teammate's clone --------------------------------------------

def _next_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("next:")]


def test_init_dir_after_an_init_that_found_nothing_replaces_its_presets(repo):
    """The first init finds no ADR folder and advises ``cascade init --dir PATH``: run, that
    governs PATH (init's untouched presets are replaced) and records its documents in the
    baseline; no ``next:`` line names a folder no rule governs."""
    from inproc import cascade

    _commit_files(repo, JOELPARKERHENDERSON)
    first = cascade(repo, "init", env={"PATH": "/usr/bin:/bin"})
    assert "next: cascade init --dir PATH" in first.stdout
    second = cascade(repo, "init", "--dir", "locales/en/examples", env={"PATH": "/usr/bin:/bin"})
    assert second.returncode == 0, second.out
    assert _governed(repo) == SIX["joelparkerhenderson"][2]
    assert "governs 9 document(s)" in second.stdout
    assert ".ai-rules.yml (the presets init wrote, replaced: rules for locales/en/examples/)" \
        in second.stdout and "kept your .ai-rules.yml" not in second.stdout
    assert sorted(parse((repo / BASELINE).read_text())) == SIX["joelparkerhenderson"][2]
    assert "a document under locales/en/examples/ to see the panel" in second.stdout


def test_init_dir_extends_rules_a_person_edited_and_never_names_an_ungoverned_folder(repo):
    from inproc import cascade

    _commit_files(repo, JOELPARKERHENDERSON)
    assert cascade(repo, "init", env={"PATH": "/usr/bin:/bin"}).returncode == 0
    rules = repo / ".ai-rules.yml"
    mine = rules.read_text().replace("# Your own rules, for example:",
                                     "# Our RFCs will go here one day.\n# Your own rules, e.g.:")
    rules.write_text(mine)
    ran = cascade(repo, "init", "--dir", "locales/en/examples", env={"PATH": "/usr/bin:/bin"})
    assert ran.returncode == 0, ran.out
    text = rules.read_text()
    assert text.startswith(mine)  # what the person wrote stays as it was
    assert "extends: [adr, feature-spec]" in text and "locales/en/examples/*/index.md" in text
    assert _governed(repo) == SIX["joelparkerhenderson"][2]
    assert "(added rule 'adr-locales-en-examples' for locales/en/examples/)" in ran.stdout

    # rules it cannot extend (a flow sequence): it says which rule to add, and names no folder
    rules.write_text("rules: [{name: rfc, match: 'rfcs/*.md', template: feature, discussion: "
                     "'rfcs/discussions/{stem}.discussion.md', participants: [architect]}]\n")
    ran = cascade(repo, "init", "--dir", "decisions", env={"PATH": "/usr/bin:/bin"})
    assert ran.returncode == 0, ran.out
    assert "governs nothing under decisions/: add this rule to it" in ran.stdout
    assert all("decisions/" not in line and "docs/adr/" not in line
               for line in _next_lines(ran.stdout)), ran.stdout


def test_init_in_a_teammates_clone_says_what_it_did_and_nothing_else(repo, tmp_path):
    """A teammate clones a repository that adopted cascade and runs init: it registers the
    ledger merge driver in that clone, and says so; no "add the cascade hook" for a hook that
    is there, no "commit init's files" with nothing to commit."""
    from inproc import cascade

    _commit_files(repo, MADR_REPO)
    assert cascade(repo, "init", env={"PATH": "/usr/bin:/bin"}).returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "adopt cascade", "--no-verify")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    ran = cascade(clone, "init", env={"PATH": "/usr/bin:/bin"})
    assert ran.returncode == 0, ran.out
    assert ran.stdout.splitlines() == [
        "registered the ledger merge driver in this clone (git config merge.cascade-ledger.*)",
        "next: pip install pre-commit && pre-commit install"], ran.stdout
    assert git(clone, "config", "merge.cascade-ledger.driver").strip() == \
        "cascade merge-driver %O %A %B %P"
    assert git(clone, "status", "--porcelain") == ""
    again = cascade(clone, "init", "--plain", env={"PATH": "/usr/bin:/bin"})
    assert again.returncode == 0, again.out
    assert "commit init's files" not in again.stdout and "kept your" not in again.stdout
    assert "registered" not in again.stdout and "wrote .git/hooks/pre-commit" in again.stdout


@pytest.mark.parametrize("text, added", [
    ("extends: [adr]\n", True),  # no rules: a rules: block after
    ("rules:\n- name: rfc\n  match: 'rfcs/*.md'\n", True),  # items at the key's indentation
    ("rules:\n    - name: rfc\n      match: 'rfcs/*.md'\n# ours\n", True),
    ("rules:\n  - name: rfc\n    match: 'rfcs/*.md'\nextends: [adr]\n", False),  # not last
    ("rules: [{name: rfc, match: 'rfcs/*.md'}]\n", False),  # a flow sequence
    ("- a list\n", False),
])
def test_extended_rules_appends_and_never_rewrites(text, added):
    import yaml

    from cascade.config.layout import extended_rules

    found = find_layout(["decisions/0001-a.md"], None, ("decisions",))
    out = extended_rules(text, found, {"adr"})
    assert (out is not None) == added
    if added:
        assert out.startswith(text)
        names = [r["name"] for r in yaml.safe_load(out)["rules"]]
        assert names[-1] == "adr-decisions" and names.count("adr-decisions") == 1


def test_a_broken_log4brains_yml_is_named_with_its_line(repo):
    from inproc import cascade

    _commit_files(repo, {**LOG4BRAINS, ".log4brains.yml": "project:\n  adrFolder: [oops\n"})
    ran = cascade(repo, "init", env={"PATH": "/usr/bin:/bin"})
    assert ran.returncode == 2 and ".log4brains.yml:" in ran.stderr, ran.out
    assert len(ran.stderr.strip().splitlines()) == 1 and not (repo / ".ai-rules.yml").exists()


def test_init_in_a_repository_whose_rule_file_does_not_read_keeps_it_and_says_why(repo):
    """A broken .ai-rules.yml (a teammate's typo) is kept byte for byte and its error said in
    one line naming the file and line; the hooks and the merge driver are installed all the
    same (they do not depend on the rules)."""
    from inproc import cascade

    broken = "rules:\n  - name: adr\n    match: [\"docs/adr/*.md\"]\n    rounds: word\n"
    (repo / "docs/adr").mkdir(parents=True)
    (repo / "docs/adr/0001-use-sqlite.md").write_text("# Use SQLite\n")
    (repo / ".ai-rules.yml").write_text(broken)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a rule with a typo", "--no-verify")
    ran = cascade(repo, "init", "--plain", env={"PATH": "/usr/bin:/bin"})
    assert ran.returncode == 0, ran.out
    assert ("cascade: .ai-rules.yml:4: rounds must be a whole number of at least 1: "
            ".ai-rules.yml kept as it is") in ran.stdout.splitlines()
    assert (repo / ".ai-rules.yml").read_text() == broken
    assert (repo / ".git/hooks/pre-commit").is_file()
    assert git(repo, "config", "merge.cascade-ledger.driver").strip()
