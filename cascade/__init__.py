"""CascadingDev: Git-native design review by a panel of AI personas.

    from cascade import Discussion
    d = Discussion.load("docs/adr/discussions/0007-event-store.discussion.md")
    d.add_comment("Rob", "Let's use JWT with 1h expiry.", vote="READY")
    d.save()

Names are imported on first use, so that ``cascade hook`` on a commit it does not govern
starts as fast as a trivial hook.
"""
from __future__ import annotations

import importlib

from cascade.base.version import __version__
__all__ = ["CascadeError", "ConsensusResult", "Discussion", "Runner", "TurnReply",
           "VotingConfig", "calculate_consensus", "__version__"]

_LAZY = {
    "CascadeError": "cascade.base.errors",
    "ConsensusResult": "cascade.ledger.consensus",
    "VotingConfig": "cascade.ledger.consensus",
    "calculate_consensus": "cascade.ledger.consensus",
    "Discussion": "cascade.protocol.discussion",
    "Runner": "cascade.api",
    "TurnReply": "cascade.api",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cascade' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
