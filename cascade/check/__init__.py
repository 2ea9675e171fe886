"""``cascade check``: the model-free CI gate, and what the hook shares with it about a
repository's ledgers (which rule governs a ledger and with what authority, who added a line,
the committed trees). The rules it applies are in docs/ci.md.

- run.py: the orchestration (refs, modes, what is checked)
- governance.py: which rule governs a ledger, and its authority (the hook's too)
- attribution.py: who added a line of a ledger (git blame, or the commit being made)
- gittree.py: committed state from git objects (refs, trees, blobs, raw diffs)
- config.py: the committed ``.cascade/`` (personas, protocols, presets) for the lookups
- documents.py: governed documents, their ledgers, and the gate's verdict on each
- ledgers.py: ledger state derived as the hook derives it, fast and in bulk
- history.py, appendonly.py, merge.py: every commit of the range only appends to ledgers
- report.py, formats.py: problems, warnings and verdicts as text, JSON, GitHub or SARIF
"""
