"""bench/quality.py, the review-quality benchmark: its shipped ADRs and manifest, how it reads
findings back from a ledger and scores them, and the whole bench end to end -- real
repositories, the real hook, every model call over HTTP to the scripted endpoint."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from scripted import ASK, STEP

from cascade.ledger.render import render_comment

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench" / "quality.py"
sys.path.insert(0, str(BENCH.parent))

import quality  # bench/quality.py


def test_the_shipped_set_places_every_flaw():
    adrs = quality.load()
    flawed = [a for a in adrs if not a.control]
    assert len(flawed) >= 8 and len(adrs) - len(flawed) >= 4
    for adr in adrs:
        lines = adr.path.read_text(encoding="utf-8").splitlines()
        assert 40 <= len(lines) <= 80, adr.file
        assert len(adr.flaws) <= 2, adr.file
        for flaw in adr.flaws:
            first, last = flaw.lines
            assert 1 <= first <= last <= len(lines) and flaw.keywords, (adr.file, flaw.id)
    by_id = {(a.file[:4], f.id): f.lines for a in adrs for f in a.flaws}
    assert by_id[("0001", "no-backfill")] == (29, 29)  # the ALTER ... SET NOT NULL line
    assert by_id[("0001", "no-rollback")] == (42, 47)  # the whole Rollout section


def test_section_lines_run_to_the_next_heading_of_its_level():
    text = "# T\n\n## A\n\nx\n\n### A1\n\ny\n\n## B\n\nz\n"
    assert quality.section_lines(text, "a") == (3, 9)
    assert quality.section_lines(text, "B") == (11, 13)
    assert quality.section_lines(text, "C") is None


def _copy_data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(quality.DATA, data)
    return data / "manifest.yml"


def test_a_quote_not_found_is_an_error_naming_the_file(tmp_path):
    manifest = _copy_data(tmp_path)
    doc = manifest.parent / "0002-send-notifications-through-smtp-relay.md"
    doc.write_text(doc.read_text().replace('"Wint3r-Relay-2026!"', "${SMTP_PASSWORD}"))
    proc = subprocess.run([sys.executable, str(BENCH), "--manifest", str(manifest)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert (f"{manifest}: 0002-send-notifications-through-smtp-relay.md: flaw "
            f"'plaintext-secret': quote not found in {doc}") in proc.stderr


def test_a_control_with_a_flaw_is_refused(tmp_path):
    manifest = _copy_data(tmp_path)
    manifest.write_text(manifest.read_text().replace(
        "  - file: 0009-read-replica-for-reporting.md\n    control: true",
        "  - file: 0009-read-replica-for-reporting.md\n    control: true\n    flaws:\n"
        "      - {id: x, severity: minor, section: Context, keywords: [x]}"))
    with pytest.raises(quality.Bad, match="0009-read-replica-for-reporting.md: a control"):
        quality.load(manifest)


STAMP = ("critical -- 29 -- ALTER TABLE invoices ALTER COLUMN currency SET NOT NULL; -- The "
         "existing rows get no currency. -- The migration fails. -- Backfill EUR first. | "
         "major -- ? -- the vault -- The password is in plain text. -- - -- - | "
         "bogus -- 3 -- x -- not a severity")


def _ledger(tmp_path: Path) -> Path:
    ledger = tmp_path / "0001.discussion.md"
    ledger.write_text(
        "# Discussion\n\n"
        + render_comment("AI-Architect", "Two problems.", "CHANGES", provenance={
            "model": "test", "prompt_tokens": 1000, "completion_tokens": 80,
            "findings": STAMP})
        + render_comment("AI-Security", "Fine.", "READY", provenance={
            "model": "test", "prompt_tokens": 900, "completion_tokens": 20, "findings": ""})
        # written by hand under a persona's name: no stamp, not the tool's; not read
        + "---\nName: AI-Pragmatist\n<!-- cascade:ai findings=\"critical -- 1 -- x -- y\" -->"
          "\n\nRollback is missing.\n---\n")
    return ledger


def test_findings_of_reads_the_stamped_findings_of_the_tools_blocks(tmp_path):
    ledger = _ledger(tmp_path)
    found = quality.findings_of(ledger)
    assert [(f.severity, f.lines, f.author) for f in found] == [
        ("critical", (29, 29), "AI-Architect"), ("major", None, "AI-Architect")]
    assert found[0].suggestion == "Backfill EUR first." and found[1].why == ""
    assert quality.tokens_of(ledger) == 2000
    assert "rollback" not in quality.said_of(ledger)  # the hand-written block is not read


def test_score_locates_mentions_and_counts_false_findings(tmp_path):
    adrs = {a.file[:4]: a for a in quality.load()}
    found = quality.findings_of(_ledger(tmp_path))
    s = quality.score(adrs["0001"], found, "we need a rollback plan")
    assert (s.located, s.mentioned, s.missed) == (["no-backfill"], ["no-rollback"], [])
    assert (s.findings, s.not_found, s.false) == (2, 1, 0)
    s = quality.score(adrs["0001"], found[1:], "")
    assert (s.located, s.mentioned, s.missed) == ([], [], ["no-backfill", "no-rollback"])
    control = quality.score(adrs["0009"], found, "")
    assert (control.false, control.located, control.missed) == (2, [], [])


# ---- end to end ----------------------------------------------------------------------------

TITLES = {"1. Store a currency on every invoice": "0001",
          "2. Send transactional e-mail through our own SMTP relay": "0002",
          "9. Serve reporting queries from a read replica": "0009"}
FINDINGS = {
    # locates the seeded no-backfill flaw (line 29); says nothing of the missing rollback
    "0001": {"severity": "critical",
             "where": "ALTER TABLE invoices ALTER COLUMN currency SET NOT NULL;",
             "what": "The existing 4.1 million rows get no currency.",
             "why": "The NOT NULL step fails on them.", "suggestion": "Set EUR on them first."},
    # names the plain-text password, with a quote that is not in the document
    "0002": {"severity": "critical", "where": "the password is read from the vault",
             "what": "The SMTP password is committed in plain text.",
             "why": "Anyone with the repository can send mail as us.",
             "suggestion": "Read it from the secrets manager."},
    # a false finding on a clean control
    "0009": {"severity": "major", "where": "one asynchronous read replica",
             "what": "One replica is not enough.", "why": "It may fail.",
             "suggestion": "Add a second."},
}


def _script(request) -> str:
    text = request.text
    name, m = ASK.search(text).group(1), STEP.search(text)
    step, round_ = m.group(1).strip(), int(m.group(2) or 0)
    doc = next(number for title, number in TITLES.items() if title in text)
    first = name == "AI-Architect" and round_ == 1
    if step == "Review":
        findings = [FINDINGS[doc]] if first else []
        return json.dumps({"comment": "Reviewed.", "vote": "CHANGES" if findings else "READY",
                           "findings": findings})
    if step == "Confirm":
        return json.dumps({"comment": "Confirmed.", "vote": "ACCEPT",
                           "findings": [FINDINGS[doc]] if first else []})
    if step == "Synthesize":
        return json.dumps({"comment": "## Consensus statement\nGo ahead.", "diverged": "no"})
    return json.dumps({"comment": f"{name} on {step}.", "shift": "minor"})


def test_the_bench_end_to_end_over_the_scripted_endpoint(fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    fake_llm.default(_script)
    proc = subprocess.run([sys.executable, str(BENCH), "--model", "openai/fake", "--only",
                           "0001,0002,0009", "--configs", "one,pcs", "--json"],
                          capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["model"] == "openai/fake" and list(out["configs"]) == ["one", "pcs"]
    for config, s in out["configs"].items():
        assert (s["flaws"], s["located"], s["mentioned_not_located"]) == (3, 1, 1), config
        assert (s["findings"], s["not_found"], s["false_findings"]) == (3, 1, 1), config
        per = s["per_adr"]
        assert per["0001-add-currency-to-invoices.md"]["located"] == ["no-backfill"]
        assert per["0001-add-currency-to-invoices.md"]["missed"] == ["no-rollback"]
        assert per["0002-send-notifications-through-smtp-relay.md"]["mentioned"] == [
            "plaintext-secret"]
        assert s["tokens"] > 0 and s["seconds"] > 0
    row = quality.row("one", out["configs"]["one"])  # the table's row, as the bench prints it
    assert row[1:5] == ("1/3 (33%)", "1/3", "3 (1 not found)", "1 on 1"), row
