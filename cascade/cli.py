"""Every ``cascade`` command, declared once: its name, help, arguments and handler.

A declaration is data (``arg`` keeps argparse's arguments without building anything), and
``build_parser`` turns the declarations into argparse parsers: the invoked command's alone,
or all of them. The pre-commit hook's fast path (cascade.main) loads none of this. Each
handler imports its command's module when it runs, so that a command loads only its own
modules. ``reference()`` is every command's ``--help``, the text of docs/commands.md.
(Over 400 lines: the table of every command, one declaration each, read in one place.)
"""
from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable
from typing import Any

from msgspec import Struct

from cascade.config import protocol_defaults, protocol_options
from cascade.config.templates import ALIASES as TEMPLATE_ALIASES

VOTES = ("READY", "CHANGES", "REJECT")


class Arg(Struct, frozen=True):
    """One ``add_argument`` call, kept as data. ``anywhere``: an optional positional that may
    also come after the options (`comment FILE --vote READY "text"`), which plain argparse
    refuses once it has taken FILE alone."""

    names: tuple[str, ...]
    options: dict[str, Any]
    anywhere: bool = False


class OneOf(Struct, frozen=True):
    """A mutually exclusive group of arguments."""

    args: tuple[Arg, ...]
    required: bool = False


class Command(Struct):
    """A command: its name, help, arguments and handler; its subcommands, if any (listed as
    ``metavar`` in its usage line); the other names it answers to (``aliases``)."""

    name: str
    help: str
    arguments: tuple[Arg | OneOf, ...]
    run: Callable[[Any], int]
    metavar: str | None = None
    aliases: tuple[str, ...] = ()
    subcommands: dict[str, Command] = {}

    @property
    def intermixed(self) -> bool:
        """Whether its options may stand between its positionals (an ``anywhere`` one)."""
        return any(isinstance(a, Arg) and a.anywhere for a in self.arguments)


def arg(*names: str, anywhere: bool = False, **options: Any) -> Arg:
    return Arg(names, options, anywhere)


def one_of(*args: Arg, required: bool = False) -> OneOf:
    return OneOf(args, required)


COMMANDS: dict[str, Command] = {}


def command(name: str, help: str, *arguments: Arg | OneOf, under: str | None = None,
            metavar: str | None = None, aliases: tuple[str, ...] = ()
            ) -> Callable[[Callable[[Any], int]], Callable[[Any], int]]:
    """Declare the command ``name`` (a subcommand of ``under``; also called by ``aliases``),
    run by the decorated handler with the parsed arguments."""
    def declare(run: Callable[[Any], int]) -> Callable[[Any], int]:
        table = COMMANDS[under].subcommands if under else COMMANDS
        table[name] = Command(name, help, arguments, run, metavar=metavar, aliases=aliases)
        return run
    return declare


def named(word: str) -> str | None:
    """The command ``word`` names, by its name or one of its aliases; None for no command."""
    for declared in COMMANDS.values():
        if word == declared.name or word in declared.aliases:
            return declared.name
    return None


def _aliases(text: str) -> list[str] | None:
    return [a.strip().lstrip("@") for a in text.split(",") if a.strip()] if text else None


# --- the commands, in the order ``cascade --help`` lists them ---------------------------------

@command("new", "create a discussion ledger from a template; with --rule, the next numbered "
                "document of that rule and its ledger",
         arg("title"),
         arg("--rule", metavar="NAME",
             help="write the next numbered document (NNNN-<slug>.md, or NNNN-<slug>/index.md "
                  "for a folder per ADR; the prefix and width of the existing names, as "
                  "ODH-ADR-NNNN-) in the folder of the rule named NAME, from the repository's "
                  "template (templates/template.md or template.md as adr-tools, adr-template.md "
                  "as MADR, *0000-*template*.md) or the built-in ADR template, status Proposed "
                  "(MADR: in its front matter); and its ledger at the rule's "
                  "discussion: path, with the rule's template, participants, protocol and "
                  "consensus"),
         arg("--supersedes", metavar="N|PATH",
             help="with --rule: mark document N (its number in that folder, or its path) "
                  "superseded by the new one: only its status changes, and its ledger records "
                  "the change as keeping its review"),
         arg("--dir", metavar="AREA", dest="area",
             help="with --rule, for area folders (**): write in AREA below the rule's folder "
                  "(default: the rule's folder itself)"),
         arg("--template", help="without --rule: feature (default), adr, code-review, ...; "
                                + ", ".join(f"{alias} is {name}" for alias, name
                                            in TEMPLATE_ALIASES["discussions"].items())),
         arg("--source", help="the document under review (repository path)"),
         arg("--participants", type=_aliases,
             help="comma-separated persona aliases (default: architect,security,pragmatist)"),
         arg("--protocol", help=f"a protocol's name (default: {protocol_defaults.NEW})"),
         arg("--output", "-o", help="ledger path (default: discussions/<slug>.discussion.md)"),
         arg("--context", default="", help="text for the Context section"))
def _new(a) -> int:
    from cascade.commands.new import LedgerOptions, new
    options = LedgerOptions(a.template, a.source, a.participants, a.protocol, a.output, a.context)
    return new(a.title, options, rule=a.rule, supersedes=a.supersedes, area=a.area)


@command("list", "list the governed documents below this folder (number, title, status, "
                 "review, path), then the discussions of no document",
         arg("--status", help="only those whose own status (proposed, accepted, superseded, "
                              "...) or review (open, accepted, unreviewed, ...) is this"),
         arg("--format", choices=("text", "json"), default="text",
             help="text: a table as wide as the terminal; json: every field, for scripts"))
def _list(a) -> int:
    from cascade.commands.list import list_
    return list_(a.status, a.format)


@command("status", "show phase, votes, consensus and open items",
         arg("paths", nargs="*", metavar="PATH"),
         arg("--json", action="store_true", help="machine-readable output"),
         arg("--verbose", "-v", action="store_true",
             help="each participant's latest comment (its first lines), not only the vote"))
def _status(a) -> int:
    from cascade.commands.status import status
    return status(a.paths, a.json, a.verbose)


_AUTHOR = arg("--author", metavar="'NAME <EMAIL>'",
              help="as git commit --author takes it; default: who git authors the next commit "
                   "as (GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL, else user.name/user.email). It counts "
                   "only in a commit that person makes")


@command("comment", "append a person's comment; the vote comes only from --vote",
         arg("path"),
         arg("text", nargs="?", default="", anywhere=True,
             help="the comment, kept as written (a VOTE: line in it stays text and does not "
                  "count; none with --vote: a vote that asks nobody)"),
         arg("--vote", type=str.upper, choices=VOTES,
             help="your vote (the only way to vote here)"),
         arg("--waive", metavar="FN",
             help="waive finding FN (F3), the text its reason: written as WAIVE(F3): reason "
                  "under the identity the rule's deciders: match; it counts from your own "
                  "commit"),
         _AUTHOR)
def _comment(a) -> int:
    from cascade.commands.comment import comment
    return comment(a.path, a.text, a.vote, a.author, a.waive)


@command("decide", "decide as a person, overriding the panel for the document's current "
                   "revision",
         arg("path", metavar="PATH", help="the ledger or its governed document"),
         arg("vote", metavar="READY|CHANGES|REJECT", type=str.upper, choices=VOTES),
         arg("--reason", required=True, help="why: recorded in the ledger"),
         _AUTHOR)
def _decide(a) -> int:
    from cascade.commands.decide import decide
    return decide(a.path, a.vote, a.reason, a.author)


@command("explain", "which rule governs a path, its ledger, protocol, participants and models, "
                    "and the calls a review makes",
         arg("path", metavar="PATH", help="a document or a ledger"),
         arg("--json", action="store_true", help="machine-readable output"))
def _explain(a) -> int:
    from cascade.commands.explain import explain
    return explain(a.path, a.json)


# --mode, --strategy, --flow, --tier: the options a protocol file may offer, each taken by the
# protocols whose file has its section (cascade plan --protocol P lists a protocol's)
_OPTION_FLAGS = tuple(arg(f"--{option}", metavar="NAME", help=f"one of the protocol's "
                          f"{section} (cascade plan --protocol P lists them)")
                      for option, section in protocol_options.SECTIONS.items())


def _chosen(a) -> dict[str, str | None]:
    return {option: getattr(a, option) for option in protocol_options.SECTIONS}


_ROUNDS = arg("--rounds", type=int, metavar="N",
              help="at most N rounds (up to the protocol's own cap)")
_AUTO = arg("--auto", action="store_true",
            help="take the recommended choice at every decision point (recorded)")


@command("discuss", "create a ledger for a topic (or a document) and run its protocol "
                    f"(default {protocol_defaults.TOPIC}) to an outcome",
         arg("topic", metavar="TOPIC"),
         arg("--protocol", default=protocol_defaults.TOPIC,
             help=f"default: {protocol_defaults.TOPIC}"),
         *_OPTION_FLAGS,
         _ROUNDS,
         one_of(arg("--participants", metavar="a,b", type=_aliases, help="persona aliases"),
                arg("--auto-invite", action="store_true",
                    help="pick the participants by topic, without asking")),
         arg("--source", metavar="PATH", help="a document the discussion is about"),
         arg("--objective", metavar="TEXT",
             help="the larger goal the discussion serves (kept in the ledger's header and "
                  "given to every turn)"),
         arg("--pro", metavar="a,b", type=_aliases,
             help="the participants for the proposal (a strategy with sides: debate)"),
         arg("--con", metavar="a,b", type=_aliases, help="the participants against it"),
         _AUTO,
         arg("-o", "--output", metavar="PATH",
             help="the ledger (default: discussions/<slug>.discussion.md)"))
def _discuss(a) -> int:
    from cascade.commands.discuss import discuss
    return discuss(a.topic, a.protocol, a.participants, a.auto_invite, a.source, a.rounds,
                   a.auto, a.output, {**_chosen(a), "pro": a.pro, "con": a.con}, a.objective)


@command("run", "continue a discussion where its ledger ends (resume)",
         arg("path", metavar="PATH", help="a ledger or a governed document"),
         _AUTO)
def _run(a) -> int:
    from cascade.commands.discuss import run_
    return run_(a.path, a.auto)


@command("plan", "the dry run, no model call: roles, personas, models, steps, the most calls "
                 "and the prompt budget",
         arg("path", nargs="?", metavar="PATH", help="a ledger or a governed document"),
         arg("--protocol", metavar="P", help="plan a protocol without a ledger"),
         arg("--participants", metavar="a,b", type=_aliases,
             help="persona aliases (with --protocol)"),
         *_OPTION_FLAGS,
         _ROUNDS)
def _plan(a) -> int:
    from cascade.commands.plan import plan
    return plan(a.path, a.protocol, a.participants, _chosen(a), a.rounds)


@command("turn", "run the pending (or the named) persona turns",
         arg("path"),
         arg("aliases", nargs="*", metavar="@alias", help="personas to ask; @all for all",
             anywhere=True))
def _turn(a) -> int:
    from cascade.commands.turn import turn
    return turn(a.path, a.aliases)


@command("review", "review a governed document's revision in the index now, committed or not "
                   "(after git commit --no-verify), as the hook would: its ledger's replies "
                   "are staged for git commit",
         arg("paths", nargs="+", metavar="PATH", help="a governed document, or its ledger"))
def _review(a) -> int:
    from cascade.commands.review import review
    return review(a.paths)


@command("hook", "the pre-commit gate: review staged governed documents",
         arg("files", nargs="*", metavar="FILE"))
def _hook(a) -> int:
    from cascade.loop.hook import run_hook
    return run_hook(a.files)


@command("check", "the CI gate, no model calls: ledgers at consensus, history append-only",
         arg("--from-ref", metavar="REF",
             help="check the range REF..TO-REF (default: $PRE_COMMIT_FROM_REF; none: every "
                  "governed document at TO-REF, no history)"),
         arg("--to-ref", metavar="REF", help="default: $PRE_COMMIT_TO_REF, else HEAD"),
         arg("--format", choices=["text", "json", "github", "sarif"], default="text"))
def _check(a) -> int:
    from cascade.commands.check import check
    return check(a.from_ref, a.to_ref, a.format)


@command("drift", "the accepted decisions the code moved away from: the commits since each "
                  "was accepted that changed the paths it governs (no model); exit 1 when "
                  "any drifted",
         arg("paths", nargs="*", metavar="PATH",
             help="only the decisions below these paths (documents or folders)"),
         arg("--ref", metavar="REF", help="the commit to look from (default: HEAD)"),
         arg("--json", action="store_true", help="machine-readable output, every decision"))
def _drift(a) -> int:
    from cascade.commands.drift import drift
    return drift(a.paths, a.ref, a.json)


@command("init", "adopt: find the ADR folders, write .ai-rules.yml, .pre-commit-config.yaml and "
                 "the baseline, register the ledger merge driver",
         arg("--plain", action="store_true",
             help="install plain git hooks instead of a pre-commit config"),
         arg("--repo", help="this tool's repository URL, for a remote pre-commit config"),
         arg("--rev", help="the tag or commit of --repo"),
         arg("--dir", metavar="PATH", action="append", default=[],
             help="an ADR folder to govern (repeatable); instead of looking for one"))
def _init(a) -> int:
    from cascade.commands.init import init
    return init(a.plain, a.repo, a.rev, tuple(a.dir))


@command("trailer", "(prepare-commit-msg) add Cascade-Consensus trailers",
         arg("message_file"))
def _trailer(a) -> int:
    from cascade.commands.trailer import trailer
    return trailer(a.message_file)


@command("advance", "move a discussion to its next (or a named) phase",
         arg("path"),
         arg("--to", metavar="PHASE"))
def _advance(a) -> int:
    from cascade.commands.advance import advance
    return advance(a.path, a.to)


# declared bottom up: the command, then its subcommand; `cascade personas` alone lists
@command("list", "list bundled and repository personas", under="personas")
@command("personas", "list, show, add or remove personas (the discussion's participants)",
         metavar="list|show|add|remove", aliases=("participants",))
def _personas_list(a) -> int:
    from cascade.commands.personas import personas_list
    return personas_list()


@command("show", "show one persona", arg("name"), under="personas")
def _personas_show(a) -> int:
    from cascade.commands.personas import personas_show
    return personas_show(a.name)


@command("add", "add a repository persona (.cascade/personas/NAME.yml), checked as loading "
                "checks it",
         arg("name", help="its alias (@name)"),
         one_of(arg("--from-file", metavar="F", help="a persona YAML file"),
                arg("--interactive", action="store_true", help="answer questions"),
                required=True),
         arg("--force", action="store_true", help="replace the repository's persona of that name"),
         under="personas")
def _personas_add(a) -> int:
    from cascade.commands.personas import personas_add
    return personas_add(a.name, a.from_file, a.interactive, a.force)


@command("remove", "remove a repository persona (not a bundled one)", arg("name"),
         under="personas")
def _personas_remove(a) -> int:
    from cascade.commands.personas import personas_remove
    return personas_remove(a.name)


@command("summary", "write <ledger>.sum.md: votes, questions, decisions",
         arg("path"))
def _summary(a) -> int:
    from cascade.commands.summary import summary
    return summary(a.path)


@command("demo", "run the offline demo in a temporary repository",
         arg("--keep", action="store_true", help="keep the demo repository"))
def _demo(a) -> int:
    from cascade.commands.demo import demo
    return demo(a.keep)


@command("ui", "the terminal UI: browse the discussions below a folder, read one, comment, "
               "run, decide; personas",
         arg("path", nargs="?", default=".", metavar="PATH",
             help="a folder (default: this one) or a ledger"))
def _ui(a) -> int:
    from cascade.ui.launch import ui
    return ui(a.path)


@command("stats", "the panel, measured: per persona and per rule, over every ledger -- votes, "
                  "block rate, findings by severity and how each ended, how often a persona's "
                  "last vote went the way the discussion concluded, people overruling it, "
                  "tokens and cost per discussion, commits and days to a conclusion",
         arg("--json", action="store_true", help="every figure as JSON"))
def _stats(a) -> int:
    from cascade.commands.stats import stats
    return stats(a.json)


@command("site", "the decision log as a static site: a timeline of the governed decisions "
                 "(filter, search), a page per decision with its review (panel, findings, "
                 "questions, decisions, supersession, drift), a page per topic discussion; "
                 "works offline and from file://",
         arg("-o", "--output", metavar="DIR",
             help="the folder to write (default: _site at the repository's top); a folder of "
                  "someone else's is refused"),
         arg("--serve", action="store_true",
             help="then serve it on 127.0.0.1 (a local preview) and build it again when a "
                  "document, a ledger or a rule file changes or a commit is made; Ctrl-C stops"),
         arg("--port", type=int, default=8000, help="with --serve (default: 8000)"))
def _site(a) -> int:
    from cascade.site.build import site
    return site(a.output, a.serve, a.port)


@command("merge-driver", "git's merge driver for ledgers (cascade init registers it): merges "
                         "two appends whole-block",
         arg("ancestor", metavar="%O", help="the common ancestor's version"),
         arg("current", metavar="%A", help="our version; the result is written here"),
         arg("other", metavar="%B", help="their version"),
         arg("path", metavar="%P", nargs="?", help="the ledger's path, for messages"))
def _merge_driver(a) -> int:
    from cascade.commands.merge_driver import merge_driver
    return merge_driver(a.ancestor, a.current, a.other, a.path)


# --- parsers from the declarations -----------------------------------------------------------

def build_parser(only: str | None = None, width: int | None = None):
    """The command-line parser; with ``only``, that command's parser alone is built (the
    others would cost ~15 ms of every command; ``cascade --help`` and a mistyped command get
    them all). ``width``: of the help text (default: the terminal's)."""
    import argparse  # kept off the pre-commit path, which parses no arguments

    from cascade import __version__

    class Formatter(argparse.HelpFormatter):
        def __init__(self, prog: str) -> None:
            super().__init__(prog, width=width)

        def _format_action_invocation(self, action: argparse.Action) -> str:
            # "-o, --output OUTPUT" on every Python (3.13's form), so that the help text,
            # and docs/commands.md, read the same whichever Python runs them
            if not action.option_strings or action.nargs == 0:
                return super()._format_action_invocation(action)
            value = self._format_args(action, self._get_default_metavar_for_optional(action))
            return f"{', '.join(action.option_strings)} {value}"

    class Parser(argparse.ArgumentParser):
        def __init__(self, *args: Any, intermixed: bool = False, **kwargs: Any) -> None:
            super().__init__(*args, formatter_class=Formatter, **kwargs)
            self.intermixed, self.parsing = intermixed, False

        def parse_known_args(self, args=None, namespace=None):
            # An intermixed command takes its options between its positionals too
            # (Command.intermixed). ``parsing``: the intermixed parse calls this again.
            if not self.intermixed or self.parsing:
                return super().parse_known_args(args, namespace)
            self.parsing = True
            try:
                return self.parse_known_intermixed_args(args, namespace)
            finally:
                self.parsing = False

        def error(self, message: str) -> None:  # usage errors: exit 2, one line
            self.print_usage(sys.stderr)
            print(f"cascade: error: {message}", file=sys.stderr)
            raise SystemExit(2)

    parser = Parser(prog="cascade", description="Git-native design review by AI personas.")
    parser.add_argument("--version", action="version", version=f"cascade {__version__}")
    _add_commands(parser, COMMANDS, "command", "COMMAND", Parser, only)
    return parser


def _add_commands(parser, commands: dict[str, Command], dest: str, metavar: str, parser_class,
                  only: str | None = None) -> None:
    sub = parser.add_subparsers(dest=dest, metavar=metavar, parser_class=parser_class)
    for declared in commands.values():
        if only is not None and declared.name != only:
            continue
        p = sub.add_parser(declared.name, help=declared.help, aliases=list(declared.aliases),
                           intermixed=declared.intermixed)
        p.set_defaults(handler=declared.run)  # a subcommand's replaces its command's
        for argument in declared.arguments:
            if isinstance(argument, OneOf):
                group = p.add_mutually_exclusive_group(required=argument.required)
                for member in argument.args:
                    group.add_argument(*member.names, **member.options)
            else:
                p.add_argument(*argument.names, **argument.options)
        if declared.subcommands:
            _add_commands(p, declared.subcommands, f"{declared.name}_command",
                          declared.metavar or "COMMAND", parser_class)


def dispatch(parser, args) -> int:
    """Run the command ``args`` were parsed for (its subcommand's handler, if one was named);
    with no command named, the help (exit 2)."""
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    return handler(args)


def reference(width: int = 100) -> str:
    """docs/commands.md: ``cascade --help`` and each command's ``--help``, as printed at
    ``width`` columns."""
    parts = ["# Commands\n\n",
             "Every command's `--help`, as `cascade` prints it. Generated by "
             "`python docs/commands.py` from the commands' declarations (`cascade/cli.py`); "
             "a test fails when this file is not current.\n"]
    for words in _every_command():
        title = " ".join(("cascade", *words))
        parts.append(f"\n## `{title}`\n\n```text\n{_help(words, width).rstrip()}\n```\n")
    return "".join(parts)


def _every_command() -> list[tuple[str, ...]]:
    words: list[tuple[str, ...]] = [()]
    for declared in COMMANDS.values():
        words.append((declared.name,))
        words.extend((declared.name, sub) for sub in declared.subcommands)
    return words


def _help(words: tuple[str, ...], width: int) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        build_parser(width=width).parse_args([*words, "--help"])
    return out.getvalue()
