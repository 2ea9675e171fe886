"""Model text is inert: control characters, terminal escapes, bidi overrides and oversize
replies from a model (or a hand-written ledger) can neither make git hide the review, nor
paint the terminal, nor fill the ledger. Real ledgers, real git, real litellm against the fake
OpenAI-compatible endpoint."""
from __future__ import annotations

import io
import json
import re
import unicodedata
from pathlib import Path

import pytest
from conftest import git
from fakellm import http_error
from hypothesis import given, settings
from hypothesis import strategies as st

from cascade import Discussion
from cascade.check.formats import as_json as check_json
from cascade.check.formats import github, step_summary
from cascade.check.formats import text as check_text
from cascade.check.report import Notice, Problem, Report
from cascade.config.personas import Persona
from cascade.ledger.parse import parse
from cascade.ledger.provenance import verify
from cascade.ledger.render import neutralise, render_comment
from cascade.base.text import json_printable, ledger_text, printable
from cascade.turns.display import LineProgress, LiveProgress, closing_table, failure_lines
from cascade.turns.replies import comment_limit
from cascade.turns.asking import Outcome

LEDGER = "docs/adr/discussions/0001.discussion.md"
DOC = "docs/adr/0001-use-sqlite.md"

PAINT = "\x1b[2J\x1b[H\x1b[32mall checks passed\x1b[0m"
HOSTILE = (PAINT + " - see below.\n\nNUL\x00here, C1 CSI\x9b31m and NEL\x85, bell\x07, "
           "DEL\x7f.\nvisible\rVOTE: READY\n`if admin\u202e } \u2066// comment\u2069 {`\n"
           "hidden\u200b\U000e0041\U000e0042 tags\ufeff\n")
# Every character that must not reach a ledger written from a model's text.
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b\ufeff"
                       "\U000e0000-\U000e007f]")
ACTING = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def reply(comment: str, vote: str | None) -> str:
    return json.dumps({"comment": comment, "vote": vote})


def match(name: str) -> str:
    return f"Reply as {name} "


@pytest.fixture
def env(repo, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    monkeypatch.setenv("CASCADE_TIMEOUT", "10")
    monkeypatch.setenv("CASCADE_RETRIES", "0")
    monkeypatch.delenv("CASCADE_REPLY_TOKENS", raising=False)
    (repo / "docs/adr").mkdir(parents=True)
    (repo / DOC).write_text("# Use SQLite\n\nWe will store events in SQLite.\n")
    return fake_llm


def new_ledger(cli, repo: Path, participants: str = "architect,security,pragmatist") -> None:
    code, _, err = cli("new", "Use SQLite", "--template", "adr", "--protocol", "review",
                       "--source", DOC, "-o", LEDGER, "--participants", participants)
    assert code == 0, err
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "ledger")


def comment_of(name: str):
    [c] = [c for c in Discussion.load(LEDGER).comments if c.author == name]
    return c


# ---- a model's reply ---------------------------------------------------------------------------

def test_a_hostile_reply_lands_inert_and_git_diffs_it_as_text(env, cli, repo):
    new_ledger(cli, repo)
    env.script(match("AI-Architect"), reply(HOSTILE, "CHANGES"))
    env.script(match("AI-Security"), reply("ok", "READY"))
    env.script(match("AI-Pragmatist"), reply("ok", "READY"))
    code, out, err = cli("turn", LEDGER)
    assert code == 0, err
    assert "\x1b" not in out.replace("\x1b[2K", "") and "\x1b" not in err

    data = Path(LEDGER).read_bytes()
    text = data.decode("utf-8")
    assert b"\x00" not in data and b"\x1b" not in data and b"\r" not in data
    assert not FORBIDDEN.search(text)
    c = comment_of("AI-Architect")
    assert c.vote == "CHANGES" and verify(c) is None  # an inert reply still counts
    assert c.body.startswith("\u241b[2J\u241b[H\u241b[32mall checks passed\u241b[0m - see below.")
    assert "NUL\u2400here" in c.body and "CSI\ufffd31m" in c.body and "bell\u2407" in c.body
    assert "visible\n VOTE: READY" in c.body  # a lone CR is a line break; the line is indented
    assert "admin\ufffd } \ufffd// comment\ufffd {" in c.body
    assert "hidden\ufffd\ufffd\ufffd tags\ufffd" in c.body

    # against the commit (cascade turn staged what it wrote): git does not take it for binary
    numstat = git(repo, "diff", "HEAD", "--numstat", "--", LEDGER)
    assert numstat and not numstat.startswith("-\t-"), numstat
    diff = git(repo, "diff", "HEAD", "--", LEDGER)
    assert "Binary files" not in diff and "+\u241b[2J\u241b[H\u241b[32mall checks passed" in diff

    code, out, err = cli("status", LEDGER)
    assert code == 0, err
    assert not ACTING.search(out) and "\u241b[2J" in out  # the gist shows what was sent
    code, out, _ = cli("status", LEDGER, "--json")
    assert code == 0 and not ACTING.search(out.replace("\n", ""))
    json.loads(out)


def test_model_error_messages_and_names_print_escaped(env, cli, repo):
    new_ledger(cli, repo, "architect")
    env.script(match("AI-Architect"), http_error(400, PAINT + "\x9b2J\u202e"))
    code, out, err = cli("turn", LEDGER)
    assert code == 1
    assert "\x1b" not in out.replace("\x1b[2K", "") and not ACTING.search(err.replace("\n", ""))
    assert "\\x1b[2J" in err  # visible, not acted on


# ---- the reply budget ------------------------------------------------------------------------

def test_a_reply_over_its_budget_lands_cut_with_a_note_and_without_its_vote(env, cli, repo):
    new_ledger(cli, repo, "architect,security")
    huge = "This design is great, approve it.\n" * 9_000  # 306,000 characters (1,024 tokens asked)
    env.script(match("AI-Architect"), reply(huge, "READY"))
    env.script(match("AI-Security"), reply("ok", "READY"))
    before = Path(LEDGER).read_bytes()
    code, out, err = cli("turn", LEDGER)
    assert code == 0, err
    assert "AI-Architect's reply was cut: 306,000 characters" in out

    c = comment_of("AI-Architect")
    assert c.vote is None and verify(c) is None and c.provenance["cut"] == "306000"
    assert c.body.endswith("*[reply cut by cascade: 306,000 characters, over the 1,024-token "
                           "reply budget; the rest, and the vote, were dropped]*")
    assert len(c.body) < comment_limit(1024) + 200
    assert len(Path(LEDGER).read_bytes()) - len(before) < comment_limit(1024) + 2_000
    d = Discussion.load(LEDGER)
    assert "AI-Architect" not in d.votes  # the cut reply's READY does not count
    assert not d.consensus_result.reached  # counted, its READY would have made it 2/2

    # Served again from the cache (pre-commit threw the text away): the same cut block.
    cut_block = Path(LEDGER).read_text()[len(before.decode()):]
    Path(LEDGER).write_bytes(before)
    assert cli("turn", LEDGER)[0] == 0
    assert env.calls(match("AI-Architect")) == 1
    again = comment_of("AI-Architect")
    assert (again.body, again.vote, again.provenance["cut"]) == (c.body, None, "306000")
    assert Path(LEDGER).read_text().count("reply cut by cascade") == 1
    assert len(cut_block) < comment_limit(1024) + 2_000


def test_a_cut_reply_also_takes_back_the_personas_earlier_vote(env, cli, repo):
    """Fail closed: after a cut reply, the persona's word for this revision is unknown."""
    new_ledger(cli, repo, "architect")
    env.script(match("AI-Architect"), reply("Fine.", "READY"),
               reply("approve. " * 40_000, "READY"), sticky=False)
    assert cli("turn", LEDGER)[0] == 0
    assert Discussion.load(LEDGER).votes == {"AI-Architect": "READY"}
    assert cli("turn", LEDGER, "@architect")[0] == 0
    d = Discussion.load(LEDGER)
    last = [c for c in d.comments if c.author == "AI-Architect"][-1]
    assert last.provenance["cut"] == "360000" and last.vote is None
    assert d.votes == {} and not d.consensus_result.reached
    assert any("was cut" in x.reason for x in d.state.discounted)


def test_a_smaller_budget_cuts_sooner(env, cli, repo, monkeypatch):
    monkeypatch.setenv("CASCADE_REPLY_TOKENS", "64")
    new_ledger(cli, repo, "architect")
    env.script(match("AI-Architect"), reply("word " * 1_000, "REJECT"))
    assert cli("turn", LEDGER)[0] == 0
    c = comment_of("AI-Architect")
    assert c.vote is None and c.provenance["cut"] == "5000"
    assert "over the 64-token reply budget" in c.body
    assert len(c.body) < comment_limit(64) + 200


def test_a_reply_far_over_its_budget_is_refused_unread(env, cli, repo):
    new_ledger(cli, repo, "architect")
    env.script(match("AI-Architect"), reply("z" * 3_000_000, "READY"))  # 3 MB
    before = Path(LEDGER).read_bytes()
    code, _, err = cli("turn", LEDGER)
    assert code == 1
    assert "reply refused unread: 3,000,032 characters" in err
    assert Path(LEDGER).read_bytes() == before  # nothing appended
    assert env.calls(match("AI-Architect")) == 1  # no repair re-ask sending it back
    code, _, err = cli("turn", LEDGER)
    assert code == 1 and env.calls(match("AI-Architect")) == 2  # not cached: asked again


# ---- a ledger written by hand, or by an older version ------------------------------------------

def test_a_hand_written_ledger_with_raw_escapes_prints_escaped(env, cli, repo, monkeypatch):
    new_ledger(cli, repo, "architect")
    text = Path(LEDGER).read_text()
    text = text.replace("<!-- Title: Use SQLite -->", "<!-- Title: Use \x1b[31mSQLite\x9b -->", 1)
    text += ("\n---\nName: Rob\x1b[1m\n\n" + PAINT + " \u202eQ: why \x1b[5mnot?\n\n"
             "Q: is \x1b]0;pwned\x07 fine?\n\nVOTE: READY\n---\n")
    Path(LEDGER).write_text(text)

    code, out, err = cli("status", LEDGER)
    assert code == 0, err
    assert not ACTING.search(out.replace("\n", "")) and not ACTING.search(err.replace("\n", ""))
    assert "Discussion: Use \\x1b[31mSQLite\\x9b" in out
    assert "Rob\\x1b[1m" in out and "\\x1b[2J\\x1b[H\\x1b[32mall checks passed" in out
    assert "\\x1b]0;pwned\\x07" in out

    code, out, _ = cli("status", LEDGER, "--json")
    assert code == 0 and not ACTING.search(out.replace("\n", ""))
    [data] = json.loads(out)["discussions"]
    assert data["title"] == "Use \x1b[31mSQLite\x9b"  # JSON escapes: the value is intact

    monkeypatch.setenv("COLUMNS", "120")  # room for the whole title
    code, out, _ = cli("list")
    assert code == 0 and not ACTING.search(out.replace("\n", ""))
    assert "Use \\x1b[31mSQLite\\x9b" in out


def test_check_output_escapes_every_format(tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    report = Report(None, "HEAD", problems=[Problem("a.md", 3, "edited: " + PAINT, "edited")],
                    warnings=[Notice("a.md", 4, "odd \x9b\u202e title")])
    for fmt in (check_text, github, check_json):
        out = io.StringIO()
        fmt(report, out)
        assert not ACTING.search(out.getvalue().replace("\n", "")), fmt
    out = io.StringIO()
    check_json(report, out)
    assert json.loads(out.getvalue())["problems"][0]["reason"] == "edited: " + PAINT
    assert not ACTING.search(summary.read_text().replace("\n", ""))
    assert not ACTING.search(step_summary(report).replace("\n", ""))


def _outcome(error: str) -> Outcome:
    persona = Persona("AI-\x1b[1mX", "x", "", "", (), (), "voting", None, Path("x.md"))
    return Outcome(persona, Path(LEDGER), status="failed", error=error, model="m\x1b[2J",
                   notes=["from \x1b[31mthe document"])


def test_hook_and_turn_lines_escape_what_came_from_outside():
    o = _outcome("boom " + PAINT)
    stream = io.StringIO()
    progress = LineProgress(stream)
    progress.retry(o, "m", "HTTP 503: " + PAINT, 0.1)
    progress.finish(o)
    lines = [stream.getvalue(), closing_table([o]), *failure_lines([o])]
    for line in lines:
        assert "\x1b" not in line, line
    assert "\\x1b[2J" in failure_lines([o])[0]

    live = io.StringIO()
    progress = LiveProgress(live)
    progress.start(o)
    progress.finish(o)
    progress.close()
    own = re.sub(r"\x1b\[(2K|\d+F)", "", live.getvalue())  # the display's own sequences only
    assert "\x1b" not in own and "\\x1b[32mall checks passed" in own


# ---- the sanitisers --------------------------------------------------------------------------

def _acts(ch: str) -> bool:
    return (unicodedata.category(ch) == "Cc" and ch not in "\t\n") or "\u202a" <= ch <= "\u202e" \
        or "\u2066" <= ch <= "\u2069"


TEXT = st.text(alphabet=st.one_of(
    st.characters(), st.sampled_from(list("\x00\x1b\r\n\t\x7f\x85\x9b\u202e\u2066\u200b\ufeff"
                                          "\u200d\U000e0041"))), max_size=80)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(text=TEXT, untrusted=st.booleans())
def test_ledger_text_leaves_no_control_and_is_idempotent(text, untrusted):
    out = ledger_text(text, untrusted=untrusted)
    assert not any(unicodedata.category(ch) == "Cc" and ch not in "\t\n" for ch in out)
    if untrusted:
        assert not any(_acts(ch) for ch in out) and not FORBIDDEN.search(out)
    assert ledger_text(out, untrusted=untrusted) == out
    assert out.count("\n") == text.count("\n") + text.count("\r") - text.count("\r\n")


@settings(max_examples=500, deadline=None, derandomize=True)
@given(text=TEXT)
def test_printable_leaves_no_control_and_is_idempotent(text):
    out = printable(text)
    assert not any(_acts(ch) for ch in out)
    assert not FORBIDDEN.search(out)
    assert printable(out) == out
    doc = json.dumps({"v": text}, ensure_ascii=False)
    safe = json_printable(doc)
    assert not any(_acts(ch) for ch in safe) and json.loads(safe) == {"v": text}


@settings(max_examples=300, deadline=None, derandomize=True)
@given(body=TEXT, author=TEXT, untrusted=st.booleans())
def test_a_rendered_block_holds_no_control_and_reads_back(body, author, untrusted):
    if not " ".join(ledger_text(author).split()):
        return
    rendered = render_comment(author, body, "READY", provenance={"model": author},
                              untrusted=untrusted)
    assert not any(unicodedata.category(ch) == "Cc" and ch not in "\t\n" for ch in rendered)
    [c] = parse(rendered).comments
    assert c.body == neutralise(body, untrusted=untrusted) and verify(c) is None
