"""The command provider, asked through the model seam (cascade.turns.chain.complete) as the
runner asks it: real programs -- the `llm` CLI with its llm-echo debug plugin, which echoes
back exactly the prompt and the system prompt it was given, and small Python scripts each
test writes -- run as a declared provider's ``command:``."""
from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from msgspec.structs import replace

from cascade.config.providers import load_file
from cascade.turns.chain import ModelError, complete
from cascade.turns.providers.command import EARLIER_END, EARLIER_REPLY
from cascade.turns.settings import Settings

LLM = Path(sys.executable).parent / "llm"
PY = shlex.quote(sys.executable)
SYSTEM = "You are AI-Architect, a systems architect."
USER = "Review this ADR:\n\n# Use SQLite\n\nWe will store events in SQLite."
MESSAGES = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]

# Prints what it was given: its arguments, standard input, working directory, environment.
PROBE = """\
import json, os, sys
print(json.dumps({"argv": sys.argv[1:], "stdin": sys.stdin.read(), "cwd": os.getcwd(),
                  "var": os.environ.get("PROBE_VAR")}))
"""


@pytest.fixture(autouse=True)
def llm_home(tmp_path, monkeypatch) -> Path:
    """llm's own configuration and log, per test (never the user's)."""
    home = tmp_path / "llm-home"
    home.mkdir()
    monkeypatch.setenv("LLM_USER_PATH", str(home))
    return home


def declared(tmp_path: Path, text: str, **settings) -> Settings:
    """Settings with the providers of ``text`` (a providers.yml) declared."""
    path = tmp_path / "providers.yml"
    path.write_text(text)
    base = replace(Settings.from_env(), retries=0, backoff=0.01, timeout=20)
    return replace(base, providers=load_file(path), **settings)


def script(tmp_path: Path, name: str, source: str) -> str:
    """A Python script written into ``tmp_path``: its command line."""
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return f"{PY} {shlex.quote(str(path))}"


def ask(name: str, settings: Settings, messages=MESSAGES, **kw):
    return asyncio.run(complete(name, messages, settings, **kw))


def echoed(tmp_path: Path, messages=MESSAGES, system: str = "") -> dict:
    """What llm-echo says llm was given, asked as a declared ``llm -m echo``."""
    settings = declared(tmp_path, f"providers:\n  - name: echo\n    command: {LLM} -m echo\n"
                        + (f"    system: {system}\n" if system else ""))
    done = ask("echo", settings, messages)
    assert (done.model, done.tokens_known, done.prompt_tokens, done.cost) == (
        "echo", False, 0, None)
    return json.loads(done.text)


def test_llm_gets_the_prompt_on_stdin_and_the_system_prompt_by_its_flag(tmp_path):
    said = echoed(tmp_path)
    assert said["system"] == SYSTEM  # llm's --system: known by the program's name
    assert said["prompt"] == USER + "\n"  # the user's message, whole, on standard input


def test_system_stdin_puts_the_system_prompt_first_on_stdin(tmp_path):
    said = echoed(tmp_path, system="stdin")
    assert said["system"] == ""
    assert said["prompt"] == f"{SYSTEM}\n\n{USER}\n"


def test_a_repair_re_ask_is_written_out_on_stdin(tmp_path):
    """A re-ask holds the first reply and the request about it: on standard input the
    earlier reply is marked as the model's own, the request follows."""
    again = [*MESSAGES, {"role": "assistant", "content": "I think it is fine."},
             {"role": "user", "content": "Reply again with only the JSON object."}]
    said = echoed(tmp_path, again)
    assert said["system"] == SYSTEM
    assert said["prompt"] == (f"{USER}\n\n{EARLIER_REPLY}\nI think it is fine.\n{EARLIER_END}"
                              "\n\nReply again with only the JSON object.\n")


def test_words_are_expanded_not_shelled_and_the_environment_is_the_user_s(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("PROBE_VAR", "from the user's environment")
    monkeypatch.setenv("PROBE_DIR", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "probe.py").write_text(PROBE)
    settings = declared(tmp_path, f"""\
providers:
  - name: probe
    command: {PY} $PROBE_DIR/probe.py "two words" ~/x '$PROBE_VAR' ';' '|' '*'
    system: --system-prompt
""")
    got = json.loads(ask("probe", settings).text)
    assert got["argv"] == ["two words", f"{Path.home()}/x", "from the user's environment",
                           ";", "|", "*", "--system-prompt", SYSTEM]
    assert got["stdin"] == USER + "\n"
    assert (got["cwd"], got["var"]) == (str(tmp_path), "from the user's environment")


def test_the_reply_streams_as_the_program_writes_it(tmp_path):
    command = script(tmp_path, "slow", """\
import sys, time
for part in ('{"comment": ', '"one, ', 'two", ', '"vote": "READY"}'):
    sys.stdout.write(part); sys.stdout.flush(); time.sleep(0.3)
""")
    settings = declared(tmp_path, f"providers:\n  - name: slow\n    command: {command}\n")
    seen: list[tuple[float, str]] = []
    done = ask("slow", settings, on_text=lambda piece: seen.append((time.monotonic(), piece)))
    assert "".join(piece for _, piece in seen) == done.text == \
        '{"comment": "one, two", "vote": "READY"}'
    assert len(seen) >= 3 and seen[-1][0] - seen[0][0] > 0.5  # pieces, as they came


def test_a_command_that_is_not_installed_is_said_in_one_line_and_not_retried(tmp_path):
    settings = declared(tmp_path, "providers:\n  - name: ghost\n    command: "
                        "no-such-program-here --flag\n", retries=3)
    retried: list = []
    with pytest.raises(ModelError) as failed:
        ask("ghost", settings, on_retry=lambda *a: retried.append(a))
    assert str(failed.value) == "command not found: no-such-program-here (provider ghost)"
    assert retried == []


COUNTING = """\
import pathlib, sys
runs = pathlib.Path(sys.argv[1])
runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
sys.stderr.write("working...\\n\\x1b[31mError: the service is overloaded, try later\\x1b[0m\\n")
sys.exit(int(sys.argv[2]))
"""


@pytest.mark.parametrize("code, runs", [(1, 3), (127, 1), (126, 1)])
def test_a_non_zero_exit_is_retried_but_126_and_127(tmp_path, code, runs):
    counted = tmp_path / "runs"
    command = script(tmp_path, "flaky", COUNTING) + f" {counted} {code}"
    settings = declared(tmp_path, f"providers:\n  - name: flaky\n    command: {command}\n",
                        retries=2)
    with pytest.raises(ModelError) as failed:
        ask("flaky", settings)
    assert len(counted.read_text()) == runs
    shown = " ".join(command.split())[:57] + "..."
    assert str(failed.value) == (f"command flaky ({shown}) exited {code}: Error: the service "
                                 "is overloaded, try later")  # the last line, no colour codes


def test_an_error_that_says_not_found_is_not_retried(tmp_path):
    command = script(tmp_path, "nomodel", "import sys\nsys.stderr.write('Error: model "
                     "sonnet-9 not found\\n')\nsys.exit(1)\n")
    settings = declared(tmp_path, f"providers:\n  - name: c\n    command: {command}\n",
                        retries=2)
    retried: list = []
    with pytest.raises(ModelError, match="exited 1: Error: model sonnet-9 not found$"):
        ask("c", settings, on_retry=lambda *a: retried.append(a))
    assert retried == []


def test_a_long_error_line_is_cut_to_one_short_line(tmp_path):
    command = script(tmp_path, "loud", "import sys\nsys.stderr.write('E' * 5000 + '\\n')\n"
                     "sys.exit(2)\n")
    settings = declared(tmp_path, f"providers:\n  - name: loud\n    command: {command}\n")
    with pytest.raises(ModelError) as failed:
        ask("loud", settings)
    message = str(failed.value)
    assert "\n" not in message and message.endswith("E" * 157 + "...")


def _gone(pid: int) -> bool:
    """No such process, or only its exit status left (a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def _wait_gone(pids: list[int], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if all(_gone(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_hang_is_killed_at_the_timeout_with_every_process_it_started(tmp_path):
    pids = tmp_path / "pids"
    command = script(tmp_path, "hang", f"""\
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
open({str(pids)!r}, "w").write(f"{{os.getpid()}} {{child.pid}}")
time.sleep(120)
""")
    settings = declared(tmp_path, f"providers:\n  - name: stuck\n    command: {command}\n",
                        timeout=1.5)
    started = time.monotonic()
    with pytest.raises(ModelError) as failed:
        ask("stuck", settings)
    took = time.monotonic() - started
    assert str(failed.value).endswith("timed out after 1.5s") and "command stuck (" in \
        str(failed.value)
    assert took < 5, took
    both = [int(p) for p in pids.read_text().split()]
    assert _wait_gone(both), [Path(f"/proc/{p}/stat").read_text() for p in both
                              if not _gone(p)]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_output_past_the_limit_is_refused_in_one_line_memory_flat(tmp_path):
    pid = tmp_path / "pid"
    command = script(tmp_path, "flood", f"""\
import os, sys
open({str(pid)!r}, "w").write(str(os.getpid()))
block = b"x" * 65536
while True:
    sys.stdout.buffer.write(block)
""")
    settings = declared(tmp_path, f"providers:\n  - name: flood\n    command: {command}\n",
                        max_reply_bytes=2 * 1024 * 1024, timeout=60)
    shown: list[str] = []
    started = time.monotonic()
    tracemalloc.start()
    try:
        with pytest.raises(ModelError) as failed:
            ask("flood", settings, on_text=shown.append)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 10  # refused at once, not at the 60 s timeout
    assert str(failed.value).endswith("wrote more than 2 MiB: not read "
                                      "(CASCADE_MAX_REPLY_BYTES sets the limit)")
    assert peak < 16 * 1024 * 1024, peak  # what was read, about twice, not what was sent
    assert _wait_gone([int(pid.read_text())])


def test_a_failing_command_falls_back_to_the_next_declared_provider(tmp_path):
    failing = script(tmp_path, "down", "import sys\nsys.stderr.write('no login\\n')\n"
                     "sys.exit(1)\n")
    settings = declared(tmp_path, f"""\
providers:
  - name: first
    command: {failing}
  - name: echo
    command: {LLM} -m echo
default: first
fallback: [echo]
""")
    done = ask("first", settings)
    assert done.model == "echo" and json.loads(done.text)["system"] == SYSTEM


def test_an_empty_command_line_in_the_providers_file_is_refused_at_its_line(tmp_path):
    from cascade.base.errors import CascadeError

    path = tmp_path / "providers.yml"
    path.write_text("providers:\n  - name: a\n    command: \"claude -p 'sonnet\"\n")
    with pytest.raises(CascadeError) as bad:
        load_file(path)
    assert str(bad.value) == (f"{path}:3: provider 'a': 'command' must be a command line "
                              "whose quotes close (No closing quotation)")


def test_the_environment_reaches_the_command_unchanged(tmp_path, monkeypatch):
    """A subscription login lives in the environment and the home folder: both reach the
    program as they are (CASCADE_API_KEY included: the command is the user's own)."""
    monkeypatch.setenv("CASCADE_API_KEY", "sk-for-the-gateway-only-1234")
    monkeypatch.setenv("SOME_LOGIN_STATE", "on")
    command = script(tmp_path, "env", "import json, os\nprint(json.dumps(dict(os.environ)))\n")
    settings = declared(tmp_path, f"providers:\n  - name: env\n    command: {command}\n")
    env = json.loads(ask("env", settings).text.replace("[REDACTED:configured-credential]",
                                                        "redacted"))
    assert env["SOME_LOGIN_STATE"] == "on" and env["HOME"] == os.environ["HOME"]
    assert env["CASCADE_API_KEY"] == "redacted"  # it reached the program; not the reply


def test_the_commit_s_temporary_index_does_not_reach_the_command(tmp_path, monkeypatch):
    """In a hook git names the commit's index in GIT_INDEX_FILE (.git/index.lock under
    `commit -a`): a program that runs git (an agent's `git status` refreshes the index it
    reads) must not write the index being committed. It sees the repository as the person
    does; every other variable reaches it."""
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / ".git" / "index.lock"))
    monkeypatch.setenv("SOME_LOGIN_STATE", "on")
    command = script(tmp_path, "env", "import json, os\nprint(json.dumps(dict(os.environ)))\n")
    settings = declared(tmp_path, f"providers:\n  - name: env\n    command: {command}\n")
    env = json.loads(ask("env", settings).text)
    assert "GIT_INDEX_FILE" not in env and env["SOME_LOGIN_STATE"] == "on"
    assert os.environ["GIT_INDEX_FILE"]  # the hook's own process keeps reading the commit's


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_cancelled_call_kills_the_command_with_every_process_it_started(tmp_path):
    """Ctrl-C (the run's calls cancelled) leaves no program of a command running."""
    pids = tmp_path / "pids"
    command = script(tmp_path, "hang", f"""\
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
open({str(pids)!r}, "w").write(f"{{os.getpid()}} {{child.pid}}")
time.sleep(120)
""")
    settings = declared(tmp_path, f"providers:\n  - name: stuck\n    command: {command}\n",
                        timeout=60)

    async def cancelled() -> None:
        call = asyncio.ensure_future(complete("stuck", MESSAGES, settings))
        while not pids.exists() or len(pids.read_text().split()) < 2:
            await asyncio.sleep(0.05)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(asyncio.wait_for(cancelled(), 30))
    assert _wait_gone([int(p) for p in pids.read_text().split()])
