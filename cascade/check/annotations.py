"""The open findings of the governed documents' ledgers, placed for a pull request at the
level the gate's verdict gives each: on the document's lines where its ``where`` is found
again (or its recorded lines still apply), else on the ledger block that gave it (docs/ci.md,
``--format github``)."""
from __future__ import annotations

from cascade.check.report import Located, Report
from cascade.protocol.findings import locate


def place(report: Report, items: list, states: dict, tree) -> None:
    """Add each open finding of the governed documents' ledgers to ``report.findings``."""
    for item in items:
        state = states.get(item.ledger)
        if state is None or not state.findings or item.doc not in tree.files:
            continue
        blob = tree.files[item.doc]
        text = tree.data(item.doc).decode("utf-8", errors="replace")
        for f in state.findings:  # the open ones (a closed one is not annotated)
            lines = locate(f["where"], text) if f["where"] else None
            if lines is None and f["lines"] and f.get("revision") == blob:
                lines = tuple(f["lines"])
            file, first, last = ((item.doc, *lines) if lines
                                 else (item.ledger, f["line"], f["line"]))
            report.findings.append(Located(
                file, first, last, f["id"], f["severity"], f["what"], f["why"],
                f["suggestion"], f["author"], item.ledger, lines is not None, f["effect"]))
