"""What a check found: problems (the check fails), warnings (it does not), verdicts."""
from __future__ import annotations

from msgspec import Struct, field
from msgspec.structs import asdict


class Problem(Struct):
    file: str  # repository-relative
    line: int
    reason: str
    kind: str  # missing-ledger, no-consensus, edited, ... (docs/ci.md, Output formats)
    commit: str | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"file": self.file, "line": self.line, "reason": self.reason,
                                  "kind": self.kind}
        if self.commit:
            out["commit"] = self.commit
        return out


class Notice(Struct):
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: warning: {self.message}"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class DocumentVerdict(Struct):
    """The gate's decision for one governed document."""

    document: str
    ledger: str
    ok: bool
    verdict: str  # e.g. "consensus READY (3/3 READY)", "ledger missing"
    votes: str = "-"  # e.g. "READY:3 CHANGES:1"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class Located(Struct):
    """An open finding where a pull request shows it: the document's lines (``on_document``),
    else the ledger block that gave it."""

    file: str
    line: int
    end_line: int
    id: str  # F3
    severity: str  # critical, major, minor, info
    what: str
    why: str
    suggestion: str
    author: str
    ledger: str
    on_document: bool
    level: str = "warning"  # error (it fails the check), warning, notice: the verdict's effect

    @property
    def message(self) -> str:
        return (f"{self.id} ({self.severity}, {self.author}): {self.what}"
                + (f" -- why: {self.why}" if self.why else "")
                + (f" -- suggestion: {self.suggestion}" if self.suggestion else "")
                + ("" if self.on_document else " (not located in the document)"))


class Report(Struct):
    from_commit: str | None
    to_commit: str
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Notice] = field(default_factory=list)
    verdicts: list[DocumentVerdict] = field(default_factory=list)
    findings: list[Located] = field(default_factory=list)  # open ones (github, sarif)
    documents: int = 0
    legacy: int = 0  # of the documents: unchanged since adoption, no ledger needed
    ledgers: int = 0
    commits: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def checked(self) -> dict[str, int]:
        return {"documents": self.documents, "legacy": self.legacy, "ledgers": self.ledgers,
                "commits": self.commits}

    def summary(self) -> str:
        legacy = f" ({self.legacy} legacy, unchanged since adoption)" if self.legacy else ""
        scope = f"{self.documents} governed document(s){legacy}, {self.ledgers} ledger(s), " + (
            f"{self.commits} commit(s)" if self.from_commit
            else "no history checked: give --from-ref for that")
        if self.ok:
            return f"cascade check: ok ({scope})"
        return f"cascade check: {len(self.problems)} problem(s) in {scope}"
