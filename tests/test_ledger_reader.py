"""cascade.check.governance.LedgerReader reads many ledgers as ``open_at(path, *resolve(path))``
reads each one -- the same rule, authority and state -- with the rules read once and each
ledger parsed once: for a governed ledger, for one whose document was renamed (its rule
found from where the document is now), for one no rule governs, and for one that cannot be
read. Real repositories and the real hook (tests/test_revisions.py's)."""
from __future__ import annotations

import subprocess

import pytest
from conftest import git
from inproc import commit
from test_hook import DOC, LEDGER, install_plain, loop_repo, script  # noqa: F401
from test_revisions import NEW_DOC, NEW_LEDGER, accepted, hint  # noqa: F401

from cascade.check.governance import LedgerReader, open_discussion
from cascade.ui import view_data as model

# the `accepted` fixture follows the hook's hints git add by git add (tests/test_revisions.py)
pytestmark = pytest.mark.usefixtures("hook_stages_nothing")

def same(repo, *ledgers: str) -> None:
    reader = LedgerReader(repo)
    for ledger in ledgers:
        fast, exact = reader.open(repo / ledger), open_discussion(str(repo / ledger))
        assert fast.authority == exact.authority and fast.source == exact.source
        assert fast.state.result == exact.state.result
        assert model.row(repo / ledger, reader) == model.row(repo / ledger)


def test_a_governed_ledger_and_a_renamed_document(request):
    repo = request.getfixturevalue("accepted")
    same(repo, LEDGER)
    assert LedgerReader(repo).open(repo / LEDGER).authority.where.startswith("rule 'adr'")
    git(repo, "mv", DOC, NEW_DOC)
    step = hint(commit(repo).out)
    assert subprocess.run(["bash", "-c", step], cwd=repo, check=False).returncode == 0
    assert commit(repo).returncode == 0
    same(repo, NEW_LEDGER)  # its header names the old path; its rule is the new path's


def test_a_ledger_no_rule_governs_and_one_that_cannot_be_read(request):
    repo = request.getfixturevalue("accepted")
    (repo / "notes").mkdir()
    (repo / "notes/x.discussion.md").write_text((repo / LEDGER).read_text())
    same(repo, "notes/x.discussion.md")
    (repo / "notes/bad.discussion.md").write_bytes(b"\xff\xfe not utf-8")
    row = model.row(repo / "notes/bad.discussion.md", LedgerReader(repo))
    assert row.error and row == model.row(repo / "notes/bad.discussion.md")
