"""The git-native loop: real repositories, real `git commit` with the hook installed (the
pre-commit framework with a `repo: local` hook, and the plain git hooks), a real HTTP model
endpoint on 127.0.0.1."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import inproc
import pytest
from conftest import REPO, git
from fakellm import delayed

from cascade import Discussion

DOC = "docs/adr/0001-use-sqlite.md"
LEDGER = "docs/adr/discussions/0001-use-sqlite.discussion.md"
PANEL = ("AI-Architect", "AI-Security", "AI-Pragmatist")
RULES = """\
rules:
  - name: adr
    match: "docs/adr/*.md"
    template: adr
    discussion: "docs/adr/discussions/{stem}.discussion.md"
    participants: [architect, security, pragmatist]
    consensus: {threshold_ready: 0.67, threshold_reject: 0.01, human_required: false}
"""


def reply(comment: str, vote: str | None) -> str:
    """A reply; a blocking vote names a finding, as the prompt asks (one without any is asked
    for its findings once more)."""
    said = {"comment": comment, "vote": vote}
    if vote in ("CHANGES", "REJECT"):
        said["findings"] = [{"severity": "major", "where": "-", "what": comment[:60]}]
    return json.dumps(said)


def match(name: str) -> str:
    return f"Reply as {name} "


def run(repo: Path, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(args), cwd=repo, capture_output=True, text=True, timeout=300)
    if check and proc.returncode:
        raise AssertionError(proc.stdout + proc.stderr)
    return proc


def commit(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = run(repo, "git", "commit", "-m", "change", *args)
    proc.out = proc.stdout + proc.stderr  # git shows hook output on stderr
    return proc


@pytest.fixture
def loop_repo(repo, fake_llm, monkeypatch):
    return start_loop(repo, fake_llm.url, monkeypatch)


def start_loop(repo: Path, api_base: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``repo`` with the rules committed and an ADR written (not staged), the panel's model
    the fake endpoint at ``api_base``."""
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", api_base)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    (repo / ".ai-rules.yml").write_text(RULES)
    (repo / "README.md").write_text("# Project\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "start")
    (repo / "docs/adr").mkdir(parents=True)
    (repo / DOC).write_text("# Use SQLite\n\nWe will store events in SQLite.\n")
    return repo


def install_pre_commit(repo: Path) -> None:
    (repo / ".pre-commit-config.yaml").write_text(f"""\
repos:
  - repo: local
    hooks:
      - id: cascade
        name: cascade
        entry: {sys.executable} -m cascade hook
        language: system
        require_serial: true
""")
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-qm", "pre-commit config")
    run(repo, sys.executable, "-m", "pre_commit", "install", check=True)


def install_plain(repo: Path) -> None:
    """`cascade init --plain` (in this process: the hooks it writes run this interpreter)."""
    proc = inproc.cascade(repo, "init", "--plain")
    assert proc.returncode == 0, proc.stderr
    if (repo / ".gitattributes").exists():  # the ledger merge driver's attribute: committed
        git(repo, "add", ".gitattributes")  # and nothing else a test has staged, no hook run:
        git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-qm", "ledger merge driver",
            "--", ".gitattributes")


def script(fake, votes: tuple[str | None, ...], text: str = "review") -> None:
    for name, vote in zip(PANEL, votes):
        fake.script(match(name), reply(f"{name}: {text}.", vote))


@pytest.mark.parametrize("installer", [install_pre_commit, install_plain], ids=["pre-commit", "plain"])
def test_the_loop_end_to_end(loop_repo, fake_llm, installer):
    repo = loop_repo
    installer(repo)
    script(fake_llm, ("CHANGES", "CHANGES", "READY"))
    git(repo, "add", DOC)

    first = commit(repo)  # blocked, with three reviews, the ledger staged
    assert first.returncode == 1, first.stdout + first.stderr
    assert fake_llm.calls() == 3
    d = Discussion.load(repo / LEDGER, root=repo)
    assert sorted(c.author for c in d.comments) == sorted(PANEL)
    assert d.source_revision == git(repo, "rev-parse", f":{DOC}").strip()
    assert git(repo, "diff", "--name-only").strip() == ""  # what the hook wrote is staged
    assert f"1/3 READY, needs 67%: read the replies (staged: git diff --cached {LEDGER})" \
        in first.out
    # the ledger holds the discussion: its header, the document's path and title, no skeleton
    opening = (repo / LEDGER).read_text().split("\n---\n", 1)[0]
    assert f"Document under review: `{DOC}`" in opening and "# ADR: Use SQLite" in opening
    assert "PROPOSED" not in opening and "[" not in opening.split("-->", 1)[-1], opening
    assert "pre-commit rolls these appends back" not in first.out  # nothing was left unstaged

    second = commit(repo)  # no new input: still blocked, no call
    assert second.returncode == 1
    assert fake_llm.calls() == 3
    assert "1/3 READY, needs 67%" in second.out

    # The author answers security alone: only security is asked (one call), and its READY
    # brings 2 of 3, which meets 0.67: the commit lands with the reply in it.
    assert inproc.cascade(repo, "comment", LEDGER,  # the command in process, the commit git's
                          "Added a backup plan. @security does this address your concern?"
                          ).returncode == 0
    script(fake_llm, ("READY", "READY", "READY"), "better")
    git(repo, "add", LEDGER)
    third = commit(repo)
    assert third.returncode == 0, third.out
    assert fake_llm.calls() == 4
    assert Discussion.load(repo / LEDGER, root=repo).votes == {
        "AI-Architect": "CHANGES", "AI-Security": "READY", "AI-Pragmatist": "READY"}
    assert git(repo, "status", "--porcelain").strip() == ""
    assert git(repo, "show", "--stat", "--format=", "HEAD").count("|") == 2  # doc and ledger
    if installer is install_plain:
        message = git(repo, "log", "-1", "--format=%B")
        assert f"Cascade-Consensus: {LEDGER} READY (2/3 READY)" in message


def index_bytes(repo: Path, name: str = "index") -> bytes:
    return (repo / ".git" / name).read_bytes()


def hook(repo: Path, *files: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cascade", "hook", *files], cwd=repo,
                          capture_output=True, text=True, env={**os.environ, **(env or {})})


def test_hook_never_writes_the_index(loop_repo, fake_llm):
    repo = loop_repo
    script(fake_llm, ("CHANGES", "READY", "READY"))
    git(repo, "add", DOC)
    before = index_bytes(repo)
    proc = hook(repo, DOC)
    assert proc.returncode == 1
    assert index_bytes(repo) == before
    git(repo, "add", LEDGER)
    before = index_bytes(repo)
    proc = hook(repo, DOC, LEDGER)
    assert proc.returncode == 0, proc.stdout
    assert index_bytes(repo) == before


@pytest.mark.usefixtures("hook_stages_nothing")  # its hints, followed step by step
@pytest.mark.parametrize("mode", ["commit -a", "commit <path>"])
def test_staged_content_comes_from_the_index_git_uses(loop_repo, fake_llm, mode):
    repo = loop_repo
    install_plain(repo)
    git(repo, "add", DOC)
    git(repo, "commit", "-qm", "adr", "--no-verify")
    (repo / DOC).write_text("# Use SQLite\n\nRevised: WAL mode and nightly backups.\n")
    script(fake_llm, ("READY", "READY", "READY"))
    proc = commit(repo, "-a") if mode == "commit -a" else commit(repo, DOC)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    d = Discussion.load(repo / LEDGER, root=repo)
    assert d.source_revision == git(repo, "hash-object", DOC).strip()  # the revised text
    assert git(repo, "diff", "--cached", "--name-only").strip() == ""  # nothing was staged
    sent = fake_llm.chat_requests[0].text
    assert "Revised: WAL mode" in sent
    # The hint is the exact next command for this form of commit; followed, it commits the
    # revised document and its ledger together (a bare `git add <ledger>` then `git commit`
    # landed a ledger-only commit under the document's message).
    hint = {"commit -a": f"git add {LEDGER} && git commit -a",
            "commit <path>": f"git add {LEDGER} && git commit {DOC} {LEDGER}"}[mode]
    assert f"reply, then {hint}" in proc.out, proc.out
    args = hint.split("&& git commit", 1)[1].split()
    git(repo, "add", LEDGER)
    again = commit(repo, *args)
    assert again.returncode == 0, again.out  # three READY votes for this revision
    changed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == sorted([DOC, LEDGER])


def test_unstaged_edit_in_the_ledger_survives(loop_repo, fake_llm):
    """pre-commit stashes an unstaged edit; our appended text conflicts with it and pre-commit
    rolls our text back. The user's edit must survive, and the rerun must cost nothing."""
    repo = loop_repo
    install_pre_commit(repo)
    script(fake_llm, ("CHANGES", "CHANGES", "READY"))
    git(repo, "add", DOC)
    commit(repo)
    git(repo, "add", LEDGER)
    assert inproc.cascade(repo, "comment", LEDGER, "Please look again, all of you.").returncode == 0
    git(repo, "add", LEDGER)
    mine = "\nMy private notes, not staged yet.\n"
    with open(repo / LEDGER, "a") as fh:
        fh.write(mine)
    calls = fake_llm.calls()
    proc = commit(repo)
    assert proc.returncode != 0
    assert "Rolling back fixes" in proc.out  # pre-commit discarded what the hook appended
    assert (repo / LEDGER).read_text().endswith(mine)  # the user's edit is intact
    assert fake_llm.calls() - calls == 3
    # The same commit again: the same prompts, so every reply comes from the cache.
    proc = commit(repo)
    assert proc.returncode != 0
    assert fake_llm.calls() - calls == 3
    assert (repo / LEDGER).read_text().endswith(mine)
    assert "stage or stash" in proc.out


def test_nested_rule_file_overrides_same_named_rule(loop_repo, fake_llm):
    repo = loop_repo
    (repo / "docs/adr/.ai-rules.yml").write_text(
        "rules:\n  - name: adr\n    match: '*.md'\n    template: adr\n"
        "    discussion: 'reviews/{stem}.discussion.md'\n    participants: [security]\n")
    fake_llm.script(match("AI-Security"), reply("fine", "READY"))
    git(repo, "add", DOC, "docs/adr/.ai-rules.yml")
    proc = hook(repo, DOC)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    d = Discussion.load(repo / "docs/adr/reviews/0001-use-sqlite.discussion.md", root=repo)
    assert [c.author for c in d.comments] == ["AI-Security"]
    assert not (repo / LEDGER).exists()


def test_ungoverned_commit_is_a_no_op_without_heavy_imports(loop_repo):
    repo = loop_repo
    (repo / "notes.txt").write_text("hello\n")
    git(repo, "add", "notes.txt")
    probe = ("import sys; from cascade.main import main; rc = main(['hook', 'notes.txt']); "
             "print(rc, 'litellm' in sys.modules, 'jinja2' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True)
    assert proc.stdout.split() == ["0", "False", "False"], proc.stderr


@pytest.mark.parametrize("rules, message, line", [
    ("rules:\n  - name: adr\n    match: 'docs/adr/*.md'\n    discussion: '../outside/{stem}.md'\n",
     "must stay inside the repository", 4),
    ("rules:\n  - name: adr\n    match: 'docs/adr/*.md'\n    colour: red\n", "unknown rule key 'colour'", 4),
    ("rules:\n  - name: adr\n    match: [unclosed\n", "invalid YAML", 3),
    ("extends: nope\n", "unknown rule preset 'nope'", 1),
    ("rules:\n  - name: adr\n    match: 'docs/adr/*.md'\n    consensus:\n"
     "      persona_votes: sometimes\n", "persona_votes must be counted or advisory", 5),
    ("rules:\n  - name: adr\n    match: 'docs/adr/*.md'\n    discussion: '{nope}.md'\n",
     "unknown placeholder {nope}", 4),
    ("rules:\n  - name: adr\n    match: 'docs/adr/*.md'\n    template: nope\n",
     "rule 'adr': unknown discussion template 'nope'", 4),
    ("rules:\n  - name: adr\n    match: 'docs/adr/*.md'\n    participants: [nobody]\n",
     "rule 'adr': unknown persona 'nobody'", 4),
])
def test_bad_rules_name_file_and_line(loop_repo, rules, message, line):
    repo = loop_repo
    (repo / ".ai-rules.yml").write_text(rules)
    git(repo, "add", DOC)
    before = sorted(p.name for p in repo.rglob("*") if ".git" not in p.parts)
    proc = hook(repo, DOC)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip() == proc.stderr.strip().splitlines()[0]
    assert proc.stderr.startswith(f"cascade: .ai-rules.yml:{line}: "), proc.stderr
    assert message in proc.stderr
    assert sorted(p.name for p in repo.rglob("*") if ".git" not in p.parts) == before


def test_extends_bundled_preset_and_on_consensus(loop_repo, fake_llm):
    repo = loop_repo
    (repo / ".ai-rules.yml").write_text(
        "extends: adr\nrules:\n  - name: adr\n    match: 'docs/adr/*.md'\n    template: adr\n"
        "    discussion: 'docs/adr/discussions/{stem}.discussion.md'\n"
        "    participants: [security]\n"
        "    on_consensus: {template: feature-spec, path: 'docs/features/{stem}.md'}\n")
    fake_llm.script(match("AI-Security"), reply("fine", "READY"))
    git(repo, "add", DOC)
    assert hook(repo, DOC).returncode == 1
    git(repo, "add", LEDGER)
    proc = hook(repo, DOC, LEDGER)
    assert proc.returncode == 0, proc.stdout
    spec = repo / "docs/features/0001-use-sqlite.md"
    assert spec.exists() and "Follows from: `docs/adr/0001-use-sqlite.md`" in spec.read_text()
    assert "created docs/features/0001-use-sqlite.md" in proc.stdout


def test_init_writes_starters_and_keeps_existing(repo, cli):
    code, out, _ = cli("init")
    assert code == 0
    assert "extends: [adr, feature-spec]" in (repo / ".ai-rules.yml").read_text()
    assert "id: cascade" in (repo / ".pre-commit-config.yaml").read_text()
    (repo / ".ai-rules.yml").write_text("# mine\n")
    code, out, _ = cli("init")
    assert "kept your .ai-rules.yml" in out
    assert (repo / ".ai-rules.yml").read_text() == "# mine\n"


def test_init_plain_refuses_to_replace_a_foreign_hook(repo, cli):
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "pre-commit").write_text("#!/bin/sh\necho mine\n")
    code, _, err = cli("init", "--plain")
    assert code == 2 and "already installed" in err
    assert (hooks / "pre-commit").read_text() == "#!/bin/sh\necho mine\n"


def test_staged_ledger_without_rule_is_gated(loop_repo, fake_llm):
    repo = loop_repo
    assert inproc.cascade(repo, "new", "Loose idea", "--protocol", "review", "--participants",
                          "security").returncode == 0
    fake_llm.script(match("AI-Security"), reply("no", "CHANGES"))
    git(repo, "add", "discussions/loose-idea.discussion.md")
    proc = hook(repo, "discussions/loose-idea.discussion.md")
    assert proc.returncode == 1
    assert fake_llm.calls() == 1


def test_two_hook_runs_never_write_one_ledger_at_once(loop_repo, fake_llm):
    """The second run waits for the first, then finds nobody pending: three reviews, not six."""
    repo = loop_repo
    for name in PANEL:
        fake_llm.script(match(name), delayed(reply("slow review", "READY"), 1.0))
    git(repo, "add", DOC)
    cmd = [sys.executable, "-m", "cascade", "hook", DOC]
    first = subprocess.Popen(cmd, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    second = subprocess.Popen(cmd, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
    outs = [p.communicate(timeout=120)[0] for p in (first, second)]
    assert first.returncode == 1 and second.returncode == 1, outs
    d = Discussion.load(repo / LEDGER, root=repo)
    assert sorted(c.author for c in d.comments) == sorted(PANEL)
    assert fake_llm.calls() == 3


@pytest.mark.slow
@pytest.mark.packaging  # out of the default run (pyproject's addopts); .ci/run runs it after
def test_pre_commit_try_repo_in_a_fresh_repository(loop_repo, fake_llm, tmp_path):
    """The packaging test: pre-commit installs this repository as a hook repo (a real pip install
    into pre-commit's own environment) and runs the `cascade` hook from .pre-commit-hooks.yaml.
    It downloads and installs every dependency (~30 s to ~2 min): run it with
    `pytest -m packaging`."""
    repo = loop_repo
    script(fake_llm, ("CHANGES", "CHANGES", "READY"))
    git(repo, "add", DOC)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    env.pop("PYTHONPATH", None)  # the hook must run from what pre-commit installed
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "cascade",
                           "--files", DOC], cwd=repo, capture_output=True, text=True, env=env,
                          timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert f"1/3 READY, needs 67%: read the replies (staged: git diff --cached {LEDGER})" in out
    assert LEDGER in git(repo, "diff", "--cached", "--name-only").split()  # staged, as pre-commit
    d = Discussion.load(repo / LEDGER, root=repo)
    assert sorted(c.author for c in d.comments) == sorted(PANEL)


def test_autocrlf_checkouts_pass_the_gate(loop_repo, fake_llm):
    """With core.autocrlf (Git for Windows' default) a ledger checked out with CRLF line ends
    would never equal its staged text; init's `text eol=lf` attribute keeps ledgers LF."""
    repo = loop_repo
    install_plain(repo)
    git(repo, "config", "core.autocrlf", "true")
    script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    git(repo, "rm", "-q", "--cached", LEDGER)  # a fresh checkout of the ledger, autocrlf on
    (repo / LEDGER).unlink()
    git(repo, "checkout", "HEAD", "--", LEDGER)
    assert b"\r\n" not in (repo / LEDGER).read_bytes()
    (repo / DOC).write_text("# Use SQLite\n\nWe will store events in SQLite, with WAL.\n")
    script(fake_llm, ("READY", "READY", "READY"), "again")
    again = commit(repo, "-a")
    assert again.returncode == 0, again.out
    assert git(repo, "status", "--porcelain").strip() == ""
