"""The ``cascade`` command: parse arguments, run the command (declared in cascade.cli).

Exit codes: 0 ok / consensus; 1 blocked or check failed; 2 bad usage or configuration;
130 interrupted. Expected failures print one line and no traceback.
"""
from __future__ import annotations

import contextlib
import os
import sys

from cascade.base.errors import CascadeError, is_config_path, os_error_line


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["hook"] and not any(a.startswith("-") for a in args_list[1:]):
        # The pre-commit fast path: most commits touch no governed path, and building the
        # full parser would cost more than deciding that.
        return _run(lambda: __import__("cascade.loop.hook", fromlist=["run_hook"])
                    .run_hook(args_list[1:]))
    from cascade.cli import build_parser, dispatch, named  # the table: off the path above

    command = named(args_list[0]) if args_list else None
    parser = build_parser(only=command)
    args = parser.parse_args(args_list)
    return _run(lambda: dispatch(parser, args))


def _run(command) -> int:
    try:
        code = command()
        if sys.stdout is not None:  # buffered output that cannot be written (a full disk)
            sys.stdout.flush()      # fails here, as one line, not at exit with two
        return code
    except CascadeError as exc:  # its text may quote a ledger: printed inert
        from cascade.base.text import printable  # its regexes compile at import: not for a no-op

        print("\n".join(printable(f"cascade: {e}") for e in exc.errors), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("cascade: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _settle_stdout()
        return 1
    except OSError as exc:
        # The one place an operating-system failure (disk full, file too large, permission
        # denied, read-only file system, ...) becomes one line. Ledgers and summaries are
        # written atomically (cascade.base.atomic): each is as it was, or whole. An OSError without
        # an errno is not the system's: a bug, and its traceback stays.
        if exc.errno is None:
            raise
        _settle_stdout()
        from cascade.base.text import printable  # as above

        print(printable(f"cascade: {os_error_line(exc)}"), file=sys.stderr)
        return 2 if exc.filename is not None and is_config_path(exc.filename) else 1


def _settle_stdout() -> None:
    """Write out what the command printed; when stdout cannot take it (a full disk, a closed
    pipe), point it at the null device, so the interpreter's flush at exit does not fail a
    second time and print its own message."""
    if sys.stdout is None:
        return
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
        return
    # AttributeError: no file descriptor (captured): nothing to do
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)


def entry() -> None:
    code = main()
    if not any(m in sys.modules for m in ("litellm", "llama_cpp")):
        # The work is done and flushed (_run flushes stdout); tearing the interpreter down
        # would only free the modules this run loaded -- ~90 ms of every hook run a user waits
        # for. Nothing of ours registers an exit handler; litellm and the embedded model do
        # (the model's only once llama.cpp is loaded), so a run that loaded them exits the
        # ordinary way.
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            raise SystemExit(code) from None
        os._exit(code)
    raise SystemExit(code)
