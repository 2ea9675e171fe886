"""The ``command`` provider: a program the developer is already logged in to (``claude -p``,
``codex exec -``, ``llm -m <model>``, ``opencode run``) asked as a declared provider's
``command:`` (cascade.config.providers) -- the prompt on its standard input, the reply on its
standard output, no shell started. How its command line is split and expanded, where the
system prompt goes, the bounds on time and size, its one-line failures and which are retried:
docs/providers.md, "Command providers". The program runs in a session of its own, so a
timeout, a reply past the bound or Ctrl-C kills it with every process it started; the chain
(cascade.turns.chain) scrubs configured credentials from its message and its reply.
"""
from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import shlex
import signal
from collections.abc import Callable
from typing import Any

from msgspec import Struct

from cascade.turns.call import Ask, Completion, ProviderFailure, Route, Target, past_limit
from cascade.turns.providers import COMMAND, Provider, register

STDIN = "stdin"
# The flag a known tool takes its system prompt with, by the program's name.
SYSTEM_FLAGS = {"claude": "--system-prompt", "llm": "--system"}
# A single argument past this goes on standard input instead (Linux refuses one over 128 KiB).
LONGEST_ARGUMENT = 100_000
CHUNK = 64 * 1024
STDERR_KEPT = 8 * 1024  # the end of standard error kept for a failure's message
SHOWN = 160  # characters of that message shown
COMMAND_SHOWN = 60  # characters of the command line shown
NOT_RETRIED = (126, 127)
REAP_SECONDS = 5.0
EARLIER_REPLY = "----- your previous reply -----"
EARLIER_END = "----- end of your previous reply -----"
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")


class Invocation(Struct, frozen=True):
    """One run of a command: its arguments (expanded), what it reads, how it is named."""

    name: str  # the provider's
    argv: tuple[str, ...]
    stdin: bytes
    shown: str  # "command claude-sonnet (claude -p --model sonnet)"


def split(command: str) -> list[str]:
    """The command line's words, each with ``$VAR`` and a leading ``~`` expanded."""
    return [os.path.expanduser(os.path.expandvars(word)) for word in shlex.split(command)]


def system_mode(target: Target, program: str) -> str:
    """How the command takes the system prompt: a flag, or ``stdin``."""
    return target.option("system") or SYSTEM_FLAGS.get(os.path.basename(program), STDIN)


def render(messages: list[dict[str, Any]]) -> tuple[str, str]:
    """(the system prompt, the turns after it): in order, an earlier reply of the model's
    marked as such."""
    system = "\n\n".join(str(m.get("content") or "") for m in messages
                         if m.get("role") == "system")
    parts: list[str] = []
    for message in messages:
        content = str(message.get("content") or "")
        if message.get("role") == "assistant":
            parts.append(f"{EARLIER_REPLY}\n{content}\n{EARLIER_END}")
        elif message.get("role") != "system":
            parts.append(content)
    return system, "\n\n".join(parts)


def invocation(target: Target, messages: list[dict[str, Any]]) -> Invocation:
    """How ``target``'s command is run for ``messages``."""
    written = " ".join(target.model.split())
    written = written if len(written) <= COMMAND_SHOWN else written[:COMMAND_SHOWN - 3] + "..."
    shown = f"command {target.name} ({written})"
    try:
        argv = split(target.model)
    except ValueError as exc:  # checked when the providers file is read; said again here
        raise ProviderFailure(f"{shown}: cannot split the command line ({exc})") from None
    if not argv:
        raise ProviderFailure(f"{shown}: an empty command line")
    mode = system_mode(target, argv[0])
    system, prompt = render(messages)
    flag = mode != STDIN and system and len(system.encode()) <= LONGEST_ARGUMENT
    if system and not flag:  # on standard input, first
        prompt = f"{system}\n\n{prompt}"
    args = [*argv, mode, system] if flag else argv
    return Invocation(target.name, tuple(args), f"{prompt}\n".encode("utf-8", "replace"), shown)


def _last_line(data: bytes) -> str:
    """The last line a program wrote on standard error, one line, terminal codes removed."""
    text = _ESCAPES.sub("", data.decode("utf-8", "replace"))
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    line = lines[-1] if lines else ""
    return line if len(line) <= SHOWN else line[:SHOWN - 3] + "..."


def exit_failure(inv: Invocation, code: int, stderr: bytes) -> ProviderFailure:
    """A command that ended with ``code`` (not 0): said in one line, retried unless it
    cannot pass."""
    said = _last_line(stderr)
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return ProviderFailure(f"{inv.shown} was killed by {name}" + (f": {said}" if said
                                                                        else ""), retryable=True)
    if not said:
        said = {126: "not executable", 127: "not found"}.get(code, "nothing on stderr")
    retry = code not in NOT_RETRIED and "not found" not in said.lower()
    return ProviderFailure(f"{inv.shown} exited {code}: {said}", retryable=retry)


async def _feed(stream: asyncio.StreamWriter, data: bytes) -> None:
    """Write the prompt and close standard input (a program that reads none: left alone)."""
    try:
        stream.write(data)
        await stream.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        stream.close()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await stream.wait_closed()


async def _tail(stream: asyncio.StreamReader) -> bytes:
    """Standard error, read to its end; its last ``STDERR_KEPT`` bytes kept."""
    kept = b""
    while chunk := await stream.read(CHUNK):
        kept = (kept + chunk)[-STDERR_KEPT:]
    return kept


async def _reply(stream: asyncio.StreamReader, inv: Invocation, limit: int,
                 on_text: Callable[[str], None] | None) -> str:
    """Standard output, decoded as it arrives (each piece passed to ``on_text``), up to
    ``limit`` bytes; past it, ProviderFailure."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    parts: list[str] = []
    size = 0
    while chunk := await stream.read(CHUNK):
        size += len(chunk)
        if size > limit:
            raise past_limit(f"{inv.shown} wrote more than", limit)
        piece = decoder.decode(chunk)
        if piece:
            parts.append(piece)
            if on_text is not None:
                on_text(piece)
    parts.append(decoder.decode(b"", final=True))
    return "".join(parts)


async def _exchange(process: asyncio.subprocess.Process, inv: Invocation, limit: int,
                    on_text: Callable[[str], None] | None) -> str:
    """The prompt in, the reply out, the exit status read."""
    assert process.stdin and process.stdout and process.stderr
    feeding = asyncio.ensure_future(_feed(process.stdin, inv.stdin))
    errors = asyncio.ensure_future(_tail(process.stderr))
    try:
        text = await _reply(process.stdout, inv, limit, on_text)
        code = await process.wait()
        stderr = await errors
        await feeding
    finally:
        for task in (feeding, errors):
            task.cancel()
        await asyncio.gather(feeding, errors, return_exceptions=True)
    if code != 0:
        raise exit_failure(inv, code, stderr)
    return text


def _kill(process: asyncio.subprocess.Process) -> None:
    """Kill the program and every process it started (its session's group)."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)
        else:  # pragma: no cover - no process groups
            process.kill()
    except (ProcessLookupError, PermissionError):
        pass


def _environment() -> dict[str, str]:
    """The user's environment, but the index a hook's git names (GIT_INDEX_FILE: the commit's,
    a lock file under ``commit -a``): a program that runs git must not refresh or write it."""
    return {k: v for k, v in os.environ.items() if k != "GIT_INDEX_FILE"}


async def run(inv: Invocation, settings: Any, on_text: Callable[[str], None] | None) -> str:
    """Run the command once: its reply, or ProviderFailure (one line)."""
    program = inv.argv[0]
    try:
        process = await asyncio.create_subprocess_exec(
            *inv.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True, env=_environment())
    except FileNotFoundError:
        raise ProviderFailure(f"command not found: {program} (provider {inv.name})") from None
    except PermissionError:
        raise ProviderFailure(f"command not executable: {program} (provider {inv.name})") \
            from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in an argument
        raise ProviderFailure(f"{inv.shown} could not start: "
                              f"{getattr(exc, 'strerror', None) or exc}") from None
    ended = False
    try:
        text = await asyncio.wait_for(
            _exchange(process, inv, settings.max_reply_bytes, on_text), settings.timeout)
        ended = True
        return text
    except asyncio.TimeoutError:
        raise ProviderFailure(f"{inv.shown} timed out after {settings.timeout:g}s",
                              retryable=True) from None
    finally:
        if not ended:  # a timeout, a reply past the limit, a cancel: nothing of it stays
            _kill(process)
            await _reap(process)


async def _reap(process: asyncio.subprocess.Process) -> None:
    """After a kill: what is left in its pipes read and dropped (they end with the processes
    that held them; reading had stopped at the limit) and its exit status taken, for at most
    ``REAP_SECONDS`` (a process that left the group may hold a pipe open)."""
    async def drain(stream: asyncio.StreamReader | None) -> None:
        while stream is not None and await stream.read(CHUNK):
            pass

    with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError, OSError):
        await asyncio.wait_for(asyncio.gather(drain(process.stdout), drain(process.stderr),
                                              process.wait()), REAP_SECONDS)


def route(target: Target, ask: Ask) -> Route:
    """A command needs no key: always a route (a bad command line fails when asked)."""
    async def request() -> str:
        return await run(invocation(target, ask.messages), ask.settings, ask.on_text)

    def finish(text: str, attempts: int) -> Completion:
        return Completion(text, target.name, 0, 0, None, attempts, tokens_known=False)

    return Route(request, finish, None, None)


register(Provider(COMMAND, route, serves_prefix=False))
