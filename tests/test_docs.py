"""The user documentation: a README a team reads in its first five minutes (short, its
Quickstart the two command blocks CI runs), reference pages in docs/ whose relative links and
anchors resolve, and no internal tracking numbers anywhere a user reads."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO

README = REPO / "README.md"
USER_DOCS = [README, *sorted((REPO / "docs").glob("*.md"))]

# "issue 23", "issues #5", "(#23)", "seed 002", "seed 00": a number that tracks work, not text.
INTERNAL = re.compile(r"\b(?:issue|seed)s?\s*#?\d|\(#\d+\)", re.IGNORECASE)
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def quickstart_blocks(text: str) -> tuple[int, list[str]]:
    """(fenced blocks, bash/sh command blocks) under "## Quickstart", read as .ci/run reads it."""
    section = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    fences = re.findall(r"^```", section, re.MULTILINE)
    return len(fences) // 2, re.findall(r"```(?:bash|sh)\n(.*?)```", section, re.DOTALL)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    for line in FENCE.sub("", text).splitlines():
        m = re.match(r"#{1,6} (.+)", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            seen.setdefault(f"{base}-{n}" if n else base, 1)
    return set(seen)


def broken_links(path: Path) -> list[str]:
    """Each relative link of a markdown file whose file or heading does not exist."""
    text = FENCE.sub("", path.read_text())
    text = re.sub(r"`[^`\n]*`", "", text)
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        missing_anchor = (dest.exists() and anchor and dest.suffix == ".md"
                          and anchor not in anchors(dest.read_text()))
        if not dest.exists() or missing_anchor:
            broken.append(target)
    return broken


def test_the_readme_is_short():
    lines = README.read_text().count("\n")
    assert lines <= 260, f"README.md has {lines} lines: move reference text to docs/"


def test_the_quickstart_is_the_demo_then_the_tests():
    count, blocks = quickstart_blocks(README.read_text())
    assert count == 2 and len(blocks) == 2, (count, blocks)
    assert "cascade demo" in blocks[0]
    assert "-m pytest" in blocks[1]


def test_the_quickstart_leads_with_a_key_then_a_first_review():
    """The path most teams take comes first -- their own key or endpoint, init, a commit --
    then the offline demo and the tests, the Quickstart's two commands."""
    section = README.read_text().split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    lead = section.split("```", 1)[0]
    for said in ("pip install cascadingdev", "CASCADE_MODEL=", "cascade init",
                 "(#point-it-at-a-model)", "(#a-first-review)"):
        assert said in lead, said
    assert lead.index("CASCADE_MODEL=") < lead.index("offline")


def test_the_quickstart_reader_counts_blocks():
    text = "# X\n\n## Quickstart\n\n```bash\na\n```\n\n```bash\nb\n```\n\n```text\nc\n```\n\n## Next\n"
    assert quickstart_blocks(text) == (3, ["a\n", "b\n"])


@pytest.mark.parametrize("path", USER_DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_user_docs_cite_no_internal_numbers(path):
    found = [(n, line.strip()) for n, line in enumerate(path.read_text().splitlines(), 1)
             if INTERNAL.search(line)]
    assert not found, found


@pytest.mark.parametrize("text, internal", [
    ("Adoption and daily use (issue 10): init finds", True),
    ("fixed in issue #5", True),
    ("One engine (#23)", True),
    ("Running turns from Python (seed 002's API)", True),
    ("the seed 00 design", True),
    ("SEED 3", True),
    ("The admin issues each developer a key.", False),
    ("the next round, seeded with a summary of at most 1,000 characters", False),
    ("a known issue: the lock", False),
    ("see [ci.md](ci.md#3-a-ledger-header-that-differs-from-its-rule)", False),
])
def test_the_internal_reference_pattern(text, internal):
    assert bool(INTERNAL.search(text)) is internal


@pytest.mark.parametrize("path", USER_DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_user_docs_links_resolve(path):
    assert broken_links(path) == []


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "a.md").write_text("# Title\n\n## Some `code` here: yes\n\n```\n# not a heading\n```\n")
    (tmp_path / "b.md").write_text(
        "[ok](a.md) [ok](a.md#some-code-here-yes) [ok](#local) [web](https://example.com/x)\n"
        "`[not a link](nowhere.md)`\n\n## Local\n\n"
        "[gone](missing.md) [bad anchor](a.md#nope) [fenced](a.md#not-a-heading)\n")
    assert broken_links(tmp_path / "b.md") == ["missing.md", "a.md#nope", "a.md#not-a-heading"]
