"""The Python API: a program asks personas on a discussion as the commands do.

    from cascade.api import Runner
    Runner().run("docs/adr/discussions/0007-event-store.discussion.md")
"""
from cascade.api.runner import Runner, TurnReply

__all__ = ["Runner", "TurnReply"]
