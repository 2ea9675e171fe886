"""Operating-system errors (file too large, disk full, permission denied, not a directory, ...)
are one line, ``cascade: <file>: <reason>``, exit 1 (2 for a configuration file), no
traceback, and the ledger is as it was or holds whole blocks only.

Real processes and real limits, no mocks: ``ulimit -f`` (bash counts 1024-byte blocks) makes a
write past the limit fail with EFBIG, as a full disk fails with ENOSPC; Python ignores
SIGXFSZ, so the process sees the error instead of being killed. The write that crosses the
limit is always cascade's own (the ledger, the summary, the cache), never a git command's.
A limit or a closed stdout needs a process of its own; the setup commands and the errors a
folder or a file gives (a refusing folder, a file where a folder should be) run the command
in this process (tests/inproc.py), which prints what the process would.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import inproc
from conftest import REPO

from cascade.base.errors import is_config_path, os_error_line
from cascade.ledger.parse import parse

LEDGER = "discussions/title.discussion.md"
PANEL = ("AI-Architect", "AI-Security", "AI-Pragmatist")
KIB = 1024
IS_ROOT = os.geteuid() == 0


def limited(*args: str, cwd: Path, kib: int, env: dict[str, str] | None = None,
            ) -> subprocess.CompletedProcess[str]:
    """``python -m cascade ARGS`` with files limited to ``kib`` KiB (``ulimit -f``)."""
    full_env = {**os.environ, **(env or {})}
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    return subprocess.run(["bash", "-c", f'ulimit -f {kib} && exec "$0" -m cascade "$@"',
                           sys.executable, *args],
                          cwd=cwd, env=full_env, capture_output=True, text=True, timeout=120,
                          check=False)


def ok(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = inproc.cascade(cwd, *args, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def leftovers(folder: Path) -> list[str]:
    """Temp files an atomic write would leave behind: ``.<name>.*.tmp``."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def one_line(proc: subprocess.CompletedProcess[str], expected: str) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr == expected + "\n", proc.stderr


def reply(comment: str, vote: str | None, **extra: str) -> str:
    return json.dumps({"comment": comment, "vote": vote, **extra})


def match(name: str) -> str:
    return f"Reply as {name} "


@pytest.fixture
def model_env(fake_llm) -> dict[str, str]:
    return {"CASCADE_MODEL": "openai/fake", "CASCADE_API_BASE": fake_llm.url,
            "CASCADE_BACKOFF": "0.05", "CASCADE_TIMEOUT": "10",
            "CASCADE_REPLY_TOKENS": "32768"}  # room for a 50 KiB comment, uncut


# ---- file too large: the ledger write crosses the limit ------------------------------------

def test_file_too_large_leaves_the_ledger_as_it_was(repo):
    ok("new", "Title", cwd=repo)
    ok("comment", LEDGER, "A first comment.", "--author", "Dana", cwd=repo)
    before = (repo / LEDGER).read_bytes()
    big = "x" * (100 * KIB)  # one argument may hold 128 KiB; the ledger would exceed 64 KiB
    proc = limited("comment", LEDGER, big, "--author", "Dana", cwd=repo, kib=64)
    assert proc.returncode == 1
    one_line(proc, f"cascade: {LEDGER}: File too large")
    assert (repo / LEDGER).read_bytes() == before
    assert leftovers(repo / "discussions") == []


KILLED_MIDWAY = """
import os, sys, time
from cascade.main import entry
def stop(src, dst):  # the temp file is written whole; the process dies before the rename
    print("written", flush=True)
    time.sleep(600)
os.replace = stop
sys.argv = ["cascade", *sys.argv[1:]]
entry()
"""


def test_a_write_killed_before_its_rename_leaves_no_temp_file_after_the_next(repo):
    ok("new", "Title", cwd=repo)
    before = (repo / LEDGER).read_bytes()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", KILLED_MIDWAY, "comment", LEDGER,
                             "Lost to a SIGKILL.", "--author", "Dana"], cwd=repo, env=env,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "written\n"
    finally:
        proc.kill()  # SIGKILL: no finally, no cleanup in the process
        proc.wait()
    stale = leftovers(repo / "discussions")
    assert len(stale) == 1 and stale[0].startswith(f".title.discussion.md.{proc.pid}.")
    assert (repo / LEDGER).read_bytes() == before
    ok("comment", LEDGER, "Written after it.", "--author", "Dana", cwd=repo)
    assert leftovers(repo / "discussions") == []  # the next write of the ledger removed it
    text = (repo / LEDGER).read_text()
    assert "Written after it." in text and "Lost to a SIGKILL." not in text


def test_a_live_writer_s_temp_file_is_left_alone(tmp_path):
    from cascade.base.atomic import atomic_write
    target = tmp_path / "ledger.md"
    mine = tmp_path / f".ledger.md.{os.getpid()}.abc.tmp"  # this process runs
    other = tmp_path / ".ledger.md.notapid.tmp"  # not of the form: not ours to judge
    for p in (mine, other):
        p.write_text("in flight")
    atomic_write(target, b"x")
    assert mine.exists() and other.exists() and target.read_bytes() == b"x"


def test_file_too_large_in_a_turn_writes_whole_blocks_only(repo, fake_llm, model_env):
    ok("new", "Title", cwd=repo)
    ok("comment", LEDGER, "p" * (60 * KIB), "--author", "Dana", cwd=repo)  # a 60 KiB ledger
    before = (repo / LEDGER).read_bytes()
    small = {name: f"{name} is fine with it." for name in PANEL[1:]}
    for name, text in small.items():
        fake_llm.script(match(name), reply(text, None))
    # 50 KiB: its cache entry fits under 100 KiB, the ledger with it does not.
    fake_llm.script(match("AI-Architect"), reply("a" * (50 * KIB), None))
    proc = limited("turn", LEDGER, cwd=repo, kib=100, env=model_env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    one_line(proc, f"cascade: {LEDGER}: File too large")
    after = (repo / LEDGER).read_bytes()
    assert after.startswith(before)
    added = parse(after.decode()).comments[len(parse(before.decode()).comments):]
    assert all(c.author in small and c.body == small[c.author] for c in added), added
    assert leftovers(repo / "discussions") == []


def test_every_write_of_a_turn_failing_is_still_one_line(repo, fake_llm, model_env):
    """Three concurrent replies, none of which fits: one line, not one traceback per task."""
    ok("new", "Title", cwd=repo)
    ok("comment", LEDGER, "p" * (60 * KIB), "--author", "Dana", cwd=repo)
    before = (repo / LEDGER).read_bytes()
    for name in PANEL:
        fake_llm.script(match(name), reply(name[0].lower() * (50 * KIB), None))
    proc = limited("turn", LEDGER, cwd=repo, kib=100, env=model_env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    one_line(proc, f"cascade: {LEDGER}: File too large")
    assert (repo / LEDGER).read_bytes() == before
    assert leftovers(repo / "discussions") == []


def test_file_too_large_for_the_summary(repo):
    ok("new", "Title", cwd=repo)
    ok("comment", LEDGER, "Q: " + "why " * (20 * KIB), "--author", "Dana", cwd=repo)
    proc = limited("summary", LEDGER, cwd=repo, kib=16)
    assert proc.returncode == 1
    one_line(proc, "cascade: discussions/title.discussion.sum.md: File too large")
    assert not (repo / "discussions/title.discussion.sum.md").exists()
    assert leftovers(repo / "discussions") == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [("personas", "list"), ("status",), ("new", "Another")])
def test_output_to_a_full_disk(repo, args):
    ok("new", "Title", cwd=repo)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # as users run it
    env["PYTHONPATH"] = str(REPO)
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "cascade", *args], cwd=repo, env=env,
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=120,
                              check=False)
    assert proc.returncode == 1
    one_line(proc, "cascade: No space left on device")  # stdout has no name to give


# ---- a folder that refuses writes, a path that is no folder or no file ---------------------

@pytest.fixture
def refusing(tmp_path):
    """Make a folder refuse new files: chmod 0o555 (a user), or the immutable attribute
    (root, whom permissions do not stop). Yields the reason the system gives."""
    done: list[tuple[str, Path]] = []

    def refuse(folder: Path, how: str) -> str:
        if how == "chmod":
            if IS_ROOT:
                pytest.skip("root ignores permissions (the immutable case covers root)")
            folder.chmod(0o555)
            done.append((how, folder))
            return "Permission denied"
        if not IS_ROOT or not shutil.which("chattr"):
            pytest.skip("chattr +i needs root and chattr")
        if subprocess.run(["chattr", "+i", str(folder)], capture_output=True,
                          check=False).returncode:
            pytest.skip("this file system has no immutable attribute")
        done.append((how, folder))
        return "Operation not permitted"

    yield refuse
    for how, folder in done:
        if how == "chmod":
            folder.chmod(0o755)
        else:
            subprocess.run(["chattr", "-i", str(folder)], check=True)


@pytest.mark.parametrize("how", ["chmod", "immutable"])
def test_a_folder_that_refuses_writes(repo, refusing, how):
    ok("new", "Title", cwd=repo)
    before = (repo / LEDGER).read_bytes()
    reason = refusing(repo / "discussions", how)
    proc = inproc.cascade(repo, "comment", LEDGER, "More.", "--author", "Dana")
    assert proc.returncode == 1
    one_line(proc, f"cascade: {LEDGER}: {reason}")
    assert (repo / LEDGER).read_bytes() == before
    assert leftovers(repo / "discussions") == []


def test_a_file_where_a_folder_should_be(repo):
    (repo / "notes").write_text("a file, not a folder\n")
    proc = inproc.cascade(repo, "new", "Title", "-o", "notes/sub/title.discussion.md")
    assert proc.returncode == 1
    one_line(proc, "cascade: notes/sub: Not a directory")
    assert (repo / "notes").read_text() == "a file, not a folder\n"


def test_a_folder_where_the_summary_should_be(repo):
    ok("new", "Title", cwd=repo)
    (repo / "discussions/title.discussion.sum.md").mkdir()
    proc = inproc.cascade(repo, "summary", LEDGER)
    assert proc.returncode == 1
    one_line(proc, "cascade: discussions/title.discussion.sum.md: Is a directory")
    assert leftovers(repo / "discussions") == []


# ---- configuration files: exit 2, the file named ------------------------------------------

def test_a_persona_file_that_is_a_folder_is_a_configuration_error(repo):
    ok("new", "Title", cwd=repo)
    (repo / ".cascade/personas/broken.yml").mkdir(parents=True)
    proc = inproc.cascade(repo, "comment", LEDGER, "More.", "--author", "Dana")
    assert proc.returncode == 2
    one_line(proc, "cascade: .cascade/personas/broken.yml: is a directory, not a file")


def test_a_rule_file_that_is_a_folder_is_a_configuration_error(repo):
    """Not "no rules": every governed document would pass unreviewed."""
    (repo / "README.md").write_text("# Project\n")
    (repo / ".ai-rules.yml").mkdir()
    proc = inproc.cascade(repo, "hook", "README.md")
    assert proc.returncode == 2
    one_line(proc, "cascade: .ai-rules.yml: is not a file: a rule file must be a regular file")


@pytest.mark.skipif(IS_ROOT, reason="root reads any file")
def test_an_unreadable_rule_file_is_a_configuration_error(repo):
    (repo / "README.md").write_text("# Project\n")
    rules = repo / ".ai-rules.yml"
    rules.write_text("rules: []\n")
    rules.chmod(0)
    try:
        proc = inproc.cascade(repo, "hook", "README.md")
    finally:
        rules.chmod(0o644)
    assert proc.returncode == 2
    one_line(proc, "cascade: .ai-rules.yml: cannot read: Permission denied")


@pytest.mark.skipif(not IS_ROOT or not shutil.which("chattr"), reason="chattr +i needs root")
def test_writing_a_configuration_file_that_fails_is_exit_2(repo):
    subprocess.run(["chattr", "+i", str(repo)], check=True)
    try:
        proc = inproc.cascade(repo, "init", "--plain")
    finally:
        subprocess.run(["chattr", "-i", str(repo)], check=True)
    assert proc.returncode == 2
    one_line(proc, "cascade: .ai-rules.yml: Operation not permitted")
    assert not (repo / ".ai-rules.yml").exists()


# ---- the reply cache is an optimisation: failing to write it fails nothing -----------------

@pytest.mark.parametrize("how", ["not-a-directory", "file-too-large"])
def test_a_cache_that_cannot_be_written_does_not_fail_the_turn(repo, fake_llm, model_env, how):
    ok("new", "Title", cwd=repo)
    before = (repo / LEDGER).read_bytes()
    env = dict(model_env)
    if how == "not-a-directory":
        (repo / "cachefile").write_text("not a folder\n")
        env["CASCADE_CACHE_DIR"] = str(repo / "cachefile/replies")
        padding, reason = "", "Not a directory"
    else:
        padding, reason = "z" * (80 * KIB), "File too large"  # cached, never in the ledger
    for name in PANEL:
        fake_llm.script(match(name), reply(f"{name} agrees.", None, padding=padding))
    proc = limited("turn", LEDGER, cwd=repo, kib=64, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [warning] = proc.stderr.splitlines()  # once, however many replies were not cached
    assert warning.startswith("cascade: warning: reply cache not written: "), warning
    assert warning.endswith(f": {reason} (the same prompt will be asked again)"), warning
    after = (repo / LEDGER).read_bytes()
    assert after.startswith(before)
    assert sorted(c.author for c in parse(after.decode()).comments) == sorted(PANEL)
    assert fake_llm.calls() == 3


def test_the_cache_is_never_written_through_a_link(repo, fake_llm, model_env, tmp_path):
    ok("new", "Title", cwd=repo)
    cache, outside = tmp_path / "cache", tmp_path / "outside"
    cache.mkdir()
    outside.mkdir()
    for i in range(256):  # whatever the key, its folder is a link out
        (cache / f"{i:02x}").symlink_to(outside, target_is_directory=True)
    for name in PANEL:
        fake_llm.script(match(name), reply(f"{name} agrees.", None))
    proc = inproc.cascade(repo, "turn", LEDGER,
                          env={**model_env, "CASCADE_CACHE_DIR": str(cache)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [warning] = proc.stderr.splitlines()
    assert "reply cache not written: " in warning and "a symbolic link, not followed" in warning
    assert list(outside.iterdir()) == []


# ---- the message itself --------------------------------------------------------------------

def test_the_line_names_the_file_relative_to_the_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = OSError(28, os.strerror(28), str(tmp_path / "d" / "x.md"))
    assert os_error_line(err) == f"d{os.sep}x.md: No space left on device"
    assert os_error_line(OSError(28, os.strerror(28))) == "No space left on device"


@pytest.mark.parametrize("path, config", [
    (".ai-rules.yml", True), ("docs/.ai-rules.yml", True), (".cascade/personas/a.yml", True),
    (".cascade/rules/x.yaml", True), ("discussions/a.discussion.md", False),
    (".git/cascade/replies/ab/abc.json", False), ("cascade/x.yml", False),
])
def test_configuration_files(path, config):
    assert is_config_path(path) is config


def test_a_waiver_that_would_pass_the_file_size_limit_leaves_the_ledger_as_it_was(repo):
    """`cascade comment --waive` writes as every comment does: whole, or not at all."""
    ok("new", "Title", cwd=repo)
    ok("comment", LEDGER, "CONCERN: the events table grows forever", "--author", "Dana",
       cwd=repo)  # F1
    before = (repo / LEDGER).read_bytes()
    proc = limited("comment", LEDGER, "x" * (100 * KIB), "--waive", "F1", "--author", "Dana",
                   cwd=repo, kib=64)
    assert proc.returncode == 1
    one_line(proc, f"cascade: {LEDGER}: File too large")
    assert (repo / LEDGER).read_bytes() == before
    assert leftovers(repo / "discussions") == []


def test_a_site_that_does_not_fit_the_disk_is_one_line(repo):
    """`cascade site` past the file size limit (as a full disk fails): one line naming the
    page it could not write, exit 1, no traceback, no temp file left."""
    pytest.importorskip("nh3")
    proc = limited("site", "-o", "out", cwd=repo, kib=1)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cascade: out/") and "File too large" in lines[0]
    assert not (repo / "out").exists() or leftovers(repo / "out") == []
