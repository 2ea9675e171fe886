"""Print a Report as text, JSON, or GitHub Actions workflow commands (plus a job summary).

Reasons and messages can quote ledgers and documents: every format passes what it prints
through cascade.base.text (printable, json_printable), so no control character reaches a terminal
or a CI log (GitHub's log viewer renders ANSI escapes too)."""
from __future__ import annotations

import json
import os
from typing import TextIO

from cascade.check.report import Report
from cascade.base.text import json_printable, printable


def text(report: Report, out: TextIO) -> None:
    for entry in [*report.problems, *report.warnings]:
        print(printable(entry), file=out)
    print(printable(report.summary()), file=out)


def as_json(report: Report, out: TextIO) -> None:
    data = {
        "ok": report.ok,
        "from": report.from_commit,
        "to": report.to_commit,
        "checked": report.checked,
        "problems": [p.as_dict() for p in report.problems],
        "warnings": [w.as_dict() for w in report.warnings],
        "verdicts": [v.as_dict() for v in report.verdicts],
    }
    print(json_printable(json.dumps(data, indent=2, ensure_ascii=False)), file=out)


def _data(value: str) -> str:
    """Escape a workflow command's message (GitHub's escapeData), controls made visible."""
    return printable(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(value: str) -> str:
    """Escape a workflow command's property value (GitHub's escapeProperty)."""
    return _data(value).replace(":", "%3A").replace(",", "%2C")


def github_errors(errors: list, out: TextIO) -> None:
    """The configuration errors that stop a check (exit 2), as annotations on their files and
    lines: the lines the command also prints on stderr."""
    for e in errors:
        where = f"file={_property(e.path)},line={e.line or 1}," if e.path else ""
        print(f"::error {where}title={_property('cascade check')}::{_data(e.message)}", file=out)


def github(report: Report, out: TextIO) -> None:
    for p in report.problems:
        print(f"::error file={_property(p.file)},line={p.line},title={_property('cascade check')}"
              f"::{_data(p.reason)}", file=out)
    for w in report.warnings:
        print(f"::warning file={_property(w.file)},line={w.line},"
              f"title={_property('cascade check')}::{_data(w.message)}", file=out)
    for f in report.findings:  # open findings, on the document's lines, at the verdict's level
        print(f"::{f.level} file={_property(f.file)},line={f.line},endLine={f.end_line},"
              f"title={_property(f'cascade {f.id} ({f.severity})')}::{_data(f.message)}",
              file=out)
    print(printable(report.summary()), file=out)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file:
        with open(summary_file, "a", encoding="utf-8") as fh:
            fh.write(step_summary(report))


def _cell(value: object) -> str:
    return printable(value).replace("|", "\\|").replace("\n", " ")


def _open(report: Report, ledger: str) -> str:
    """A document's open findings, for its row: ``F1 major at docs/adr/1.md:7 (fails the
    check): what``, by AI-Security."""
    return "<br>".join(f"{_cell(f.id)} {_cell(f.severity)} at `{_cell(f.file)}:{f.line}` "
                       f"({_EFFECT[f.level]}): {_cell(f.what)} ({_cell(f.author)})"
                       for f in report.findings if f.ledger == ledger) or "-"


def step_summary(report: Report) -> str:
    """A markdown job summary: one row per governed document, then the problems."""
    mark = "✅" if report.ok else "❌"
    lines = [f"## {mark} cascade check", "", report.summary(), ""]
    if report.verdicts:
        lines += ["| ledger | document | verdict | votes | open findings |",
                  "|---|---|---|---|---|"]
        lines += [f"| {_cell(v.ledger)} | {_cell(v.document)} | "
                  f"{'✅' if v.ok else '❌'} {_cell(v.verdict)} | {_cell(v.votes)} | "
                  f"{_open(report, v.ledger)} |" for v in report.verdicts]
        lines.append("")
    if report.problems:
        lines += ["### Problems", ""]
        lines += [f"- `{_cell(p.file)}:{p.line}` {_cell(p.reason)}" for p in report.problems]
        lines.append("")
    if report.warnings:
        lines += ["### Warnings", ""]
        lines += [f"- `{_cell(w.file)}:{w.line}` {_cell(w.message)}" for w in report.warnings]
        lines.append("")
    return "\n".join(lines) + "\n"


# a finding's level is the verdict's effect (cascade.protocol.verdict.Judgement.effect):
# error, warning or notice, GitHub's own levels
SARIF_LEVEL = {"error": "error", "warning": "warning", "notice": "note"}
_EFFECT = {"error": "fails the check", "warning": "open (does not fail it)",
           "notice": "open (does not fail it)"}
SEVERITY_LEVEL = {"critical": "error", "major": "warning", "minor": "note", "info": "note"}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_URI = "https://github.com/cascadingdev/cascadingdev"


def sarif(report: Report, out: TextIO) -> None:
    """SARIF 2.1.0: one result per open finding (its document's lines, or the ledger block
    that gave it; its level the verdict's effect: error only when it fails the check) and
    one per problem (the check fails on those)."""
    rules = [{"id": f"finding/{s}", "name": f"{s.capitalize()}Finding",
              "shortDescription": {"text": f"A {s} finding of the review panel"},
              "defaultConfiguration": {"level": level}} for s, level in SEVERITY_LEVEL.items()]
    kinds = sorted({p.kind for p in report.problems})
    rules += [{"id": f"check/{k}", "name": "".join(w.capitalize() for w in k.split("-")),
               "shortDescription": {"text": f"cascade check: {k}"},
               "defaultConfiguration": {"level": "error"}} for k in kinds]
    results = [_result(f"finding/{f.severity}", SARIF_LEVEL[f.level], f.message, f.file,
                       f.line, f.end_line) | {"partialFingerprints": {
                           "cascadeFinding/v1": f"{f.ledger}#{f.id}"}}
               for f in report.findings]
    results += [_result(f"check/{p.kind}", "error", p.reason, p.file, p.line, p.line)
                for p in report.problems]
    data = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "cascade", "informationUri": _URI, "rules": rules}},
        "results": results}]}
    print(json_printable(json.dumps(data, indent=2, ensure_ascii=False)), file=out)


def _result(rule: str, level: str, message: str, file: str, line: int, end: int) -> dict:
    return {"ruleId": rule, "level": level, "message": {"text": printable(message)},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": file},
                "region": {"startLine": max(line, 1), "endLine": max(end, line, 1)}}}]}


FORMATS = {"text": text, "json": as_json, "github": github, "sarif": sarif}
WITH_FINDINGS = ("github", "sarif")  # the formats that place the open findings
