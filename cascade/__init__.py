"""CascadingDev: Git-native design review by a panel of AI personas.

    from cascade import Discussion
    d = Discussion.load("docs/adr/discussions/0007-event-store.discussion.md")
    d.add_comment("Rob", "Let's use JWT with 1h expiry.", vote="READY")
    d.save()
"""
from cascade.errors import CascadeError
from cascade.ledger.consensus import ConsensusResult, VotingConfig, calculate_consensus
from cascade.ledger.discussion import Discussion

__all__ = ["CascadeError", "ConsensusResult", "Discussion", "VotingConfig",
           "calculate_consensus", "__version__"]
__version__ = "0.1.0"
