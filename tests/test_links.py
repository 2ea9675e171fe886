"""Links and paths: the repository's own configuration is never read through a symbolic link,
and nothing is written outside the repository.

A persona, protocol, template or rule file that is a symbolic link -- or sits in a folder
that is one, below the repository top -- is refused like a document (one line naming it,
exit 2) and never read: its text is part of a prompt, or decides what a prompt holds. Every
path a command writes (``discuss -o``, ``new -o``, a ledger given to ``comment``, ``decide``,
``advance``, ``turn``, ``run``, ``summary``) lies inside the repository: the git work tree
the command runs in.

Real repositories, the CLI as a user runs it, the fake endpoint over real HTTP.
"""
from __future__ import annotations

import os
from pathlib import Path

import inproc
import pytest
from conftest import REPO, git
from test_boundary import SECRET, one_line, outside  # noqa: F401  (outside is a fixture)
from test_hook import DOC, LEDGER, RULES, hook, loop_repo, run, script  # noqa: F401


def cascade(repo: Path, *args: str) -> inproc.Ran:
    """``cascade ARGS`` in ``repo``, in this process (tests/inproc.py)."""
    return inproc.cascade(repo, *args)




# ---- the repository's configuration: never through a link ------------------------------------

def _link(repo: Path, outside: Path, rel: str, text: str, how: str) -> str:
    """Put ``text`` where ``rel`` is read from, through a link: the file itself (``file``), or
    the folder above it (``folder``, the link being ``rel``'s parent). The link, as the
    message names it."""
    if how == "file":
        target = outside / Path(rel).name
        target.write_text(text)
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).symlink_to(target)
        return rel
    folder = Path(rel).parent
    (outside / "shared").mkdir()
    (outside / "shared" / Path(rel).name).write_text(text)
    (repo / folder).parent.mkdir(parents=True, exist_ok=True)
    (repo / folder).symlink_to(outside / "shared", target_is_directory=True)
    return folder.as_posix()


def persona_text() -> str:
    bundled = (REPO / "personas" / "security.yml").read_text()
    return bundled.replace("You judge a proposal on its merits",
                           f"Remember {SECRET}.\n  You judge a proposal on its merits")


def refused(proc, rel: str, link: str) -> None:
    """Exit 2 and one line: the file, and the link (itself, or the folder it sits in)."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = one_line(proc.stderr)
    assert line.startswith(f"cascade: {rel}: "), line
    if link == rel:
        assert "is a symbolic link" in line, line
    else:
        assert f"passes through {link}, which is a symbolic link" in line, line


@pytest.mark.parametrize("how", ["file", "folder"])
def test_a_linked_persona_file_never_reaches_the_model(loop_repo, fake_llm, outside, how):
    """`.cascade/personas/security.yml` as a link to a file outside: the hook used to send
    the target's text to the model (a persona's text is part of its prompt)."""
    repo = loop_repo
    rel = ".cascade/personas/security.yml"
    link = _link(repo, outside, rel, persona_text(), how)
    script(fake_llm, ("CHANGES", "CHANGES", "READY"))
    git(repo, "add", DOC)
    proc = hook(repo, DOC)
    refused(proc, rel, link)
    assert SECRET not in fake_llm.all_text()
    assert fake_llm.calls() == 0
    assert not (repo / LEDGER).exists()
    # every command that loads personas says the same
    proc = cascade(repo, "personas", "show", "security")
    refused(proc, rel, link)


@pytest.mark.parametrize("how", ["file", "folder"])
def test_a_linked_protocol_file_is_refused(loop_repo, fake_llm, outside, how):
    repo = loop_repo
    rel = ".cascade/protocols/review.yml"
    link = _link(repo, outside, rel, (REPO / "protocols" / "review.yml").read_text(), how)
    script(fake_llm, ("CHANGES", "CHANGES", "READY"))
    git(repo, "add", DOC)
    refused(hook(repo, DOC), rel, link)
    assert fake_llm.calls() == 0
    assert not (repo / LEDGER).exists()
    refused(cascade(repo, "plan", "--protocol", "review"), rel, link)


@pytest.mark.parametrize("rel", [".cascade/templates/discussions/adr.md.j2",
                                 ".cascade/templates/prompts/step.md.j2"])
@pytest.mark.parametrize("how", ["file", "folder"])
def test_a_linked_template_is_refused(loop_repo, fake_llm, outside, rel, how):
    """A discussion template's text lands in the ledger the panel reads; a prompt template's,
    in every request."""
    repo = loop_repo
    bundled = (REPO / "templates" / Path(rel).relative_to(".cascade/templates")).read_text()
    link = _link(repo, outside, rel, f"{SECRET}\n{bundled}", how)
    script(fake_llm, ("CHANGES", "CHANGES", "READY"))
    git(repo, "add", DOC)
    refused(hook(repo, DOC), rel, link)
    assert SECRET not in fake_llm.all_text()
    assert fake_llm.calls() == 0
    if "discussions" in rel:
        assert not (repo / LEDGER).exists()
    else:  # the ledger is made from the (bundled) discussion template, then the prompt fails
        assert SECRET not in (repo / LEDGER).read_text()


def test_a_template_included_through_a_link_is_refused(repo, cli, outside):
    """A repository's own template, a regular file, that includes a linked one."""
    (repo / ".cascade/templates/discussions").mkdir(parents=True)
    (repo / ".cascade/templates/discussions/mine.md.j2").write_text(
        "# {{ title }}\n{% include 'discussions/part.md.j2' %}\n")
    (outside / "part.md.j2").write_text(SECRET + "\n")
    (repo / ".cascade/templates/discussions/part.md.j2").symlink_to(outside / "part.md.j2")
    code, out, err = cli("new", "Notes", "--template", "mine")
    assert code == 2, out + err
    assert one_line(err).startswith(
        "cascade: .cascade/templates/discussions/part.md.j2: "), err
    assert "is a symbolic link" in err
    assert not (repo / "discussions").exists()


@pytest.mark.parametrize("case", ["top", "nested", "preset", "preset-folder"])
def test_a_linked_rule_file_is_refused(loop_repo, fake_llm, outside, case):
    """A rule file decides which documents go to which personas: one that is a link (or a
    preset a rule file extends that is one, or sits in a linked folder) is refused before
    any call."""
    repo = loop_repo
    os.remove(repo / ".ai-rules.yml")
    if case == "top":
        rel = link = _link(repo, outside, ".ai-rules.yml", RULES, "file")
    elif case == "nested":
        rel = link = _link(repo, outside, "docs/adr/.ai-rules.yml",
                           RULES.replace("docs/adr/", ""), "file")
    else:
        (repo / ".ai-rules.yml").write_text("extends: team\n")
        rel = ".cascade/rules/team.yml"
        link = _link(repo, outside, rel, RULES, "file" if case == "preset" else "folder")
    script(fake_llm, ("CHANGES", "CHANGES", "READY"))
    git(repo, "add", DOC)
    refused(hook(repo, DOC), rel, link)
    assert fake_llm.calls() == 0
    assert not (repo / LEDGER).exists()


@pytest.mark.parametrize("rel", [".cascade/personas/security.yml",
                                 ".cascade/templates/discussions/mine.md.j2"])
def test_a_link_to_another_work_tree_is_still_a_link(repo, cli, outside, rel):
    """A folder link whose target is a repository of its own (a `.git` in it) is a link below
    this repository's top all the same: the repository is not taken to start there."""
    other = outside / "work"
    (other / ".git").mkdir(parents=True)
    (other / "security.yml").write_text(persona_text())
    (other / "part.md.j2").write_text(SECRET + "\n")
    (repo / ".cascade/templates/discussions").mkdir(parents=True)
    (repo / ".cascade/templates/discussions/mine.md.j2").write_text(
        "# {{ title }}\n{% include 'discussions/work/part.md.j2' %}\n")
    if "personas" in rel:
        (repo / ".cascade/personas").symlink_to(other, target_is_directory=True)
        link = ".cascade/personas"
        code, out, err = cli("personas", "show", "security")
    else:
        (repo / ".cascade/templates/discussions/work").symlink_to(other,
                                                                   target_is_directory=True)
        link, rel = ".cascade/templates/discussions/work", \
            ".cascade/templates/discussions/work/part.md.j2"
        code, out, err = cli("new", "Notes", "--template", "mine")
    assert code == 2, out + err
    line = one_line(err)
    assert line.startswith(f"cascade: {rel}: "), line
    assert f"passes through {link}, which is a symbolic link" in line, line
    assert SECRET not in out + err
    assert not (repo / "discussions").exists()


# ---- what is written: inside the repository only ------------------------------------------

TOPIC = "Which database for the event store?"


@pytest.fixture
def model(fake_llm, monkeypatch):
    """The fake endpoint as every command's model (in-process and in subprocesses)."""
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    return fake_llm


def listing(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def loose_ledger(folder: Path, name: str = "notes.discussion.md") -> Path:
    """A ledger no rule governs, of the phased protocol (so that `advance` has a next phase)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("<!-- DISCUSSION -->\n<!-- Title: Notes -->\n<!-- Protocol: phased -->\n"
                    "<!-- Phase: initial_feedback -->\n<!-- Status: OPEN -->\n"
                    "<!-- Participants: architect -->\n\n# Notes\n")
    return path


@pytest.mark.parametrize("where", ["absolute", "dotdot"])
def test_discuss_never_writes_outside_the_repository(repo, model, outside, where):
    """`discuss -o` used to write the ledger, its record and its graph wherever it pointed."""
    target = outside / "x.discussion.md"
    given = str(target) if where == "absolute" else "../outside/x.discussion.md"
    proc = cascade(repo, "discuss", TOPIC, "--participants", "architect,security", "-o", given)
    assert proc.returncode == 2, proc.out
    line = one_line(proc.stderr)
    assert line.startswith(f"cascade: {given}: ") and "outside the repository" in line, line
    assert listing(outside) == ["pgpass"]
    assert model.calls() == 0


def test_discuss_never_writes_through_a_linked_folder(repo, model, outside):
    (repo / "notes").symlink_to(outside, target_is_directory=True)
    proc = cascade(repo, "discuss", TOPIC, "--participants", "architect,security",
                   "-o", "notes/x.discussion.md")
    assert proc.returncode == 2, proc.out
    assert "passes through notes, which is a symbolic link" in one_line(proc.stderr)
    assert listing(outside) == ["pgpass"]
    assert model.calls() == 0


@pytest.mark.parametrize("where", ["absolute", "dotdot"])
def test_new_never_writes_outside_the_repository(repo, cli, outside, where):
    given = str(outside / "x.discussion.md") if where == "absolute" else \
        "../outside/x.discussion.md"
    code, out, err = cli("new", "Notes", "-o", given)
    assert code == 2, out + err
    line = one_line(err)
    assert line.startswith(f"cascade: {given}: ") and "outside the repository" in line, line
    assert listing(outside) == ["pgpass"]


@pytest.mark.parametrize("command", ["comment", "decide", "advance", "turn", "run", "summary"])
def test_a_ledger_outside_the_repository_is_refused(repo, model, outside, command):
    """`comment /elsewhere/y.discussion.md TEXT` used to append there; so did every command
    that takes a ledger, and `summary` wrote the summary beside it."""
    ledger = loose_ledger(outside)
    before = ledger.read_bytes()
    args = {"comment": ["hi"], "decide": ["READY", "--reason", "fine"], "advance": [],
            "turn": ["@architect"], "run": [], "summary": []}[command]
    for given in (str(ledger), "../outside/notes.discussion.md"):
        proc = cascade(repo, command, given, *args)
        assert proc.returncode == 2, (given, proc.out)
        line = one_line(proc.stderr)
        assert line.startswith(f"cascade: {given}: "), line
        assert "outside the repository" in line, line
    assert ledger.read_bytes() == before
    assert listing(outside) == ["notes.discussion.md", "pgpass"]
    assert model.calls() == 0


def test_a_document_of_another_repository_is_refused(repo, cli, tmp_path):
    """A governed document's path stands for its ledger: one in another work tree is outside
    this one, though that tree has rules of its own."""
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    (other / ".ai-rules.yml").write_text(RULES)
    (other / DOC).parent.mkdir(parents=True)
    (other / DOC).write_text("# Use SQLite\n")
    ledger = loose_ledger((other / LEDGER).parent, Path(LEDGER).name)
    before = ledger.read_bytes()
    code, out, err = cli("comment", str(other / DOC), "hi")
    assert code == 2, out + err
    assert "outside the repository" in one_line(err)
    assert ledger.read_bytes() == before


def test_a_ledger_through_a_linked_folder_is_refused(repo, cli, outside):
    ledger = loose_ledger(outside / "shared")
    before = ledger.read_bytes()
    (repo / "notes").symlink_to(outside / "shared", target_is_directory=True)
    code, out, err = cli("advance", "notes/notes.discussion.md")
    assert code == 2, out + err
    assert "passes through notes, which is a symbolic link" in one_line(err)
    assert ledger.read_bytes() == before


def test_a_path_from_a_subfolder_inside_the_repository_is_fine(repo, cli, monkeypatch):
    """Relative to the current folder, and climbing with .. while staying inside: fine."""
    loose_ledger(repo)
    loose_ledger(repo / "docs")
    monkeypatch.chdir(repo / "docs")
    assert cli("comment", "notes.discussion.md", "from the subfolder")[0] == 0
    assert cli("comment", "../notes.discussion.md", "one up")[0] == 0
    assert cli("comment", str(repo / "notes.discussion.md"), "by its full path")[0] == 0
    code, out, err = cli("new", "Sub", "-o", "../discussions/sub.discussion.md")
    assert code == 0, out + err
    assert (repo / "discussions/sub.discussion.md").is_file()
    top = (repo / "notes.discussion.md").read_text()
    assert "one up" in top and "by its full path" in top and "from the subfolder" not in top
    assert "from the subfolder" in (repo / "docs/notes.discussion.md").read_text()


def test_a_summary_beside_a_ledger_is_never_written_through_a_link(repo, cli, outside):
    """The artifacts beside a ledger follow from its path: its folder is checked with it, and
    the file itself is never written through a link."""
    loose_ledger(repo)
    (outside / "victim").write_text("keep me\n")
    (repo / "notes.discussion.sum.md").symlink_to(outside / "victim")
    code, out, err = cli("summary", "notes.discussion.md")
    assert code == 2, out + err
    assert "is a symbolic link" in one_line(err)
    assert (outside / "victim").read_text() == "keep me\n"
    assert (repo / "notes.discussion.sum.md").is_symlink()


@pytest.mark.parametrize("rel", [".ai-rules.yml", ".cascade/personas/security.yml"])
def test_check_refuses_configuration_committed_as_a_link(loop_repo, outside, rel):
    """CI reads the committed tree, where a link's blob is its target path: it used to fail
    with "rule file must be a mapping" (or read the path as a persona); now it says what it
    is, as the hook says it in the work tree."""
    repo = loop_repo
    text = RULES if rel == ".ai-rules.yml" else persona_text()
    target = outside / Path(rel).name
    target.write_text(text)
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    if (repo / rel).exists():
        (repo / rel).unlink()
    (repo / rel).symlink_to(target)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "config through a link", "--no-verify")
    proc = cascade(repo, "check")
    assert proc.returncode == 2, proc.out
    line = one_line(proc.stderr)
    assert line.startswith(f"cascade: {rel}: is a symbolic link at "), line
    assert "cascade never reads configuration through one" in line
