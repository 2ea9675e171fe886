"""An anonymised peer ranking, as data: a protocol's step with visibility ``anonymous`` and a
``ranking`` field shows each advisor the others' answers without names, labelled and
shuffled per reader (the same on a rerun), reads its ranking tolerantly, and the tool writes
the Borda count as the step's table, which the referee's step is shown -- end to end over
HTTP to the fake endpoint, in a repository's own protocol file."""
from __future__ import annotations

import json
import re
import shutil

import inproc
import pytest
import test_hook
from conftest import REPO, git
from council_script import Council

from cascade import Discussion

TOPIC = "Should we rewrite the billing service?"
LEDGER = "discussions/should-we-rewrite-the-billing-service.discussion.md"
ADVISORS = ("AI-Pragmatist", "AI-Visionary", "AI-Skeptic")
TOKENS = {"AI-Pragmatist": "token-alpha", "AI-Visionary": "token-bravo",
          "AI-Skeptic": "token-charlie"}

RANKED = """\
name: ranked
title: Ranked council
description: Advisors answer blind, rank each other's answers without names; a referee decides.
participants: {min: 2, max: 5, default: 3, personas: [pragmatist, visionary, skeptic]}
roles:
  - {id: advisor, title: Advisor, from: participants, tier: fast}
  - {id: referee, title: Referee, persona: referee, tier: strong, weighs: [advisor]}
rounds: {min: 1, max: 1, exit: scheduled}
outcome: referee
steps:
  - id: advise
    title: Advice
    role: advisor
    visibility: blind
    words: 300
    fields: {position: text}
    reads: {position: position}
    instructions: Advise on the topic through your own lens.
  - id: rank
    title: Peer ranking
    role: advisor
    visibility: anonymous
    sees: [advise]
    words: 100
    table: Peer ranking
    fields: {ranking: ranking}
    instructions: |
      Rank the answers shown, best first, by their labels in "ranking"; say why in "comment".
after:
  - id: verdict
    title: Verdict
    role: referee
    visibility: history
    shows: [peer-ranking]
    words: 400
    fields:
      verdict: [READY, CHANGES, REJECT]
      minority: text
    reads: {minority: minority}
    instructions: Weigh the advice and decide.
"""

LABELLED = re.compile(r"<<<material (\w+): Answer ([A-Z]) by a participant \(advise\)>>>\n"
                      r"(.*?)\n<<<end \1>>>", re.DOTALL)


class Ranked(Council):
    """Each advisor's advice carries its token (never its name); each ranking is what
    ``ballots[name]`` says in terms of the tokens it was shown (best first), given back as
    the labels the reader saw -- or ``raw[name]`` as it is."""

    def __init__(self, fake) -> None:
        super().__init__(fake)
        self.ballots: dict[str, list[str]] = {}
        self.raw: dict[str, object] = {}
        self.labels: dict[str, dict[str, str]] = {}  # reader -> label -> token shown

    def reply(self, name: str, step: str, round_: int, text: str) -> str:
        if step == "Advice":
            return json.dumps({"comment": f"Advice {TOKENS[name]}: keep the ledger.",
                               "position": f"position {TOKENS[name]}"})
        if step == "Peer ranking":
            shown = {label: next(t for t in TOKENS.values() if t in body)
                     for _, label, body in LABELLED.findall(text)}
            self.labels[name] = shown
            by_token = {t: label for label, t in shown.items()}
            ranking = self.raw.get(name, [by_token[t] for t in self.ballots.get(name, [])])
            return json.dumps({"comment": "Ranked.", "ranking": ranking})
        return super().reply(name, step, round_, text)


@pytest.fixture
def ranked(repo, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fast")
    monkeypatch.setenv("CASCADE_MODEL_STRONG", "openai/strong")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    (repo / ".cascade" / "protocols").mkdir(parents=True)
    (repo / ".cascade" / "protocols" / "ranked.yml").write_text(RANKED)
    return Ranked(fake_llm)


def _discuss(cli):
    code, out, err = cli("discuss", TOPIC, "--protocol", "ranked", "--auto")
    assert code == 0, out + err
    return out


def test_each_ranks_the_others_without_names_and_the_tool_counts_borda(repo, cli, ranked):
    # pragmatist ranks bravo over charlie; visionary: alpha over charlie; skeptic: alpha
    # over bravo -> alpha 2, bravo 1, charlie 0 (and alpha has two first places)
    ranked.ballots = {"AI-Pragmatist": ["token-bravo", "token-charlie"],
                      "AI-Visionary": ["token-alpha", "token-charlie"],
                      "AI-Skeptic": ["token-alpha", "token-bravo"]}
    out = _discuss(cli)
    d = Discussion.load(repo / LEDGER, root=repo)
    msg = {TOKENS[t.name]: t.msg for t in d.state.run.turns if t.step == "advise"}
    asked = {n: text for n, s, r, text in ranked.seen if s == "Peer ranking"}
    assert sorted(asked) == sorted(ADVISORS)
    for name, text in asked.items():
        shown = ranked.labels[name]
        # by message id: the others' answers, never its own, labelled A and B
        assert sorted(msg[t] for t in shown.values()) == sorted(
            msg[TOKENS[n]] for n in ADVISORS if n != name), name
        assert sorted(shown) == ["A", "B"]
        assert TOKENS[name] not in text  # its own answer is not shown
        blocks = "\n".join(body for _, _, body in LABELLED.findall(text))
        assert len(LABELLED.findall(text)) == 2  # each labelled "by a participant"
        assert not any(n in blocks for n in ADVISORS), blocks  # no name in what is shown
        assert not any(m in text for m in msg.values())  # no message id either
        assert "The earlier rounds, in short" not in text  # no summary naming anyone
        assert "without their names" in text
    # the ranking is stamped as the message ids the labels stood for
    turns = {t.name: t for t in d.state.run.turns if t.step == "rank"}
    assert turns["AI-Skeptic"].fields["ranking"] == (f"{msg['token-alpha']} > "
                                                    f"{msg['token-bravo']}")
    # the Borda table the tool writes, places by points
    table = [c for c in d.comments if c.author == "Cascade"][-1].body
    rows = [r for r in table.splitlines() if r.startswith("| ") and r[2].isdigit()]
    assert rows == [f"| 1 | {msg['token-alpha']} | AI-Pragmatist | 2 | 2 |",
                    f"| 2 | {msg['token-bravo']} | AI-Visionary | 1 | 1 |",
                    f"| 3 | {msg['token-charlie']} | AI-Skeptic | 0 | 0 |"], table
    assert "Borda count of 3 ballots" in table and "Tie:" not in table
    assert "Borda count of 3 ballots" in out
    # what a later step reads: the referee is shown the count
    referee = next(text for n, s, r, text in ranked.seen if s == "Verdict")
    assert "peer ranking (Borda count), round 1" in referee
    assert f"| 1 | {msg['token-alpha']} | AI-Pragmatist | 2 | 2 |" in referee


def test_the_shuffle_is_per_reader_and_a_rerun_shows_the_same(repo, cli, ranked, fake_llm,
                                                              monkeypatch, tmp_path):
    ranked.ballots = {n: [] for n in ADVISORS}
    monkeypatch.setenv("CASCADE_CACHE_DIR", str(tmp_path / "cache-1"))
    _discuss(cli)
    first = dict(ranked.labels)
    prompts = {n: t for n, s, r, t in ranked.seen if s == "Peer ranking"}
    shutil.rmtree(repo / "discussions")
    ranked.labels.clear()
    ranked.seen.clear()
    monkeypatch.setenv("CASCADE_CACHE_DIR", str(tmp_path / "cache-2"))  # asked again
    _discuss(cli)
    assert ranked.labels == first  # the same labels for the same answers
    assert {n: t for n, s, r, t in ranked.seen if s == "Peer ranking"} == prompts
    # shuffled per reader: not every reader is shown the answers in one order (by token)
    orders = {n: [first[n][x] for x in sorted(first[n])] for n in ADVISORS}
    assert any(o != sorted(o) for o in orders.values()), orders


def test_a_ranking_is_read_tolerantly_and_a_tie_is_broken_and_said(repo, cli, ranked):
    # the pragmatist gives a label it was not shown and leaves one out; the visionary writes
    # its ranking as text; the skeptic gives nothing
    ranked.raw = {"AI-Pragmatist": ["Answer Z", "answer b"], "AI-Visionary": "A > B",
                  "AI-Skeptic": []}
    out = _discuss(cli)
    d = Discussion.load(repo / LEDGER, root=repo)
    turns = {t.name: t for t in d.state.run.turns if t.step == "rank"}
    shown = ranked.labels
    msg = {TOKENS[t.name]: t.msg for t in d.state.run.turns if t.step == "advise"}
    prag = turns["AI-Pragmatist"]
    assert prag.fields["ranking"] == msg[shown["AI-Pragmatist"]["B"]]
    assert prag.fields["ranking.unranked"] == msg[shown["AI-Pragmatist"]["A"]]
    assert ("AI-Pragmatist: ranking: 'Answer Z' not among the answers shown (A, B): dropped; "
            "Answer A not ranked: ranked last") in out
    vis = turns["AI-Visionary"]
    assert vis.fields["ranking"] == " > ".join(msg[shown["AI-Visionary"][x]] for x in "AB")
    assert "AI-Skeptic: ranking: Answer A, Answer B not ranked: ranked last" in out
    expected = {m: 0 for m in msg.values()}
    expected[msg[shown["AI-Pragmatist"]["B"]]] += 1  # first of two: 1 point
    expected[msg[shown["AI-Visionary"]["A"]]] += 1
    table = [c for c in d.comments if c.author == "Cascade"][-1].body
    rows = [r.split(" | ") for r in table.splitlines() if r.startswith("| ") and r[2].isdigit()]
    assert {row[1]: int(row[3]) for row in rows} == expected, table


def test_a_tie_is_broken_by_first_places_then_the_earlier_answer_and_said(repo, cli, ranked):
    # each ballot puts a different answer first: three answers tied on 1 point and 1 first
    # place each, placed in the ledger's order
    ranked.ballots = {"AI-Pragmatist": ["token-bravo", "token-charlie"],
                      "AI-Visionary": ["token-charlie", "token-alpha"],
                      "AI-Skeptic": ["token-alpha", "token-bravo"]}
    _discuss(cli)
    d = Discussion.load(repo / LEDGER, root=repo)
    advice = [t for t in d.state.run.turns if t.step == "advise"]  # in the ledger's order
    table = [c for c in d.comments if c.author == "Cascade"][-1].body
    rows = [r for r in table.splitlines() if r.startswith("| ") and r[2].isdigit()]
    assert rows == [f"| {i} | {t.msg} | {t.name} | 1 | 1 |" for i, t in enumerate(advice, 1)]
    assert ("Tie: " + " and ".join(f"{t.msg} ({t.name})" for t in advice)
            + " tie on 1 point: placed by the earlier answer.") in table, table


def test_a_bad_ranking_declaration_is_one_line(repo, cli, ranked):
    (repo / ".cascade" / "protocols" / "ranked.yml").write_text(
        RANKED.replace("fields: {ranking: ranking}", "fields: {ranking: {ranking: 3}}"))
    code, _, err = cli("plan", "--protocol", "ranked")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "ranked.yml:" in err and "field 'ranking'" in err


def test_plan_lists_the_ranking_step_and_its_speakers_as_independent(repo, cli, ranked):
    code, out, err = cli("plan", "--protocol", "ranked")
    assert code == 0, err
    assert "Peer ranking advisor      anonymous" in out, out
    assert ("warning: steps Advice and Peer ranking, answered independently: pragmatist, "
            "visionary and skeptic (advisor) share the model family 'fast'") in out, out


def _council_ranked() -> str:
    """The bundled council with a peer ranking after the advice, the referee shown its count."""
    text = (REPO / "protocols" / "council.yml").read_text().replace("name: council",
                                                                    "name: council-ranked")
    rank = ("  - id: rank\n    title: Peer ranking\n    role: advisor\n    visibility: anonymous\n"
            "    sees: [advise]\n    words: 100\n    table: Peer ranking\n"
            "    fields: {ranking: ranking}\n"
            "    instructions: Rank the answers shown, best first, by their labels.\n")
    text = text.replace("  - id: ideate\n", rank + "  - id: ideate\n", 1)
    return text.replace("    visibility: history\n", "    visibility: history\n"
                        "    shows: [peer-ranking]\n", 1)


def test_a_council_variant_ranks_in_every_round_of_a_debate(repo, cli, ranked):
    """A flow's phases set the advice's visibility (blind openings, cross-rebuttals); the
    ranking keeps its own: each round, each advisor ranks the others' advice of that round."""
    (repo / ".cascade" / "protocols" / "council-ranked.yml").write_text(_council_ranked())
    ranked.ballots = {n: [] for n in ADVISORS}
    seen: dict[tuple[str, int], dict[str, str]] = {}
    inner = ranked.reply

    def reply(name, step, round_, text):
        out = inner(name, step, round_, text)
        if step == "Peer ranking":
            seen[(name, round_)] = dict(ranked.labels[name])
        return out

    ranked.reply = reply
    code, out, err = cli("discuss", TOPIC, "--protocol", "council-ranked", "--flow", "debate",
                         "--auto")
    assert code == 0, out + err
    assert sorted(seen) == sorted((n, r) for n in ADVISORS for r in (1, 2, 3))
    for (name, round_), shown in seen.items():
        assert sorted(shown.values()) == sorted(TOKENS[n] for n in ADVISORS if n != name)
    d = Discussion.load(repo / LEDGER, root=repo)
    tables = [c.body for c in d.comments if c.author == "Cascade" and "Borda count" in c.body]
    assert [t.splitlines()[0] for t in tables] == [f"**Peer ranking, round {r}**"
                                                   for r in (1, 2, 3)]
    referee = next(text for n, s, r, text in ranked.seen if s == "Verdict")
    assert "peer ranking (Borda count), round 3" in referee


loop_repo = test_hook.loop_repo  # the fixture: a repository with a rule and a document


def test_in_the_gate_the_ranking_runs_and_check_agrees(loop_repo, fake_llm):
    repo = loop_repo
    (repo / ".cascade" / "protocols").mkdir(parents=True)
    (repo / ".cascade" / "protocols" / "ranked.yml").write_text(RANKED)
    (repo / ".ai-rules.yml").write_text(test_hook.RULES.replace(
        "participants: [architect, security, pragmatist]", "protocol: ranked"))
    git(repo, "add", ".cascade", ".ai-rules.yml")
    git(repo, "commit", "-qm", "ADRs go to a ranked council")
    test_hook.install_plain(repo)
    git(repo, "add", test_hook.DOC)
    script = Ranked(fake_llm)
    script.ballots = {"AI-Pragmatist": ["token-bravo", "token-charlie"],
                      "AI-Visionary": ["token-alpha", "token-charlie"],
                      "AI-Skeptic": ["token-alpha", "token-bravo"]}
    done = inproc.commit(repo)  # the plain hook in process, then git's commit
    assert done.returncode == 0 and fake_llm.calls() == 7, done.out  # 3 + 3 + the referee
    assert "Borda count of 3 ballots" in done.out
    d = Discussion.load(repo / test_hook.LEDGER, root=repo)
    table = [c for c in d.comments if c.author == "Cascade"][-1].body
    assert "| 1 |" in table and "| AI-Pragmatist | 2 | 2 |" in table, table
    check = inproc.cascade(repo, "check")
    assert check.returncode == 0, check.stdout + check.stderr
