"""The discussion ledger as a format: its grammar, parsing, rendering, markers, provenance,
votes and consensus counting, and one ledger's file (read, appended, saved). Nothing here
knows a protocol; a discussion's state and verdict are derived one layer up
(cascade.protocol.derivation, cascade.protocol.derived_view, cascade.protocol.discussion).

Pure and fast: no git, no network, no model. Everything else stands on it.
"""
