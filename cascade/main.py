"""The ``cascade`` command: parse arguments, dispatch to one function per command.

Exit codes: 0 ok / consensus; 1 blocked or check failed; 2 bad usage or configuration;
130 interrupted. Expected failures print one line and no traceback.
"""
from __future__ import annotations

import os
import sys

from cascade.errors import CascadeError, is_config_path, os_error_line

COMMANDS = ("new", "list", "status", "comment", "decide", "explain", "discuss", "run", "plan",
            "turn", "hook", "check", "init", "trailer", "advance", "personas", "summary", "demo",
            "ui", "merge-driver")


class _Unused:
    """What ``build_parser(only=...)`` builds instead of another command's parser: every call
    is accepted and does nothing (the whole parser costs ~15 ms of every command)."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: self


def build_parser(only: str | None = None):
    """The command-line parser; with ``only``, that command's parser alone is built (the
    others are placeholders: ``cascade --help`` and a mistyped command get the full one)."""
    import argparse

    from cascade import __version__

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # usage errors: exit 2, one line
            self.print_usage(sys.stderr)
            print(f"cascade: error: {message}", file=sys.stderr)
            raise SystemExit(2)

    parser = _Parser(prog="cascade", description="Git-native design review by AI personas.")
    parser.add_argument("--version", action="version", version=f"cascade {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    if only is not None:
        real_add = sub.add_parser

        def add_parser(name, **kwargs):
            return real_add(name, **kwargs) if name == only else _Unused()

        sub.add_parser = add_parser  # type: ignore[method-assign]

    p = sub.add_parser("new", help="create a discussion ledger from a template; with --rule, "
                                   "the next numbered document of that rule and its ledger")
    p.add_argument("title")
    p.add_argument("--rule", metavar="NAME",
                   help="write the next numbered document (NNNN-<slug>.md, or NNNN-<slug>/"
                        "index.md for a folder per ADR; the width of the existing numbers) in "
                        "the folder of the rule named NAME, from the repository's template "
                        "(templates/template.md or template.md as adr-tools, adr-template.md "
                        "as MADR, 0000-*template*.md) or the built-in ADR template, status "
                        "Proposed; and its ledger at the rule's discussion: path, with the "
                        "rule's template, participants, protocol and consensus")
    p.add_argument("--supersedes", metavar="N|PATH",
                   help="with --rule: mark document N (its number in that folder, or its "
                        "path) superseded by the new one: only its status changes, and its "
                        "ledger records the change as keeping its review")
    p.add_argument("--dir", metavar="AREA",
                   help="with --rule, for area folders (**): write in AREA below the rule's "
                        "folder (default: the rule's folder itself)")
    p.add_argument("--template", help="without --rule: feature (default), adr, code-review, ...")
    p.add_argument("--source", help="the document under review (repository path)")
    p.add_argument("--participants", help="comma-separated persona aliases "
                                          "(default: architect,security,pragmatist)")
    p.add_argument("--protocol", help="phased (default), review, ...")
    p.add_argument("--output", "-o", help="ledger path (default: discussions/<slug>.discussion.md)")
    p.add_argument("--context", default="", help="text for the Context section")

    p = sub.add_parser("list", help="list discussions below this folder")
    p.add_argument("--status", help="only discussions with this status (OPEN, ACCEPTED, ...)")

    p = sub.add_parser("status", help="show phase, votes, consensus and open items")
    p.add_argument("paths", nargs="*", metavar="PATH")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="each participant's latest comment (its first lines), not only the vote")

    p = sub.add_parser("comment", help="append a person's comment; the vote comes only from "
                                       "--vote")
    p.add_argument("path")
    p.add_argument("text", nargs="?", default="",
                   help="the comment, kept as written (a VOTE: line in it stays text and does "
                        "not count; none with --vote: a vote that asks nobody)")
    p.add_argument("--vote", type=str.upper, choices=["READY", "CHANGES", "REJECT"],
                   help="your vote (the only way to vote here)")
    p.add_argument("--author", help="default: git config user.name")

    p = sub.add_parser("decide", help="decide as a person, overriding the panel for the "
                                      "document's current revision")
    p.add_argument("path", metavar="PATH", help="the ledger or its governed document")
    p.add_argument("vote", metavar="READY|CHANGES|REJECT", type=str.upper,
                   choices=["READY", "CHANGES", "REJECT"])
    p.add_argument("--reason", required=True, help="why: recorded in the ledger")

    p = sub.add_parser("explain", help="which rule governs a path, its ledger, protocol, "
                                       "participants and models, and the calls a review makes")
    p.add_argument("path", metavar="PATH", help="a document or a ledger")
    p.add_argument("--json", action="store_true", help="machine-readable output")

    p = sub.add_parser("discuss", help="create a ledger for a topic (or a document) and run "
                                       "its protocol (default pcs) to an outcome")
    p.add_argument("topic", metavar="TOPIC")
    p.add_argument("--protocol", default="pcs", help="default: pcs")
    for option in ("mode", "strategy", "flow", "tier"):
        p.add_argument(f"--{option}", help="(for the protocols that have one)")
    p.add_argument("--rounds", type=int, metavar="N", help="at most N rounds (up to the "
                                                              "protocol's own cap)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--participants", metavar="a,b", help="persona aliases")
    group.add_argument("--auto-invite", action="store_true",
                       help="pick the participants by topic, without asking")
    p.add_argument("--source", metavar="PATH", help="a document the discussion is about")
    p.add_argument("--auto", action="store_true",
                   help="take the recommended choice at every decision point (recorded)")
    p.add_argument("-o", "--output", metavar="PATH", help="the ledger (default: "
                                                          "discussions/<slug>.discussion.md)")

    p = sub.add_parser("run", help="continue a discussion where its ledger ends (resume)")
    p.add_argument("path", metavar="PATH", help="a ledger or a governed document")
    p.add_argument("--auto", action="store_true",
                   help="take the recommended choice at every decision point (recorded)")

    p = sub.add_parser("plan", help="the dry run, no model call: roles, personas, models, "
                                    "steps, the most calls and the prompt budget")
    p.add_argument("path", nargs="?", metavar="PATH", help="a ledger or a governed document")
    p.add_argument("--protocol", metavar="P", help="plan a protocol without a ledger")
    p.add_argument("--participants", metavar="a,b", help="persona aliases (with --protocol)")
    p.add_argument("--mode", metavar="M", help="a protocol's mode (swarm: lightweight, "
                                              "standard, deep)")
    p.add_argument("--strategy", metavar="S", help="a protocol's strategy (roundtable)")
    p.add_argument("--flow", metavar="F", help="a protocol's flow (council)")
    p.add_argument("--tier", metavar="T", help="a protocol's tier (council: light, medium, "
                                              "heavy)")

    p = sub.add_parser("turn", help="run the pending (or the named) persona turns")
    p.add_argument("path")
    p.add_argument("aliases", nargs="*", metavar="@alias", help="personas to ask; @all for all")

    p = sub.add_parser("hook", help="the pre-commit gate: review staged governed documents")
    p.add_argument("files", nargs="*", metavar="FILE")

    p = sub.add_parser("check", help="the CI gate, no model calls: ledgers at consensus, "
                                     "history append-only")
    p.add_argument("--from-ref", metavar="REF",
                   help="check the range REF..TO-REF (default: $PRE_COMMIT_FROM_REF; none: "
                        "every governed document at TO-REF, no history)")
    p.add_argument("--to-ref", metavar="REF", help="default: $PRE_COMMIT_TO_REF, else HEAD")
    p.add_argument("--format", choices=["text", "json", "github"], default="text")

    p = sub.add_parser("init", help="adopt: find the ADR folders, write .ai-rules.yml, "
                                    ".pre-commit-config.yaml and the baseline, register the "
                                    "ledger merge driver")
    p.add_argument("--plain", action="store_true",
                   help="install plain git hooks instead of a pre-commit config")
    p.add_argument("--repo", help="this tool's repository URL, for a remote pre-commit config")
    p.add_argument("--rev", help="the tag or commit of --repo")

    p = sub.add_parser("trailer", help="(prepare-commit-msg) add Cascade-Consensus trailers")
    p.add_argument("message_file")

    p = sub.add_parser("advance", help="move a discussion to its next (or a named) phase")
    p.add_argument("path")
    p.add_argument("--to", metavar="PHASE")

    p = sub.add_parser("personas", help="list, show, add or remove personas")
    psub = p.add_subparsers(dest="personas_command", metavar="list|show|add|remove",
                            parser_class=_Parser)
    psub.add_parser("list", help="list bundled and repository personas")
    ps = psub.add_parser("show", help="show one persona")
    ps.add_argument("name")
    ps = psub.add_parser("add", help="add a repository persona (.cascade/personas/NAME.yml), "
                                     "checked as loading checks it")
    ps.add_argument("name", help="its alias (@name)")
    how = ps.add_mutually_exclusive_group(required=True)
    how.add_argument("--from-file", metavar="F", help="a persona YAML file")
    how.add_argument("--interactive", action="store_true", help="answer questions")
    ps.add_argument("--force", action="store_true",
                    help="replace the repository's persona of that name")
    ps = psub.add_parser("remove", help="remove a repository persona (not a bundled one)")
    ps.add_argument("name")

    p = sub.add_parser("summary", help="write <ledger>.sum.md: votes, questions, decisions")
    p.add_argument("path")

    p = sub.add_parser("demo", help="run the offline demo in a temporary repository")
    p.add_argument("--keep", action="store_true", help="keep the demo repository")

    p = sub.add_parser("ui", help="the terminal UI: browse the discussions below a folder, "
                                  "read one, comment, run, decide; personas")
    p.add_argument("path", nargs="?", default=".", metavar="PATH",
                   help="a folder (default: this one) or a ledger")

    p = sub.add_parser("merge-driver", help="git's merge driver for ledgers (cascade init "
                                            "registers it): merges two appends whole-block")
    p.add_argument("ancestor", metavar="%O", help="the common ancestor's version")
    p.add_argument("current", metavar="%A", help="our version; the result is written here")
    p.add_argument("other", metavar="%B", help="their version")
    p.add_argument("path", metavar="%P", nargs="?", help="the ledger's path, for messages")
    return parser


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["hook"] and not any(a.startswith("-") for a in args_list[1:]):
        # The pre-commit fast path: most commits touch no governed path, and building the
        # full parser would cost more than deciding that.
        return _run(lambda: __import__("cascade.loop.hook", fromlist=["run_hook"])
                    .run_hook(args_list[1:]))
    command = args_list[0] if args_list and args_list[0] in COMMANDS else None
    parser = build_parser(only=command)
    args = parser.parse_args(args_list)
    return _run(lambda: _dispatch(parser, args))


def _run(command) -> int:
    try:
        code = command()
        if sys.stdout is not None:  # buffered output that cannot be written (a full disk)
            sys.stdout.flush()      # fails here, as one line, not at exit with two
        return code
    except CascadeError as exc:  # its text may quote a ledger: printed inert
        from cascade.text import printable

        print(printable(f"cascade: {exc}"), file=sys.stderr)
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
        # written atomically (cascade.atomic): each is as it was, or whole. An OSError without
        # an errno is not the system's: a bug, and its traceback stays.
        if exc.errno is None:
            raise
        _settle_stdout()
        from cascade.text import printable

        print(printable(f"cascade: {os_error_line(exc)}"), file=sys.stderr)
        return 2 if exc.filename is not None and is_config_path(exc.filename) else 1


def _settle_stdout() -> None:
    """Write out what the command printed; when stdout cannot take it (a full disk, a closed
    pipe), point it at the null device, so the interpreter's flush at exit does not fail a
    second time and print its own message."""
    if sys.stdout is None:
        return
    try:
        sys.stdout.flush()
        return
    except (OSError, ValueError):
        pass
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no file descriptor (captured): nothing to do
        pass


def _aliases(text: str | None) -> list[str] | None:
    return [a.strip().lstrip("@") for a in text.split(",") if a.strip()] if text else None


def _dispatch(parser, args) -> int:
    command = args.command
    if command == "new":
        from cascade.commands.new import new
        participants = ([a.strip().lstrip("@") for a in args.participants.split(",") if a.strip()]
                        if args.participants else None)
        return new(args.title, args.template, args.source, participants, args.protocol,
                   args.output, args.context, rule=args.rule, supersedes=args.supersedes,
                   area=args.dir)
    elif command == "list":
        from cascade.commands.list import list_
        return list_(args.status)
    elif command == "status":
        from cascade.commands.status import status
        return status(args.paths, args.json, args.verbose)
    elif command == "comment":
        from cascade.commands.comment import comment
        return comment(args.path, args.text, args.vote, args.author)
    elif command == "decide":
        from cascade.commands.decide import decide
        return decide(args.path, args.vote, args.reason)
    elif command == "explain":
        from cascade.commands.explain import explain
        return explain(args.path, args.json)
    elif command == "discuss":
        from cascade.commands.discuss import discuss
        return discuss(args.topic, args.protocol, _aliases(args.participants), args.auto_invite,
                       args.source, args.rounds, args.auto, args.output,
                       {"mode": args.mode, "strategy": args.strategy, "flow": args.flow,
                        "tier": args.tier})
    elif command == "run":
        from cascade.commands.discuss import run_
        return run_(args.path, args.auto)
    elif command == "plan":
        from cascade.commands.plan import plan
        return plan(args.path, args.protocol, _aliases(args.participants), args.mode,
                    args.strategy or args.flow, args.tier)
    elif command == "turn":
        from cascade.commands.turn import turn
        return turn(args.path, args.aliases)
    elif command == "hook":
        from cascade.loop.hook import run_hook
        return run_hook(args.files)
    elif command == "check":
        from cascade.commands.check import check
        return check(args.from_ref, args.to_ref, args.format)
    elif command == "init":
        from cascade.commands.init import init
        return init(args.plain, args.repo, args.rev)
    elif command == "trailer":
        from cascade.commands.trailer import trailer
        return trailer(args.message_file)
    elif command == "advance":
        from cascade.commands.advance import advance
        return advance(args.path, args.to)
    elif command == "personas":
        from cascade.commands import personas as cmd
        if args.personas_command == "show":
            return cmd.personas_show(args.name)
        if args.personas_command == "add":
            return cmd.personas_add(args.name, args.from_file, args.interactive, args.force)
        if args.personas_command == "remove":
            return cmd.personas_remove(args.name)
        return cmd.personas_list()
    elif command == "summary":
        from cascade.commands.summary import summary
        return summary(args.path)
    elif command == "demo":
        from cascade.commands.demo import demo
        return demo(args.keep)
    elif command == "ui":
        from cascade.ui.command import ui
        return ui(args.path)
    elif command == "merge-driver":
        from cascade.commands.merge_driver import merge_driver
        return merge_driver(args.ancestor, args.current, args.other, args.path)
    parser.print_help()
    return 2


def entry() -> None:
    code = main()
    if not any(m in sys.modules for m in ("litellm", "llama_cpp", "cascade.turns.local")):
        # The work is done and flushed (_run flushes stdout); tearing the interpreter down
        # would only free the modules this run loaded -- ~90 ms of every hook run a user waits
        # for. Nothing of ours registers an exit handler; litellm and the embedded model do,
        # so a run that loaded them exits the ordinary way.
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            raise SystemExit(code) from None
        import os

        os._exit(code)
    raise SystemExit(code)
