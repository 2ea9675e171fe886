"""The discussion ledger: parsing, rendering, markers, votes and consensus.

Pure and fast: no git, no network, no model. Everything else stands on it.
"""
