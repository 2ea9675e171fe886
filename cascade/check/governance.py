"""Which rule governs a ledger, and the authority it gives: one answer for the hook, the
commands that take a ledger or a document (status, comment, turn, decide, ...) and check.

A ledger is governed when its document (the header's ``Source:``) is matched by a rule whose
``discussion:`` path for that document is this ledger. Then the rule is the authority; the
ledger's header only describes it.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

from cascade.config.personas import load_personas
from cascade.config import templates
from cascade.config.rules import Rule
from cascade.base.errors import CascadeError, Found, display_path, in_order, raise_all
from cascade.base.gitio import read_blobs, repo_root
from cascade.ledger.consensus import voting_config
from cascade.ledger.parse import HEADER_BYTES, parse_header
from cascade.config.globs import glob_match
from cascade.ledger.lock import ledger_lock
from cascade.config.ruleset import RuleSet
from cascade.config.yamlio import did_you_mean
from cascade.protocol.authority import Authority
from cascade.protocol.discussion import Discussion
from cascade.protocol.findings import policy_of
from cascade.protocol.loader import load_protocol
from cascade.protocol.options import Options, check_option, most_rounds, specialize
from cascade.protocol.setting import setting_of
from cascade.base.resources import LEDGER_SUFFIX, find_root
from cascade.base.safepath import refuse_outside


def authority(rule: Rule, *tops: Path) -> Authority:
    """The authority a rule gives. Its personas and protocol must exist (in the configuration
    under the last of ``tops``): a rule naming an unknown one is a configuration error at the
    rule's line, never a smaller panel -- said with the other rules' of its file, so that
    every error of the file is read in one run."""
    config_root = tops[-1] if tops else None
    try:
        check_references(rule, config_root)
    except CascadeError as exc:
        found = Found(list(exc.errors))
        for other in rule.siblings or ():
            if other.name != rule.name:
                with found.kept():
                    check_references(other, config_root)
        raise_all(in_order(list({str(e): e for e in found.errors}.values())))
    steps = load_protocol(rule.protocol, config_root, where=rule.file).steps
    return Authority(participants_of(rule, steps), rule.protocol,
                     voting_config(rule.consensus, rule.file), tuple(rule.deciders or ()),
                     bool(rule.revote_on_change), f"rule {rule.name!r} ({rule.where(*tops)})",
                     policy_of(rule.policy, bool(rule.require_location), rule.hold))


def participants_of(rule: Rule, steps) -> tuple[str, ...]:
    """Who deliberates under a rule: nobody named for a protocol that generates its panel
    (swarm); the protocol's own panel (council's lenses) when the rule names no
    participants; else the rule's participants."""
    if steps.generated:
        return ()
    steps = specialize(steps, Options.of_rule(rule))
    if steps.participants.max == 0:  # the mode's fixed roles speak (council's dp)
        return ()
    if steps.participants.personas and "participants" not in rule.key_lines:
        return steps.participants.personas
    return tuple(rule.participants)


def check_references(rule: Rule, config_root: Path | None) -> None:
    """What the rule names must exist and fit: its personas, its protocol, the protocol's
    options, roles and rounds it sets. Every problem of the rule is raised at once, each at
    its key's line (with the name it is near, when it reads like a misspelt one)."""
    personas = load_personas(config_root)
    errors = [CascadeError(f"rule {rule.name!r}: unknown persona {alias!r} (known: "
                           f"{', '.join(sorted(personas.by_alias))})"
                           + did_you_mean(alias, personas.by_alias), rule.file,
                           rule.line_of("participants"))
              for alias in rule.participants if personas.get(alias) is None]
    if not templates.known("discussions", rule.template, config_root):
        errors.append(CascadeError(f"rule {rule.name!r}: "
                                   + templates.unknown("discussions", rule.template,
                                                       config_root).message,
                                   rule.file, rule.line_of("template")))
    if rule.drift_review and personas.get(rule.drift_review) is None:
        errors.append(CascadeError(f"rule {rule.name!r}: drift_review names an unknown persona "
                                   f"{rule.drift_review!r}"
                                   + did_you_mean(rule.drift_review, personas.by_alias),
                                   rule.file, rule.line_of("drift_review")))
    try:
        protocol = load_protocol(rule.protocol, config_root, where=rule.file)
    except CascadeError as exc:
        if exc.path == display_path(rule.file) and exc.line is None:
            exc = CascadeError(f"rule {rule.name!r}: {exc.message}", rule.file,
                               rule.line_of("protocol"))
        raise_all(in_order([*errors, exc]))
    raise_all(in_order([*errors, *_protocol_errors(rule, protocol, personas)]))


def _protocol_errors(rule: Rule, protocol, personas) -> list[CascadeError]:
    """What is wrong in how the rule uses its protocol: its options, models, rounds and
    participants."""
    errors: list[CascadeError] = []
    steps = protocol.steps
    for key, name in rule.options:
        with Found(errors).kept():
            check_option(protocol.name, steps, key, name, rule.file, rule.line_of(key),
                         f"rule {rule.name!r}: ")
    with Found(errors).kept():
        check_models(rule, protocol)
    if errors:
        return errors  # an option it does not have: the rest cannot be read under it
    if rule.rounds is not None:
        top = most_rounds(steps, Options.of_rule(rule)) if steps.shape.own_rounds else 0
        if not 1 <= rule.rounds <= top:
            errors.append(CascadeError(
                f"rule {rule.name!r}: protocol {protocol.name!r} runs "
                + (f"1 to {top} rounds, not {rule.rounds}" if top else
                   "no rounds of its own (a protocol of phases): drop rounds"),
                rule.file, rule.line_of("rounds")))
    if steps.generated:
        return errors  # its members are generated for each discussion: participants unused
    named = participants_of(rule, steps)
    errors += [CascadeError(f"rule {rule.name!r}: protocol {protocol.name!r} names an unknown "
                            f"persona {alias!r}", rule.file, rule.line_of("protocol"))
               for alias in named
               if personas.get(alias) is None and alias not in rule.participants]  # said
    if not steps.shape.any_panel:  # its fixed roles never deliberate; its count
        errors += _panel_errors(rule, protocol, named)
    return errors


def _panel_errors(rule: Rule, protocol, named: tuple[str, ...]) -> list[CascadeError]:
    """A protocol with fixed roles: who deliberates, and how many, as the rule names them."""
    steps, where = protocol.steps, (rule.file, rule.line_of("participants"))
    fixed = sorted({r.persona for r in steps.fixed_roles} & set(named))
    if fixed:
        return [CascadeError(f"rule {rule.name!r}: {', '.join(fixed)} has a fixed role in "
                             f"protocol {protocol.name!r} and never also deliberates", *where)]
    count = specialize(steps, Options.of_rule(rule)).participants
    if count.max == 0 and "participants" in rule.key_lines and rule.participants:
        return [CascadeError(f"rule {rule.name!r}: protocol {protocol.name!r} in mode "
                             f"{rule.option('mode') or steps.default_mode!r} has no participants "
                             "(its roles speak): drop participants", *where)]
    if count.max and not count.min <= len(named) <= count.max:
        return [CascadeError(f"rule {rule.name!r}: protocol {protocol.name!r} takes "
                             f"{count.min} to {count.max} participants, not {len(named)}",
                             *where)]
    return []


def check_models(rule: Rule, protocol) -> None:
    """A rule's ``models:`` keys are tiers (fast, strong) or roles of its protocol."""
    roles = [r.id for r in protocol.steps.roles]
    for key in rule.models or {}:
        if key in ("fast", "strong") or key in roles:
            continue
        known = f"roles: {', '.join(roles)}; tiers: fast, strong"
        raise CascadeError(f"rule {rule.name!r}: models: protocol {protocol.name!r} has no role "
                           f"{key!r} ({known})", rule.file,
                           rule.key_lines.get(f"models.{key}", rule.line_of("models")))


def _same(a: Rule, b: Rule) -> bool:
    return (a.name, str(a.file), a.base) == (b.name, str(b.file), b.base)


def check_shared_ledgers(docs: dict[str, Rule], paths, rules: RuleSet) -> None:
    """A rule that maps two documents to one ledger is a configuration error (one of them
    would never be reviewed, and the ledger's revisions would name the other): checked for
    the rules of ``docs`` over every path of the repository (``paths``)."""
    wanted = list({(r.name, str(r.file), r.base): r for r in docs.values()
                   if "{date}" not in r.discussion}.values())
    if not wanted:
        return
    owners: dict[str, list[tuple[str, Rule]]] = {}
    for path in dict.fromkeys([*docs, *paths]):
        if path.endswith(LEDGER_SUFFIX) or not any(r.matches(path) for r in wanted):
            continue
        rule = docs.get(path) or rules.governing(path)
        if rule is not None and any(_same(rule, r) for r in wanted):
            owners.setdefault(rule.ledger_path(path), []).append((path, rule))
    for ledger, found in owners.items():
        if len(found) > 1:
            (first, rule), (second, _) = sorted(found, key=lambda f: f[0])[:2]
            raise CascadeError(f"rule {rule.name!r} maps {first} and {second} to one ledger, "
                               f"{ledger}: one of them would never be reviewed; put {{dir}} in "
                               "its discussion: path (e.g. \"{dir}/discussions/{stem}"
                               ".discussion.md\")", rule.file, rule.line_of("discussion"))


def ledger_rule(rules: RuleSet, ledger: str, source: str | None) -> Rule | None:
    """The rule that governs the ledger at ``ledger`` (repository-relative), or None."""
    rule = rules.governing(source) if source else None
    if rule is None:
        return None
    if "{date}" in rule.discussion:
        return rule if glob_match(rule.ledger_path(source, date="*"), ledger) else None
    return rule if rule.ledger_path(source) == ledger else None


def resolve(path: str | Path, root: Path | None = None) -> tuple[Path, str | None, Rule | None]:
    """A path a user typed -- a ledger or a governed document -- as (ledger path, document,
    rule). A document no rule governs is an error (exit 2), naming the file."""
    p = Path(path)
    if not p.exists():
        raise CascadeError("no such discussion file" if p.name.endswith(LEDGER_SUFFIX)
                           else "no such file", p)
    try:
        root = root or repo_root(p.parent if p.parent.exists() else None)
    except CascadeError:
        return p, None, None
    rel = repo_relative(p, root)
    if p.name.endswith(LEDGER_SUFFIX):
        source = Discussion.load(p, setting_of(root)).source if p.is_file() and rel else None
        return p, source, ledger_rule(RuleSet(root), rel, source) if rel else None
    rules = RuleSet(root)
    rule = rules.governing(rel) if rel else None
    if rule is None:
        raise CascadeError("not a discussion ledger (*.discussion.md), and no rule in "
                           ".ai-rules.yml governs it", p)
    return root / rule.ledger_path(rel), rel, rule


def repo_relative(p: Path, root: Path) -> str | None:
    """``p`` relative to the repository at ``root``, or None when it lies outside."""
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return None


def open_discussion(path: str | Path):
    """The Discussion at a path a user typed (a ledger or a governed document), read under
    its rule's authority when a rule governs it."""
    return open_at(path, *resolve(path))


@contextlib.contextmanager
def writing(path: str | Path, holder: str):
    """``open_discussion`` for a command that appends (``holder``: which, ``cascade
    comment``): the ledger's lock is taken first and held until the block ends, so the
    Discussion is read after any other writer has finished, and what is planned from it
    (who is due) is not stale (cascade.ledger.lock)."""
    ledger, doc, rule = inside(path)
    with ledger_lock(ledger, holder=holder):
        yield open_at(path, ledger, doc, rule)


def inside(path: str | Path) -> tuple[Path, str | None, Rule | None]:
    """``resolve(path)`` for a command that writes: refused (one line, exit 2) when the path a
    person typed, or the ledger it leads to, lies outside the repository the command runs in
    or is reached through a symbolic link below its top. What is written beside the ledger
    (its record, graph and summary) follows from its path."""
    root = find_root()
    refuse_outside(root, path, "the ledger" if str(path).endswith(LEDGER_SUFFIX)
                   else "the document")
    ledger, doc, rule = resolve(path)
    refuse_outside(root, ledger, "the ledger")
    return ledger, doc, rule


def open_at(path: str | Path, ledger: Path, doc: str | None, rule: Rule | None,
            root: Path | None = None):
    """The Discussion at ``ledger``, under ``rule``'s authority when there is one (``root``:
    the repository's top, when the caller knows it)."""
    if rule is not None and doc and not Path(ledger).exists():
        raise CascadeError(f"no ledger yet ({display_path(ledger)}): commit the document once, "
                           "and the hook creates its ledger and asks the panel", Path(path))
    if rule is None:
        root = None
    elif root is None:
        root = repo_root(Path(ledger).parent if Path(ledger).parent.exists() else None)
    return Discussion.load(ledger, setting_of(root, Path(ledger).parent),
                           authority=authority(rule, root) if rule is not None and root else None)


class LedgerReader:
    """``open_at(path, *resolve(path, root), root=root)`` for the many ledgers of one
    repository, as ``cascade check`` reads them: the rules are read once, each rule's
    authority derived once, and a ledger parsed once -- its rule found from the document its
    header names (only the first bytes read for that), and read again the exact way only
    when the ledger says its document moved."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.rules = RuleSet(root)
        self.authorities: dict[int, Authority] = {}  # by the rule's id (the RuleSet keeps it)

    def open(self, path: Path) -> Discussion:
        rel = repo_relative(path, self.root)
        try:
            with open(path, "rb") as f:
                named = parse_header(f.read(HEADER_BYTES).decode("utf-8", "replace")).source
        except OSError:
            named = None
        if rel is None or named is None:
            return open_at(path, *resolve(path, self.root), root=self.root)
        rule = ledger_rule(self.rules, rel, named)
        if rule is not None and id(rule) not in self.authorities:
            self.authorities[id(rule)] = authority(rule, self.root)
        d = Discussion.load(path, setting_of(self.root if rule is not None else None,
                                             path.parent),
                            authority=self.authorities[id(rule)] if rule is not None else None)
        if d.source != named:  # the document moved: another rule may govern it now
            return open_at(path, *resolve(path, self.root), root=self.root)
        return d


def recorded_revision(d: Discussion) -> bytes | None:
    """The document as the ledger last recorded it (its blob), so a persona reviews exactly
    the revision its vote will be counted for; None: read the working tree."""
    revision = d.source_revision
    if not revision:
        return None
    try:
        return read_blobs(d.root, [revision]).get(revision)
    except Exception:  # noqa: BLE001 - not a git repository, or git missing: the working tree
        return None
