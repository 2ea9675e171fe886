"""`cascade discuss` on a real terminal (tmux): the inline decision point (the proposed
panel, confirmed with Enter), one live line per step redrawn in place, and the tables after
propose and challenge printed below the steps' lines, not drawn over."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid

import pytest
from conftest import REPO
from fakellm import delayed
from test_pcs import Panel

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


class Tmux:
    def __init__(self, tmp_path) -> None:
        self.socket = f"cascade-{uuid.uuid4().hex[:8]}"
        self.tmp = tmp_path

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True,
                              text=True, check=False).stdout

    def start(self, command: str, width: int = 200) -> None:
        script = self.tmp / "session.sh"
        script.write_text(f"{command}\necho EXIT=$?\nsleep 60\n")
        self.run("new-session", "-d", "-s", "t", "-x", str(width), "-y", "80", f"bash {script}")

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "t", "-S", "-200")

    def wait_for(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared:\n{self.screen()}")

    def close(self) -> None:
        self.run("kill-server")


@pytest.fixture
def tmux(tmp_path):
    t = Tmux(tmp_path)
    yield t
    t.close()


def test_discuss_on_a_terminal(repo, fake_llm, tmux):
    panel = Panel(fake_llm)
    fake_llm.default(lambda request: delayed(panel(request), 0.3))
    env = {"CASCADE_MODEL": "openai/fake", "CASCADE_API_BASE": fake_llm.url,
           "PYTHONPATH": str(REPO), "HOME": os.environ.get("HOME", "")}
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    tmux.start(f"cd {shlex.quote(str(repo))} && env {exports} {shlex.quote(sys.executable)} "
               "-m cascade discuss 'Threat model for session tokens and authentication'")
    tmux.wait_for("Enter to start")
    tmux.run("send-keys", "-t", "t", "Enter")
    screen = tmux.wait_for("EXIT=")
    assert "EXIT=0" in screen, screen
    lines = screen.splitlines()

    def first(text: str) -> int:
        return next(i for i, line in enumerate(lines) if text in line)

    propose = first("round 1, Propose: ")
    assert "ACCEPT" not in lines[propose] and "thinking" not in lines[propose]
    assert "(0." in lines[propose] or "(1." in lines[propose]  # its result, in place
    table = first("| Participant | Position |")
    challenge = first("round 1, Challenge: ")
    assert propose < table < challenge  # the table below the step's lines, not drawn over it
    live = lines[:first("persona ")]  # above the closing table
    for step in ("Propose", "Challenge", "Confirm"):  # one line per participant, once each
        assert sum(f"round 1, {step}: " in line for line in live) == 2, screen
    assert sum("round 1, Synthesize: " in line for line in live) == 1, screen
    rows = [line for line in lines[table:challenge] if line.startswith("| AI-")]
    assert len(rows) == 2, screen  # the whole table: no row drawn over
    assert first("round 1, Confirm: ") > first("| Participant | Response | Shift |")
    assert "answered -- all 2 participants accepted the synthesis in round 1" in screen
    assert "thinking..." not in screen  # every live line ended in its result
    assert "\x1b" not in screen


def test_turn_on_a_terminal_streams_each_reply_into_its_line(repo, fake_llm, tmux, cli,
                                                             monkeypatch):
    """On a TTY the replies stream (``stream: true``): each persona's line shows its comment
    as it arrives; the ledger still gets one whole block per reply. Off a TTY nothing
    streams."""
    import json

    from fakellm import streamed

    from cascade import Discussion

    text = ("The token expiry must be short and every login must rotate the refresh token, "
            "or a stolen token lives for a month.")
    fake_llm.default(streamed(json.dumps({"comment": text, "vote": "CHANGES"}), 0.15))
    assert cli("new", "Session tokens", "--template", "feature")[0] == 0
    env = {"CASCADE_MODEL": "openai/fake", "CASCADE_API_BASE": fake_llm.url,
           "PYTHONPATH": str(REPO), "HOME": os.environ.get("HOME", "")}
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    tmux.start(f"cd {shlex.quote(str(repo))} && env {exports} {shlex.quote(sys.executable)} "
               "-m cascade turn discussions/session-tokens.discussion.md")
    screen = tmux.wait_for("...The token expiry")  # a line showing the comment so far
    line = next(x for x in screen.splitlines() if "...The token expiry" in x)
    assert "a month." not in line  # still arriving
    screen = tmux.wait_for("EXIT=")
    assert "EXIT=0" in screen and "\x1b" not in screen
    assert all(r.body.get("stream") is True for r in fake_llm.chat_requests)
    d = Discussion.load(repo / "discussions/session-tokens.discussion.md")
    assert [c.body for c in d.comments] == [text] * 3 and {c.vote for c in d.comments} == {
        "CHANGES"}
    before = len(fake_llm.chat_requests)
    for key in ("CASCADE_MODEL", "CASCADE_API_BASE"):
        monkeypatch.setenv(key, env[key])
    code, out, err = cli("turn", "discussions/session-tokens.discussion.md", "@architect")
    assert code == 0 and len(fake_llm.chat_requests) == before + 1, out + err
    assert "stream" not in fake_llm.chat_requests[before].body  # no terminal: no stream


def test_live_lines_on_a_narrow_terminal_are_not_repeated(repo, fake_llm, tmux):
    """On an 80-column terminal each participant's live line is rewritten in place: it never
    wraps, so no earlier drawing of it is left in the scrollback."""
    panel = Panel(fake_llm)
    fake_llm.default(lambda request: delayed(panel(request), 0.6))
    env = {"CASCADE_MODEL": "openai/fake", "CASCADE_API_BASE": fake_llm.url,
           "PYTHONPATH": str(REPO), "HOME": os.environ.get("HOME", "")}
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    tmux.start(f"cd {shlex.quote(str(repo))} && env {exports} {shlex.quote(sys.executable)} "
               "-m cascade discuss 'Threat model for session tokens' --protocol pcs "
               "--participants architect,security,pragmatist", width=80)
    screen = tmux.wait_for("EXIT=")
    assert "EXIT=0" in screen, screen
    lines = screen.splitlines()
    live = lines[:next(i for i, line in enumerate(lines) if line.startswith("persona "))]
    for step in ("Propose", "Challenge", "Confirm"):
        for name in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
            assert sum(f"round 1, {step}: {name}" in line for line in live) == 1, screen
    assert "thinking..." not in screen
