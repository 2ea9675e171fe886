"""A decision record's own status, in each form the ADR tools write it: found, set (only
that line changes), and left out of what a review is about."""
from __future__ import annotations

import pytest

from cascade.base.docstatus import core, find, governs, set_status

FORMS = {
    "section": ("# X\n\n## Status\n\nProposed\n\n## Decision\n\nWe do X.\n", "Proposed",
                "\nAccepted\n"),
    "front matter": ("---\nstatus: proposed\n---\n# X\n\nWe do X.\n", "proposed",
                     "status: Accepted\n"),
    "bullet": ("# X\n\n* Status: proposed\n* Date: 2026\n\nWe do X.\n", "proposed",
               "* Status: Accepted\n"),
    "table row": ("# X\n\n| | |\n|---|---|\n| Date | 2026 |\n| **Status** | Proposed |\n\nWe do X.\n",
                  "Proposed", "| **Status** | Accepted |\n"),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_each_form_is_found_set_and_left_out_of_the_core(form):
    text, value, after = FORMS[form]
    found = find(text)
    assert found is not None and found.value == value
    moved = set_status(text, "Accepted")
    assert after in moved
    assert moved.replace(after, "") == text.replace(after.replace("Accepted", value), "")
    assert core(moved.encode()) == core(text.encode())
    assert core(text.replace("We do X.", "We do Y.").encode()) != core(text.encode())


def test_a_status_column_header_is_not_a_status():
    text = "# X\n\n| Status | Meaning |\n|---|---|\n| Proposed | open |\n"
    assert find(text) is None
    with pytest.raises(ValueError):
        set_status(text, "Accepted")


def test_a_status_in_a_code_fence_is_not_the_documents():
    text = "# X\n\n```\n| Status | Proposed |\n## Status\n```\n\n* Status: accepted\n"
    found = find(text)
    assert found is not None and (found.form, found.value) == ("bullet", "accepted")


@pytest.mark.parametrize(("text", "paths", "line"), [
    ("---\nstatus: accepted\ngoverns:\n  - src/db/**\n  - 'lib/*.py'\n---\n# X\n",
     ("src/db/**", "lib/*.py"), 3),
    ("---\ngoverns: [src/a/**, \"b.py\"]\n---\n# X\n", ("src/a/**", "b.py"), 2),
    ("---\ngoverns: src/a/**\n---\n# X\n", ("src/a/**",), 2),
    ("# 1. X\n\nDate: 2026-01-02\nGoverns: `src/**`, tools/x.sh\n\n## Status\n\nAccepted\n",
     ("src/**", "tools/x.sh"), 4),
    ("# X\n\n* Status: accepted\n* **Governs:** src/**\n", ("src/**",), 4),
    ("# X\n\n| Status | Accepted |\n| Governs | src/**, api/* |\n", ("src/**", "api/*"), 4),
    ("# X\n\n## Governs\n\n- src/a/**\n- src/b.py\n\n## Context\n\nGoverns: no\n",
     ("src/a/**", "src/b.py"), 3),
])
def test_governs_in_each_form(text, paths, line):
    found = governs(text)
    assert found is not None and (found.paths, found.line, found.bad) == (paths, line, "")


def test_governs_in_a_code_block_or_nowhere_is_none():
    assert governs("# X\n\n```\nGoverns: src/**\n```\n") is None
    assert governs("# X\n\nWe do X.\n") is None
    assert governs("---\ngoverns: {src: db}\n---\n").bad == "{src: db}"
