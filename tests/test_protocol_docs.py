"""docs/protocols.md says, protocol by protocol, what each source's protocol does: its
examples (``cascade plan ...``, ``cascade discuss ... [--flow parallel|sequential|debate]``)
and the counts it gives (participants, rounds, calls, waves, word budgets). Each claim is
read from the document and checked against what ``cascade plan`` prints for it, with no
model call: a claim the behaviour does not bear out fails here, and so does a claim that
moved out of the words this test reads (change both together)."""
from __future__ import annotations

import re
import pytest
from conftest import REPO

DOC = " ".join((REPO / "docs" / "protocols.md").read_text().split())  # one line, one space
NUMBER = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}


def claim(pattern: str) -> re.Match:
    """The document's claim matching ``pattern`` (its examples' numbers in the groups)."""
    found = re.search(pattern, DOC)
    assert found, f"docs/protocols.md no longer says: {pattern}"
    return found


def n(text: str) -> int:
    return NUMBER.get(text) or int(text.replace(",", ""))


@pytest.fixture
def plan(repo, cli, fake_llm):
    """``cascade plan ARGS``'s output (exit 0, and no model called)."""
    def run(*args: str) -> str:
        code, out, err = cli("plan", *args)
        assert code == 0, f"cascade plan {' '.join(args)}: {out}{err}"
        assert fake_llm.calls() == 0
        return out
    return run


def calls(out: str) -> re.Match:
    found = re.search(r"^Calls: (\d+) per round in (\d+) waves?(?:, (\d+) once)?[^;]*; at most "
                      r"(\d+) in (\d+) rounds?", out, re.M)
    assert found, out
    return found


# --- the examples: every command the document shows, each option value it names ---

def _examples() -> list[tuple[str, ...]]:
    """``cascade plan`` arguments for each example command (``discuss`` planned as it would
    run), one per value of each ``[--option a|b|c]`` it lists."""
    out = []
    for span in re.findall(r"`(cascade (?:plan|discuss) [^`]*)`", DOC):
        protocol = re.search(r"--protocol ([a-z-]+)\b", span)
        if protocol is None:
            continue  # --protocol P: no protocol named
        base = ("--protocol", protocol.group(1))
        out.append(base)
        for option, values in re.findall(r"\[--([a-z]+) ([a-z-]+(?:\|[a-z-]+)+)\]", span):
            out += [(*base, f"--{option}", value) for value in values.split("|")]
        out += [(*base, f"--{option}", value) for option, value in
                re.findall(r"(?<!\[)--(mode|flow|strategy|tier) ([a-z][a-z-]*)\b", span)]
    return list(dict.fromkeys(out))


EXAMPLES = _examples()


def test_the_document_shows_examples_for_every_protocol():
    named = {args[1] for args in EXAMPLES}
    assert {"pcs", "swarm", "roundtable", "council"} <= named, named
    assert ("--protocol", "council", "--flow", "sequential") in EXAMPLES
    assert ("--protocol", "swarm", "--mode", "deep") in EXAMPLES


@pytest.mark.parametrize("args", EXAMPLES, ids=[" ".join(a[1:]) for a in EXAMPLES])
def test_each_example_runs_as_written(plan, args):
    out = plan(*args)
    for option, value in zip(args[2::2], args[3::2]):
        if option != "--protocol":
            assert re.search(rf"\b{value}\b", out), (args, out)


# --- the claims, protocol by protocol ---

def test_pcs(plan):
    said = claim(r"\*\*`pcs`\*\* \(Propose / Challenge / Synthesize\): (\d) to (\d) participants")
    low, high = int(said[1]), int(said[2])
    for count in (low, high):
        out = plan("--protocol", "pcs", "--participants",
                   ",".join(["architect", "security", "pragmatist", "designer"][:count]))
        assert calls(out)[1] == str(3 * count + 1)  # propose, challenge, confirm; synthesis
    said = claim(r"Any REJECT: the next round, seeded with a summary of at most ([\d,]+) "
                 r"characters\. After round (\d) without it: impasse")
    out = plan("--protocol", "pcs")
    assert f"rounds: 1 to {said[2]};" in out
    assert f"from a summary of at most {n(said[1])} characters" in out
    said = claim(r"\| A round is PROPOSE, CHALLENGE, SYNTHESIZE; max (\d) rounds, a hard cap \| "
                 r"follows \| [^|]*`--rounds N` only lowers it")
    top = int(said[1])
    assert f"rounds: 1 to {top - 1};" in plan("--protocol", "pcs", "--rounds", str(top - 1))


def test_pcs_cap_is_hard(repo, cli):
    top = int(claim(r"max (\d) rounds, a hard cap")[1])
    code, _, err = cli("plan", "--protocol", "pcs", "--rounds", str(top + 1))
    assert code == 2 and f"between 1 and {top}" in err


@pytest.mark.parametrize("mode, pattern", [
    ("lightweight", r"`lightweight` \((\d) experts, moderator and contrarian, (\d)-(\d) rounds"),
    ("standard", r"`standard` \((\d)-(\d) experts, moderator, historian, contrarian, "
                 r"cross-domain, (\d)-(\d) rounds; the default\)"),
    ("deep", r"`deep` \((\d)-(\d) experts, the four fixed roles, (\d)-(\d) rounds\)"),
], ids=["lightweight", "standard", "deep"])
def test_swarm_modes(plan, mode, pattern):
    said = claim(pattern).groups()
    experts = said[0] if len(said) == 3 else f"{said[0]}-{said[1]}"
    rounds = said[-2:]
    line = next(x for x in plan("--protocol", "swarm").splitlines()
                if x.startswith(f"  mode {mode}"))
    assert f": {experts} experts;" in line and f"rounds {rounds[0]} to {rounds[1]}" in line, line
    if mode == "standard":
        assert "(default)" in line


def test_swarm_calls(plan):
    said = claim(r"\(standard, three experts: (\d+) a round in (\d+) waves, (\d+) once\)")
    found = calls(plan("--protocol", "swarm", "--mode", "standard"))
    assert (found[1], found[2], found[3]) == (said[1], said[2], said[3])


def test_roundtable(plan):
    said = claim(r"at most (\d+) rounds; a conclude before the last phase")
    last = claim(r"gets one probing round; round (\d+) concludes")
    out = plan("--protocol", "roundtable")
    assert f"rounds: 1 to {last[1]};" in out
    from cascade.protocol.loader import load_protocol
    assert load_protocol("roundtable", None).steps.rounds.per_phase == int(said[1])
    hats = claim(r"`six-hats` \(([a-z, ]+); each participant sees the earlier answers of its "
                 r"round\)")[1].split(", ")
    line = next(x for x in out.splitlines() if x.startswith("  strategy six-hats"))
    assert [h.split()[0].lower() for h in line.split(": ", 1)[1].split(" -> ")] == hats
    assert line.endswith("; sequential")
    listed = claim(r"Strategies \(protocol data, overridable\): (.*?)\. Otherwise")[1]
    names = re.findall(r"`([a-z-]+)`(?: \(|;|$)", listed)
    assert names == ["standard", "disney", "debate", "consensus-driven", "six-hats"], names
    for name in names:
        assert f"Strategy {name}:" in plan("--protocol", "roundtable", "--strategy", name)
    # one at a time: the question, each of the three participants, the synthesis
    assert calls(plan("--protocol", "roundtable", "--strategy", "six-hats"))[2] == "5"


def test_council_flows(plan):
    said = claim(r"`debate` \((\d) rounds at least, (\d) by default, up to (\d) with `--rounds`")
    low, default, top = (int(x) for x in said.groups())
    assert f"rounds: {low} to {default};" in plan("--protocol", "council", "--flow", "debate")
    assert f"rounds: {low} to {top};" in plan("--protocol", "council", "--flow", "debate",
                                               "--rounds", str(top))
    claim(r"`sequential` \(each advisor sees the earlier ones")
    advisors = claim(r"The advisors are the bundled lenses `(\w+)` \([^)]*\), `(\w+)` \([^)]*\) "
                     r"and `(\w+)`").groups()
    found = calls(plan("--protocol", "council", "--flow", "sequential"))
    assert found[1] == found[2] == str(len(advisors))  # one wave an advisor
    found = calls(plan("--protocol", "council", "--flow", "parallel"))
    assert (found[1], found[2]) == (str(len(advisors)), "1")  # blind: all at once
    budgets = claim(r"opening (\d+)-(\d+) words, rebuttal (\d+)-(\d+), final (\d+)-(\d+) -- "
                    r"said in the prompt and enforced as max tokens \((\d+), (\d+), (\d+)\)")
    b = budgets.groups()
    assert (f"Opening {b[0]}-{b[1]} ({b[6]}); Cross-rebuttal {b[2]}-{b[3]} ({b[7]}); Final "
            f"position {b[4]}-{b[5]} ({b[8]})") in plan("--protocol", "council", "--flow",
                                                         "debate")


def test_council_dp(plan):
    said = claim(r"Calls: (\d) per round \((\w+) waves of (\w+)\) and the meta-arbiter once: "
                 r"(\d) for one round, (\d)N \+ 1 with `--rounds N`")
    per_round, waves, once_total, per_n = int(said[1]), n(said[2]), int(said[4]), int(said[5])
    found = calls(plan("--protocol", "council", "--mode", "dp"))
    assert (int(found[1]), int(found[2]), int(found[4])) == (per_round, waves, once_total)
    for rounds in (2, 3, 5):
        found = calls(plan("--protocol", "council", "--mode", "dp", "--rounds", str(rounds)))
        assert int(found[4]) == per_n * rounds + 1
    table = claim(r"\| Calls: (\d) for one round, (\d)N \+ 1 for N \| follows \| "
                  r"`cascade plan --protocol council --mode dp`")
    assert (int(table[1]), int(table[2])) == (once_total, per_n)
    # sequential: one group after the other, each member its own wave
    seq = claim(r"`sequential` asks one group after the other -- ([A-Za-z, -]+) \((\w+) waves "
                r"of one\)")
    found = calls(plan("--protocol", "council", "--mode", "dp", "--flow", "sequential"))
    assert int(found[2]) == n(seq[2]) == len(seq[1].replace(", then", ",").split(", "))
    order = [s.strip() for s in seq[1].replace(", then", ",").split(",")]
    listing = plan("--protocol", "council", "--mode", "dp", "--flow", "sequential")
    steps = listing.split("Steps of a round:")[1].split("After the rounds:")[0]
    assert [line.split()[2].rstrip(",") for line in steps.strip().splitlines()] == [
        o.lower() for o in order]


def test_phased(plan):
    claim(r"`phased` \(feedback, review, vote\)")
    out = plan("--protocol", "phased")
    assert "phases: initial_feedback -> detailed_review -> consensus_vote" in out

