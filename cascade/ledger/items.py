"""What a ledger's comments say beyond votes: questions and their answers, action items and
what closed them, decisions, concerns, mentions -- read from the markers the parser found
(the rules are in cascade.ledger.parse). Pure functions of the comments, in ledger order."""
from __future__ import annotations

import re
from typing import Any

from cascade.ledger.records import Comment, Marker

_LEADING_MENTIONS = re.compile(r"[ \t]*(?:@[\w.-]+[ \t,:]*)+")


def _person(name: str) -> str:
    return " ".join(name.split()).casefold()


def _item_key(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(" .!?;:,")


def _numbered(items: list[dict[str, Any]], ref: str) -> dict[str, Any] | None:
    number = int(ref[1:])
    return items[number - 1] if 1 <= number <= len(items) else None


def _done_target(items: list[dict[str, Any]], text: str) -> dict[str, Any] | None:
    """The item a plain ``DONE: text`` closes: of the items its text repeats or starts with
    (at a word boundary), the open ones first, then the longest text, then the oldest."""
    done = _item_key(text)
    best: tuple[tuple[bool, int], dict[str, Any]] | None = None
    for item in items:
        keys = {_item_key(item["text"])}
        lead = _LEADING_MENTIONS.match(item["text"])
        if lead:
            keys.add(_item_key(item["text"][lead.end():]))
        length = max((len(k) for k in keys if k and done.startswith(k)
                      and (len(done) == len(k) or not done[len(k)].isalnum())), default=0)
        if length:
            rank = (item["status"] == "open", length)
            if best is None or rank > best[0]:
                best = (rank, item)
    return best[1] if best else None


def _markers(comments: list[Comment], kind: str) -> list[Marker]:
    return [m for c in comments for m in c.markers if m.kind == kind]


def questions_and_answers(comments: list[Comment]
                          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every ``Q:``, numbered Q1, Q2... in ledger order: open, or answered by ``A:`` /
    ``A(Qn):`` (``answer``: the answer that closed it, ``answers``: every answer in ledger
    order); and every ``A:`` marker, with the question it answers (``"Q2"``, or None)."""
    questions: list[dict[str, Any]] = []
    answers: list[dict[str, Any]] = []

    def attach(answer: dict[str, Any], question: dict[str, Any]) -> None:
        answer["question"] = question["id"]
        given = {k: answer[k] for k in ("text", "author", "line")}
        question["answers"].append(given)
        if question["answer"] is None:
            question["answer"] = given
            question["status"] = "answered"

    asked_in: list[int] = []  # for each question, the index of its comment
    for index, c in enumerate(comments):
        plain: list[dict[str, Any]] = []
        for m in c.markers:
            if m.kind == "Q":
                asked_in.append(index)
                questions.append({"id": f"Q{len(questions) + 1}", "text": m.text,
                                  "author": m.author, "status": "open", "line": m.line,
                                  "answer": None, "answers": []})
            elif m.kind == "A" and not (m.ref or "Q").startswith("F"):  # A(F2): a finding's
                answer = {"text": m.text, "author": m.author, "line": m.line,
                          "question": None}
                answers.append(answer)
                if m.ref is None:
                    plain.append(answer)
                elif 1 <= int(m.ref[1:]) <= len(questions):  # asked before this line
                    attach(answer, questions[int(m.ref[1:]) - 1])
        me = _person(c.author)
        for answer in plain:  # the first open question of the latest comment with one
            latest = next((k for k in range(len(questions) - 1, -1, -1)
                           if questions[k]["status"] == "open"
                           and _person(questions[k]["author"]) != me), None)
            if latest is None:
                break
            first = k = latest
            while k > 0 and asked_in[k - 1] == asked_in[latest]:
                k -= 1
                if questions[k]["status"] == "open":
                    first = k
            attach(answer, questions[first])
    return questions, answers


def decisions(comments: list[Comment]) -> list[dict[str, Any]]:
    """Every ``DECISION:``, once per text (case, spacing and a final period aside), with the
    authors who wrote it."""
    found: dict[str, dict[str, Any]] = {}
    for m in _markers(comments, "DECISION"):
        key = " ".join(m.text.lower().split()).rstrip(".")
        entry = found.setdefault(key, {"text": m.text, "author": m.author,
                                       "supporters": [], "line": m.line})
        if m.author not in entry["supporters"]:
            entry["supporters"].append(m.author)
    return list(found.values())


def concerns(comments: list[Comment]) -> list[dict[str, Any]]:
    return [{"text": m.text, "author": m.author, "line": m.line}
            for m in _markers(comments, "CONCERN")]


def todos(comments: list[Comment]) -> list[dict[str, Any]]:
    """TODO and ASSIGNED items, numbered T1, T2... in ledger order, and the DONE markers,
    in ledger order. An item is done when a later ``DONE(Tn):`` names it or a later
    ``DONE:`` repeats its text (the rule is in cascade.ledger.parse): ``done`` is the DONE
    that closed it. A DONE entry's ``item`` is the item it refers to (None: none)."""
    items: list[dict[str, Any]] = []
    numbered: list[dict[str, Any]] = []
    for c in comments:
        for m in c.markers:
            if m.kind in ("TODO", "ASSIGNED"):
                item = {"id": f"T{len(numbered) + 1}", "text": m.text, "author": m.author,
                        "kind": m.kind, "status": "open", "line": m.line, "done": None}
                numbered.append(item)
                items.append(item)
            elif m.kind == "DONE":
                target = (_numbered(numbered, m.ref) if m.ref is not None
                          else _done_target(numbered, m.text))
                items.append({"id": None, "text": m.text, "author": m.author,
                              "kind": "DONE", "status": "done", "line": m.line,
                              "item": target["id"] if target else None})
                if target is not None and target["done"] is None:
                    target["done"] = {"text": m.text, "author": m.author, "line": m.line}
                    target["status"] = "done"
    return items


def mentions(comments: list[Comment]) -> list[dict[str, Any]]:
    return [{"alias": alias, "by": c.author, "line": c.line}
            for c in comments for alias in c.mentions]
