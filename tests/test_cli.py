"""The CLI, in real temporary repositories: every command, its output and exit codes."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import cascade_subprocess

LEDGER = "discussions/add-user-authentication.discussion.md"


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.parts}


def test_seed_example_session(repo, cli):
    """The example session of seed 002, end to end (the turn is written by hand until turns land)."""
    code, out, _ = cli("new", "Add user authentication", "--template", "feature")
    assert code == 0
    assert out.strip() == f"Created: {LEDGER}"
    text = Path(LEDGER).read_text()
    assert text.startswith("<!-- DISCUSSION -->\n<!-- Title: Add user authentication -->\n")
    assert "<!-- Phase: initial_feedback -->" in text

    for name, body, vote in [
        ("AI-Architect", "Concerned about session management.\n\n"
                         "Q: Should we use JWT or session cookies?", "CHANGES"),
        ("AI-Security", "Needs threat model.\n\nQ: What's our token expiry policy?", "CHANGES"),
        ("AI-Pragmatist", "MVP approach is fine.", "READY"),
    ]:
        from cascade import Discussion
        d = Discussion.load(LEDGER)
        d.add_comment(name, body, vote, provenance={"model": "test"})  # as a turn writes it
        d.save()

    code, out, _ = cli("status", LEDGER)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Discussion: Add user authentication"
    assert "Phase: initial_feedback (Initial Feedback)" in lines
    assert "Status: OPEN" in lines
    assert "Participants (3 responded):" in lines
    assert "  AI-Architect: CHANGES - Concerned about session management." in lines
    assert "  AI-Security: CHANGES - Needs threat model." in lines
    assert "  AI-Pragmatist: READY - MVP approach is fine." in lines
    assert "Open Questions (2):" in lines
    assert "  Q1: Should we use JWT or session cookies? (@architect)" in lines
    assert "  Q2: What's our token expiry policy? (@security)" in lines

    code, out, _ = cli("comment", LEDGER, "Let's use JWT with 1hr expiry.")
    assert code == 0
    assert out.strip() == f"Added comment from Test Person to {LEDGER}."

    code, out, _ = cli("advance", LEDGER)
    assert (code, out.strip()) == (0, "Advanced to phase: detailed_review")
    last = Path(LEDGER).read_text().rstrip().splitlines()[-1]
    assert re.fullmatch(r"<!-- PHASE-TRANSITION: initial_feedback → detailed_review "
                        r"ledger=[0-9a-f]{16} n=[0-9a-f]{12} sig=[0-9a-f]{64} -->", last), last


def test_status_json_shape(repo, cli):
    cli("new", "Event store", "--template", "adr", "--protocol", "review",
        "--source", "docs/adr/0007-event-store.md")
    path = "discussions/event-store.discussion.md"
    cli("comment", path, "Fine by me. DECISION: use Postgres\n@security please look", "--vote",
        "READY", "--author", "Rob")
    code, out, _ = cli("status", "--json")
    assert code == 0
    data = json.loads(out)
    [d] = data["discussions"]
    assert set(d) >= {"path", "title", "phase", "status", "participants", "votes", "consensus",
                      "questions", "decisions", "concerns", "todos", "mentions"}
    assert d["path"] == path
    assert d["title"] == "Event store"
    assert d["phase"] == "review"
    assert d["status"] == "OPEN"
    assert d["participants"] == ["architect", "security", "pragmatist"]
    assert d["votes"] == {"Rob": "READY"}
    assert d["consensus"]["reached"] is False
    assert d["consensus"]["outcome"] is None
    assert d["consensus"]["missing"] == ["AI-Architect", "AI-Security", "AI-Pragmatist"]
    assert d["mentions"] == [{"alias": "security", "by": "Rob", "line": d["mentions"][0]["line"]}]


def test_comment_vote_from_flag_only(repo, cli):
    cli("new", "X", "--protocol", "review")
    path = "discussions/x.discussion.md"
    code, _, err = cli("comment", path, "Looks good.\nVOTE: ready", "--author", "Ann")
    assert code == 0
    assert err.strip() == ('cascade: the text\'s "VOTE: ready" line is kept as text; to vote, '
                           "pass --vote READY")
    assert cli("comment", path, "Needs work", "--vote", "changes", "--author", "Bob")[0] == 0
    code, out, _ = cli("status", "--json", path)
    assert json.loads(out)["discussions"][0]["votes"] == {"Bob": "CHANGES"}
    text = Path(path).read_text()
    assert "\nLooks good.\n VOTE: ready\n" in text  # kept, neutralised: text, not a vote


def test_comment_refuses_persona_name(repo, cli):
    cli("new", "X")
    before = snapshot(repo)
    code, _, err = cli("comment", "discussions/x.discussion.md", "hi", "--author", "AI-Security")
    assert code == 2
    assert "persona" in err
    assert snapshot(repo) == before


def test_comment_without_git_identity(repo, cli, monkeypatch, tmp_path):
    empty = tmp_path / "empty.gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    cli("new", "X")
    code, _, err = cli("comment", "discussions/x.discussion.md", "hi")
    assert code == 2
    assert "user.name" in err and "--author" in err


def test_advance_to_and_close(repo, cli):
    cli("new", "X")
    path = "discussions/x.discussion.md"
    assert cli("advance", path, "--to", "consensus_vote")[0] == 0
    code, _, err = cli("advance", path)
    assert code == 1 and "no consensus yet" in err
    for who in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
        from cascade import Discussion
        d = Discussion.load(path)
        d.add_comment(who, "ok", "READY", provenance={"model": "test"})
        d.save()
    code, out, _ = cli("advance", path)
    assert code == 0 and "outcome READY" in out
    code, out, _ = cli("status", "--json", path)
    assert json.loads(out)["discussions"][0]["status"] == "ACCEPTED"


@pytest.mark.parametrize("args, message", [
    (["advance", "discussions/x.discussion.md", "--to", "nope"],
     "discussions/x.discussion.md: unknown phase 'nope' for protocol 'phased'"),
    (["new", "Y", "--template", "nope"], "unknown discussion template 'nope'"),
    (["new", "Y", "--participants", "architect,nobody"], "unknown persona 'nobody'"),
    (["new", "Y", "--protocol", "nope"], "unknown protocol 'nope'"),
    (["status", "missing.discussion.md"], "missing.discussion.md: no such discussion file"),
    (["comment", "missing.discussion.md", "hi"], "missing.discussion.md: no such discussion file"),
    (["summary", "missing.discussion.md"], "missing.discussion.md: no such discussion file"),
    (["personas", "show", "nobody"], "unknown persona 'nobody'"),
    (["new", "X"], "discussions/x.discussion.md: already exists; not overwriting"),
])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(repo, cli, args, message):
    cli("new", "X")
    before = snapshot(repo)
    code, out, err = cli(*args)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err + out
    assert snapshot(repo) == before


def test_not_utf8_ledger(repo, cli):
    path = Path("bad.discussion.md")
    path.write_bytes(b"---\nName: Rob\nok\n---\nName: Ann\ncaf\xe9\n---\n")
    before = snapshot(repo)
    for args in (["status", str(path)], ["comment", str(path), "x", "--author", "A"],
                 ["advance", str(path)], ["summary", str(path)]):
        code, _, err = cli(*args)
        assert code == 2
        assert err.strip() == ("cascade: bad.discussion.md:6: not UTF-8 text "
                               "(byte 0xe9 at offset 34)")
    assert snapshot(repo) == before


def test_broken_persona_yaml_names_file_and_line(repo, cli):
    folder = repo / ".cascade" / "personas"
    folder.mkdir(parents=True)
    (folder / "reviewer.yml").write_text("name: AI-Reviewer\nalias: reviewer\nrole: [unclosed\n")
    before = snapshot(repo)
    for args in (["personas", "list"], ["new", "X"]):
        code, _, err = cli(*args)
        assert code == 2
        assert err.startswith("cascade: .cascade/personas/reviewer.yml:")
        line = int(err.split(":")[2])
        assert line in (3, 4)
        assert snapshot(repo) == before


def test_unknown_persona_key_names_line(repo, cli):
    folder = repo / ".cascade" / "personas"
    folder.mkdir(parents=True)
    (folder / "reviewer.yml").write_text(
        "name: AI-Reviewer\nalias: reviewer\nrole: Reviewer\npersonality: hi\n"
        "type: voting\ncolour: blue\n")
    code, _, err = cli("personas", "list")
    assert code == 2
    assert err.strip().startswith("cascade: .cascade/personas/reviewer.yml:6: unknown persona key 'colour'")


def test_repository_persona_overrides_and_extends(repo, cli):
    folder = repo / ".cascade" / "personas"
    folder.mkdir(parents=True)
    (folder / "security.yml").write_text(
        "name: AI-Security\nalias: security\nrole: AppSec Lead\npersonality: Be strict.\n"
        "type: voting\nmodel: openai/gpt-4o-mini\n")
    (folder / "dba.yml").write_text(
        "name: AI-DBA\nalias: dba\nrole: Database Administrator\npersonality: Data first.\n"
        "type: voting\nexpertise: [PostgreSQL]\n")
    code, out, _ = cli("personas", "list")
    assert code == 0
    assert "AppSec Lead" in out and "AI-DBA" in out
    code, out, _ = cli("personas", "show", "security")
    assert "AI-Security (@security) - AppSec Lead" in out
    assert "Model: openai/gpt-4o-mini" in out
    assert cli("new", "X", "--participants", "dba,security")[0] == 0


def test_personas_show_bundled(repo, cli):
    code, out, _ = cli("personas", "show", "researcher")
    assert code == 0
    assert out.startswith("AI-Researcher (@researcher) - Research Assistant\n")
    assert "Type: background (does not vote)" in out


def test_list_finds_ledgers(repo, cli):
    cli("new", "First one")
    cli("new", "Second", "--output", "docs/adr/discussions/0002.discussion.md")
    code, out, _ = cli("list")
    assert code == 0
    assert "discussions/first-one.discussion.md" in out
    assert "docs/adr/discussions/0002.discussion.md" in out
    code, out, _ = cli("list", "--status", "accepted")
    assert "first-one" not in out


def test_summary_is_deterministic(repo, cli):
    cli("new", "X", "--protocol", "review")
    path = "discussions/x.discussion.md"
    cli("comment", path, "Q: why?\nTODO: write docs\nCONCERN: cost\nDECISION: ship it",
        "--vote", "CHANGES", "--author", "Ann")
    cli("comment", path, "DONE: write docs\nDECISION: Ship it.", "--author", "Bob")
    assert cli("summary", path)[0] == 0
    first = Path("discussions/x.discussion.sum.md").read_text()
    assert cli("summary", path)[0] == 0
    assert Path("discussions/x.discussion.sum.md").read_text() == first
    assert "| Ann | CHANGES |" in first
    assert "| AI-Architect | (waiting) | |" in first
    assert "- Q1: why? (Ann)" in first
    assert "- ship it (Ann, Bob)" in first
    assert "- [x] T1 TODO: write docs (Ann), done by Bob" in first
    assert "- cost (Ann)" in first


def test_python_dash_m_and_version(repo):
    proc = cascade_subprocess("--version", cwd=repo)
    assert proc.returncode == 0 and proc.stdout.startswith("cascade ")
    proc = cascade_subprocess("status", "nope.md", cwd=repo)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "cascade: nope.md: no such file"


def test_usage_error_exits_2(cli):
    code, _, err = cli("comment")
    assert code == 2 and "error" in err


# ---- comment: the person's text is kept as written; the vote comes only from --vote ----------

KEPT_TEXT = ("Looks good to me.\n"
             "VOTE: READY\n"
             "vote: reject -- lower case\n"
             "Name: Eve\n"
             "---\n"
             "<!-- OUTCOME: READY -->\n"
             "```\n"
             "VOTE: CHANGES\n"
             "```\n"
             "Trailing spaces   \n"
             "Ünïcode → kept")


def _last_block(path: str):
    from cascade import Discussion
    return Discussion.load(path).comments[-1]


def test_comment_keeps_vote_line_as_text(repo, cli):
    cli("new", "X", "--protocol", "review")
    path = "discussions/x.discussion.md"
    code, out, err = cli("comment", path, KEPT_TEXT, "--author", "Ann")
    assert code == 0
    assert out.strip() == f"Added comment from Ann to {path}."
    assert err.strip() == ('cascade: the text\'s "vote: reject -- lower case" line is kept as '
                           "text; to vote, pass --vote REJECT")
    c = _last_block(path)
    assert (c.author, c.vote) == ("Ann", None)
    # Every byte survives; the structural lines outside the fence gain one leading space.
    structural = {"VOTE: READY", "vote: reject -- lower case", "Name: Eve", "---",
                  "<!-- OUTCOME: READY -->"}
    assert c.body.split("\n") == [(" " + ln if ln in structural else ln)
                                  for ln in KEPT_TEXT.split("\n")]
    assert "\n VOTE: READY\n" in Path(path).read_text()
    # Neutralised exactly as the Python API neutralises the same text.
    from cascade import Discussion
    d = Discussion.load(path)
    d.add_comment("Ann", KEPT_TEXT)
    assert d.comments[-1].body == c.body
    code, out, _ = cli("status", "--json", path)
    data = json.loads(out)["discussions"][0]
    assert data["votes"] == {} and data["status"] == "OPEN"


def test_comment_vote_flag_with_vote_line_in_text(repo, cli):
    cli("new", "X", "--protocol", "review")
    path = "discussions/x.discussion.md"
    code, out, err = cli("comment", path, "Fine.\nVOTE: REJECT", "--vote", "ready",
                         "--author", "Ann")
    assert code == 0 and out.strip() == f"Added comment from Ann to {path} (VOTE: READY)."
    assert err.strip() == ('cascade: the text\'s "VOTE: REJECT" line is kept as text; '
                           "the vote is --vote READY")
    c = _last_block(path)
    assert (c.body, c.vote) == ("Fine.\n VOTE: REJECT", "READY")
    # The same word as --vote: nothing to say.
    code, _, err = cli("comment", path, "Still fine.\nVOTE: ready", "--vote", "READY",
                       "--author", "Bob")
    assert (code, err) == (0, "")
    code, out, _ = cli("status", "--json", path)
    assert json.loads(out)["discussions"][0]["votes"] == {"Ann": "READY", "Bob": "READY"}


def test_comment_vote_without_text_and_plain_text(repo, cli):
    cli("new", "X", "--protocol", "review")
    path = "discussions/x.discussion.md"
    code, out, err = cli("comment", path, "--vote", "changes", "--author", "Ann")
    assert (code, err) == (0, "")
    assert out.strip() == f"Added comment from Ann to {path} (VOTE: CHANGES)."
    assert (_last_block(path).body, _last_block(path).vote) == ("", "CHANGES")
    code, _, err = cli("comment", path, "No vote here.\n```\nVOTE: READY\n```", "--author", "Bob")
    assert (code, err) == (0, "")  # a VOTE: line inside code is code: no note
    assert _last_block(path).vote is None
    code, _, err = cli("comment", path, "VOTE: maybe", "--author", "Cy")
    assert code == 0
    assert err.strip() == ('cascade: the text\'s "VOTE: maybe" line is kept as text; to vote, '
                           "pass --vote READY|CHANGES|REJECT")
    code, _, err = cli("comment", path, "  \n", "--author", "Cy")
    assert code == 2 and "empty comment" in err
    code, out, _ = cli("status", "--json", path)
    assert json.loads(out)["discussions"][0]["votes"] == {"Ann": "CHANGES"}


@pytest.mark.parametrize("args", [("comment", "README.md", "hi"), ("status", "README.md"),
                                  ("turn", "README.md"), ("summary", "README.md"),
                                  ("advance", "README.md"),
                                  ("decide", "README.md", "READY", "--reason", "x")])
def test_a_file_that_is_neither_ledger_nor_governed_is_refused_and_untouched(repo, cli, args):
    (repo / ".ai-rules.yml").write_text('rules:\n  - name: adr\n    match: "docs/adr/*.md"\n')
    (repo / "README.md").write_text("# Project\n")
    code, _, err = cli(*args)
    assert code == 2, err
    assert err.strip() == ("cascade: README.md: not a discussion ledger (*.discussion.md), and "
                           "no rule in .ai-rules.yml governs it")
    assert (repo / "README.md").read_text() == "# Project\n"
    assert sorted(p.name for p in repo.iterdir()) == [".ai-rules.yml", ".git", "README.md"]


def test_each_command_s_own_parser_is_the_full_parser_s(capsys):
    """`cascade X ...` builds X's parser alone (the full one costs ~15 ms of every command):
    the list of commands is the full parser's, and each one's help is the same either way."""
    from cascade.cli import COMMANDS, build_parser

    full = build_parser()
    assert tuple(full._subparsers._group_actions[0].choices) == tuple(
        word for c in COMMANDS.values() for word in (c.name, *c.aliases))
    for command in COMMANDS:
        helps = []
        for parser in (full, build_parser(only=command)):
            with pytest.raises(SystemExit) as exit_:
                parser.parse_args([command, "--help"])
            assert exit_.value.code == 0
            helps.append(capsys.readouterr().out)
        assert helps[0] == helps[1] and f"usage: cascade {command}" in helps[0]


def test_docs_commands_md_is_every_command_s_current_help():
    """docs/commands.md is generated from the commands' --help (python docs/commands.py)."""
    from cascade.cli import COMMANDS, reference

    written = (Path(__file__).resolve().parent.parent / "docs" / "commands.md").read_text()
    assert written == reference(), "docs/commands.md is not current: run python docs/commands.py"
    for command in COMMANDS:
        assert f"## `cascade {command}`\n\n```text\nusage: cascade {command} " in written
    assert "## `cascade personas add`\n\n```text\nusage: cascade personas add " in written


def test_a_subcommand_runs_its_own_handler_and_a_bare_personas_lists(repo, cli):
    code, listed, _ = cli("personas")
    assert code == 0 and "architect" in listed
    assert cli("personas", "list") == (0, listed, "")
    code, shown, _ = cli("personas", "show", "architect")
    assert code == 0 and shown != listed and "architect" in shown


def test_comment_takes_the_vote_before_the_text_as_the_seed_writes_it(repo, cli):
    """Seed 002: "discussions comment feature-x.md --vote READY "Looks good to me."" -- the
    option before the text works, as does the text before the option."""
    cli("new", "X", "--protocol", "review")
    path = "discussions/x.discussion.md"
    code, out, err = cli("comment", path, "--vote", "READY", "Looks good to me.", "--author", "Ann")
    assert (code, err) == (0, "")
    assert out.strip() == f"Added comment from Ann to {path} (VOTE: READY)."
    assert (_last_block(path).body, _last_block(path).vote) == ("Looks good to me.", "READY")
    code, out, err = cli("comment", path, "Needs a threat model.", "--vote", "changes",
                         "--author", "Bob")
    assert (code, err) == (0, "")
    assert (_last_block(path).body, _last_block(path).vote) == ("Needs a threat model.", "CHANGES")
    code, out, _ = cli("status", "--json", path)
    assert json.loads(out)["discussions"][0]["votes"] == {"Ann": "READY", "Bob": "CHANGES"}
    # still one text: a second one is refused, and nothing is written
    before = snapshot(repo)
    code, _, err = cli("comment", path, "--vote", "READY", "one", "two", "--author", "Cy")
    assert code == 2 and "unrecognized arguments: two" in err
    assert snapshot(repo) == before


def test_participants_is_the_personas_command_under_the_seed_s_name(repo, cli):
    """Seed 002: "discussions participants list", "discussions participants add architect
    --from-file persona.yaml", "discussions participants remove old-participant" -- the same
    command as `cascade personas`, named in its --help and in docs/commands.md."""
    code, listed, _ = cli("personas", "list")
    assert code == 0 and "architect" in listed
    assert cli("participants", "list") == (0, listed, "")
    assert cli("participants") == (0, listed, "")
    Path("persona.yaml").write_text(
        "name: AI-Reviewer\nalias: reviewer\nrole: Reviewer\npersonality: You review.\n"
        "type: voting\n")
    code, out, err = cli("participants", "add", "reviewer", "--from-file", "persona.yaml")
    assert code == 0, err
    assert Path(".cascade/personas/reviewer.yml").is_file()
    assert "reviewer" in cli("personas", "list")[1]
    assert cli("participants", "remove", "reviewer")[0] == 0
    assert not Path(".cascade/personas/reviewer.yml").exists()
    code, out, _ = cli("--help")
    assert code == 0 and "personas (participants)" in out
    written = (Path(__file__).resolve().parent.parent / "docs" / "commands.md").read_text()
    assert "    personas (participants)\n" in written


def test_new_takes_the_seed_s_architecture_decision_template_as_adr(repo, cli):
    """Seed 002: "discussions new "API Redesign" --template architecture-decision" -- the ADR
    template under the seed's name: the same ledger body as ``--template adr``, recorded as
    adr, and the name is in ``new --help``."""
    code, out, err = cli("new", "API Redesign", "--template", "architecture-decision")
    assert (code, err) == (0, "")
    assert out.strip() == "Created: discussions/api-redesign.discussion.md"
    assert cli("new", "API Redesign", "--template", "adr", "-o", "adr.discussion.md")[0] == 0
    seed = Path("discussions/api-redesign.discussion.md").read_text()
    plain = Path("adr.discussion.md").read_text()
    assert "# ADR: API Redesign" in seed and "<!-- Template: adr -->" in seed
    strip = re.compile(r"<!-- Created: .* -->\n")
    assert strip.sub("", seed) == strip.sub("", plain)
    code, out, _ = cli("new", "--help")
    assert "architecture-decision is adr" in " ".join(out.split())
    code, _, err = cli("new", "X", "--template", "nope")
    assert code == 2 and "architecture-decision (adr)" in err
