"""Answers close questions, DONE closes action items: on real ledgers written with the CLI.

The rule (cascade.ledger.parse's docstring): questions are numbered Q1, Q2... and TODO/ASSIGNED
items T1, T2... in ledger order; ``A(Qn):`` answers question n, ``A:`` the first open question
of the latest comment with one asked by someone else; ``DONE(Tn):`` closes item n,
``DONE: text`` the open item whose text it repeats or starts with.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from cascade import Discussion

PATH = "discussions/x.discussion.md"


@pytest.fixture
def say(repo, cli):
    """``say(author, text)``: one comment on a fresh review-protocol ledger, via the CLI."""
    assert cli("new", "X", "--protocol", "review")[0] == 0

    def _say(author: str, text: str, *extra: str) -> None:
        code, _, err = cli("comment", PATH, text, "--author", author, *extra)
        assert code == 0, err
    return _say


def questions() -> list[tuple[str, str, str | None]]:
    """(id, status, text of the answer that closed it) of every question."""
    return [(q["id"], q["status"], q["answer"]["text"] if q["answer"] else None)
            for q in Discussion.load(PATH).questions]


def todos() -> list[tuple[str | None, str, str, str | None]]:
    return [(t["id"], t["kind"], t["status"], t.get("item"))
            for t in Discussion.load(PATH).todos]


# ---- answers ----------------------------------------------------------------------------------

def test_plain_answer_answers_the_latest_comments_open_question(say) -> None:
    say("Ann", "Q: JWT or cookies?")
    say("Bob", "Q: What expiry?")
    say("Cy", "A: one hour")
    assert questions() == [("Q1", "open", None), ("Q2", "answered", "one hour")]
    say("Cy", "A: JWT")  # Q2 is answered: the next latest open one
    assert questions() == [("Q1", "answered", "JWT"), ("Q2", "answered", "one hour")]
    say("Cy", "A: nothing is left open")
    assert [a["question"] for a in Discussion.load(PATH).answers] == ["Q2", "Q1", None]


def test_plain_answers_take_the_latest_comments_questions_in_order(say) -> None:
    say("Ann", "Q: JWT or cookies?\nQ: What expiry?")
    say("Bob", "A: JWT")  # a reply to a comment with two questions answers the first
    assert questions() == [("Q1", "answered", "JWT"), ("Q2", "open", None)]
    say("Bob", "A: one hour")
    assert questions() == [("Q1", "answered", "JWT"), ("Q2", "answered", "one hour")]


def test_several_plain_answers_in_one_block_mean_what_separate_comments_would(say) -> None:
    say("Ann", "Q: JWT or cookies?\nQ: What expiry?")
    say("Bob", "Q: Which database?")
    say("Cy", "A: Postgres\n\nA: JWT\nA: one hour\nA: one too many")
    assert questions() == [("Q1", "answered", "JWT"), ("Q2", "answered", "one hour"),
                           ("Q3", "answered", "Postgres")]
    assert Discussion.load(PATH).answers[-1]["question"] is None


def test_answer_by_number(say) -> None:
    say("Ann", "Q: JWT or cookies?")
    say("Bob", "Q: What expiry?")
    say("Cy", "A(Q1): JWT\nA: one hour")  # the numbered one first; the plain one takes Q2
    assert questions() == [("Q1", "answered", "JWT"), ("Q2", "answered", "one hour")]


def test_answer_by_the_asker(say) -> None:
    say("Ann", "Q: JWT or cookies?")
    say("Ann", "A: cookies")  # a plain answer never answers its own author's question
    assert questions() == [("Q1", "open", None)]
    say("ann", "A: still not mine")  # the same person, however the name is cased
    assert questions() == [("Q1", "open", None)]
    say("Ann", "A(Q1): found it: cookies")  # by number, the asker can close it
    assert questions() == [("Q1", "answered", "found it: cookies")]
    assert [a["question"] for a in Discussion.load(PATH).answers] == [None, None, "Q1"]


def test_answering_an_answered_question(say) -> None:
    say("Ann", "Q: JWT or cookies?")
    say("Bob", "A: JWT")
    say("Cy", "A: cookies")  # nothing open: answers nothing
    say("Cy", "A(Q1): cookies, really")  # by number: kept as a further answer
    [q] = Discussion.load(PATH).questions
    assert q["status"] == "answered"
    assert q["answer"]["text"] == "JWT"  # the first answer closed it
    assert [(a["text"], a["author"]) for a in q["answers"]] == [("JWT", "Bob"),
                                                                 ("cookies, really", "Cy")]
    assert [a["question"] for a in Discussion.load(PATH).answers] == ["Q1", None, "Q1"]


def test_answer_never_reaches_forward_or_into_code(say) -> None:
    say("Bob", "A(Q1): too early\nA: too early as well")
    say("Ann", "Q: JWT or cookies?")
    say("Bob", "```\nA: in a fence\n```\n> A: quoted\nA(Q9): no such question")
    assert questions() == [("Q1", "open", None)]
    assert [a["question"] for a in Discussion.load(PATH).answers] == [None, None, None]


# ---- DONE -------------------------------------------------------------------------------------

def test_done_matches_by_text_prefix_and_number(say) -> None:
    say("Ann", "TODO: Write the migration plan\nTODO: write tests\nTODO: write tests for parse\n"
               "ASSIGNED: @rob rotate the keys\nTODO: benchmark")
    say("Rob", "DONE: write the migration plan, see #12")  # starts with T1's text
    say("Rob", "DONE: Write tests for parse.")  # the longest match: T3, not T2
    say("Rob", "DONE: rotate the keys")  # the item's leading @mention aside
    say("Rob", "DONE: benchmarks")  # not at a word boundary: closes nothing
    say("Rob", "DONE(T2): all of them")
    assert todos() == [
        ("T1", "TODO", "done", None), ("T2", "TODO", "done", None),
        ("T3", "TODO", "done", None), ("T4", "ASSIGNED", "done", None),
        ("T5", "TODO", "open", None),
        (None, "DONE", "done", "T1"), (None, "DONE", "done", "T3"),
        (None, "DONE", "done", "T4"), (None, "DONE", "done", None),
        (None, "DONE", "done", "T2"),
    ]
    t1 = Discussion.load(PATH).todos[0]
    assert t1["done"]["author"] == "Rob"
    assert t1["done"]["text"] == "write the migration plan, see #12"


def test_done_prefers_an_open_item_and_never_reaches_forward(say) -> None:
    say("Rob", "DONE: deploy")
    say("Ann", "TODO: deploy")
    assert todos() == [(None, "DONE", "done", None), ("T1", "TODO", "open", None)]
    say("Ann", "TODO: deploy")
    say("Rob", "DONE: deploy")  # T1 and T2 match: the oldest open one
    say("Rob", "DONE: deploy")  # then the other
    say("Rob", "DONE: deploy")  # both done: refers to the longest, oldest
    assert todos()[1:] == [("T1", "TODO", "done", None), ("T2", "TODO", "done", None),
                           (None, "DONE", "done", "T1"), (None, "DONE", "done", "T2"),
                           (None, "DONE", "done", "T1")]


# ---- status and summary -----------------------------------------------------------------------

@pytest.fixture
def ledger(say):
    say("Ann", "Q: JWT or cookies?\nQ: What expiry?\nTODO: write docs\nTODO: benchmark")
    say("Bob", "A: JWT\nDONE: write docs")
    say("Cy", "A(Q7): strays nowhere")
    return PATH


def test_status_text(ledger, cli) -> None:
    code, out, _ = cli("status", ledger)
    assert code == 0
    lines = out.splitlines()
    start = lines.index("Open Questions (1):")
    assert lines[start:start + 2] == ["Open Questions (1):", "  Q2: What expiry? (Ann)"]
    start = lines.index("Answered Questions (1):")
    assert lines[start:start + 3] == ["Answered Questions (1):", "  Q1: JWT or cookies? (Ann)",
                                      "    A: JWT (Bob)"]
    assert "Answers to no question (1):" in lines
    start = lines.index("Action Items (2):")
    assert lines[start:start + 3] == ["Action Items (2):",
                                      "  T1 TODO: write docs (Ann) [done by Bob]",
                                      "  T2 TODO: benchmark (Ann)"]


def test_status_json(ledger, cli) -> None:
    code, out, _ = cli("status", "--json", ledger)
    assert code == 0
    data = json.loads(out)["discussions"][0]
    q1, q2 = data["questions"]
    lines = Path(ledger).read_text().split("\n")
    assert q1 == {"id": "Q1", "text": "JWT or cookies?", "author": "Ann", "status": "answered",
                  "line": lines.index("Q: JWT or cookies?") + 1,
                  "answer": {"text": "JWT", "author": "Bob", "line": lines.index("A: JWT") + 1},
                  "answers": [{"text": "JWT", "author": "Bob",
                               "line": lines.index("A: JWT") + 1}]}
    assert (q2["id"], q2["status"], q2["answer"], q2["answers"]) == ("Q2", "open", None, [])
    assert [(a["text"], a["question"]) for a in data["answers"]] == [
        ("JWT", "Q1"), ("strays nowhere", None)]
    assert [(t["id"], t["kind"], t["status"], t["done"] and t["done"]["author"])
            for t in data["todos"] if t["kind"] == "TODO"] == [
        ("T1", "TODO", "done", "Bob"), ("T2", "TODO", "open", None)]
    assert [(t["id"], t["item"]) for t in data["todos"] if t["kind"] == "DONE"] == [(None, "T1")]


def test_summary(ledger, cli) -> None:
    assert cli("summary", ledger)[0] == 0
    text = Path("discussions/x.discussion.sum.md").read_text()
    assert "## Open questions\n\n- Q2: What expiry? (Ann)\n\n" in text
    assert "## Answered questions\n\n- Q1: JWT or cookies? (Ann)\n  - A: JWT (Bob)\n\n" in text
    assert ("## Action items\n\n- [x] T1 TODO: write docs (Ann), done by Bob: write docs\n"
            "- [ ] T2 TODO: benchmark (Ann)\n\n") in text
