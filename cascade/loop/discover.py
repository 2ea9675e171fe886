"""Which ledgers a commit involves: the ledger of each governed document it stages (one its
document was renamed from, when this commit renames it), and each ledger it stages itself;
with the document's staged text, and what refuses them before anything is read (links)."""
from __future__ import annotations

import glob as _glob
from pathlib import Path

from msgspec.structs import replace

from cascade.config.rules import Rule
from cascade.base.errors import CascadeError
from cascade.base.gitio import SYMLINK_MODE, git, index_entries, read_blobs, tracked
from cascade.check.governance import authority as rule_authority
from cascade.check.governance import check_shared_ledgers, ledger_rule
from cascade.loop.item import Item
from cascade.config.ruleset import RuleSet
from cascade.protocol.discussion import Discussion
from cascade.protocol.setting import setting_of
from cascade.base.safepath import first_link


def find_ledger(root: Path, rule: Rule, doc: str) -> str:
    if "{date}" not in rule.discussion:
        return rule.ledger_path(doc)
    pattern = rule.ledger_path(doc, date="*")
    for match in sorted(_glob.glob(str(root / pattern))):
        try:
            d = Discussion.load(match, setting_of(root))
            if d.source == doc:
                return Path(match).relative_to(root).as_posix()
        except CascadeError:
            continue
    return rule.ledger_path(doc)


def discover(root: Path, governed: dict[str, Rule], ledgers: list[str], rules: RuleSet) -> list[Item]:
    check_shared_ledgers(governed, tracked(root), rules)
    items: dict[str, Item] = {}
    for doc, rule in governed.items():
        ledger = find_ledger(root, rule, doc)
        items.setdefault(ledger, Item(ledger, doc, rule, rule_authority(rule, root)))
    linked: dict[str, str] = {}
    for ledger in ledgers:
        if ledger in items:
            continue
        path = root / ledger
        source = None
        link = first_link(root, ledger)
        if link is not None:
            linked[ledger] = link
        elif path.is_file():
            source = Discussion.load(path, setting_of(root)).source
        rule = ledger_rule(rules, ledger, source)
        items[ledger] = Item(ledger, source if rule else None, rule,
                             rule_authority(rule, root) if rule else None)
    homeless = [i for i in items.values() if i.doc and i.ledger not in ledgers
                and not (root / i.ledger).exists()]
    if homeless:
        _follow_renames(root, homeless, items, rules)
    docs = [i.doc for i in items.values() if i.doc]
    entries = index_entries(root, docs)
    data = read_blobs(root, [blob for _mode, blob in entries.values()])
    found = []
    for item in items.values():
        problems = list(item.problems)
        link = linked.get(item.ledger) or first_link(root, item.ledger)
        if link is not None:
            problems.append(_link_problem(item.ledger, link, "the ledger"))
        doc_blob = doc_data = None
        if item.doc and item.doc in entries:
            mode, doc_blob = entries[item.doc]
            if mode == SYMLINK_MODE:
                problems.append(_link_problem(item.doc, item.doc, "the document"))
            else:
                doc_data = data.get(doc_blob)
        found.append(replace(item, problems=tuple(problems), doc_blob=doc_blob,
                             doc_data=doc_data))
    return found


def _staged_renames(root: Path) -> dict[str, str]:
    """The renames this commit stages, new path -> old path (git's own detection)."""
    out = git(root, "diff-index", "--cached", "-M", "-z", "--name-status", "HEAD", check=False)
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    renames, i = {}, 0
    while i < len(fields) - 1:
        status = fields[i]
        if status.startswith(("R", "C")):
            if status.startswith("R"):
                renames[fields[i + 2]] = fields[i + 1]
            i += 3
        else:
            i += 2
    return renames


def _follow_renames(root: Path, homeless: list[Item], items: dict[str, Item],
                    rules: RuleSet) -> None:
    """A document whose ledger does not exist yet, renamed in this commit from one whose
    ledger does: its discussion is that ledger (the hook appends there and asks for the
    ``git mv``), not a new one."""
    renames = _staged_renames(root)
    for item in homeless:
        old = renames.get(item.doc or "")
        rule = rules.governing(old) if old else None
        if old is None or rule is None:
            continue
        ledger = find_ledger(root, rule, old)
        if ledger == item.ledger or first_link(root, ledger) is not None:
            continue
        try:
            # its source is the old path, or already the new one (an earlier attempt of this
            # rename recorded it there)
            if not (root / ledger).is_file() or \
                    Discussion.load(root / ledger, setting_of(root)).source not in (old, item.doc):
                continue
        except CascadeError:
            continue
        del items[item.ledger]
        other = items.pop(ledger, None)  # the old ledger, staged in this commit too
        items[ledger] = replace(item, renamed_from=old, move_to=item.ledger, ledger=ledger,
                                problems=item.problems + (other.problems if other else ()))


def _link_problem(path: str, link: str, what: str) -> str:
    through = "is" if link == path else f"passes through {link}, which is"
    return (f"{path}:1: {what} {through} a symbolic link: cascade never follows one (commit "
            "the file itself)")
