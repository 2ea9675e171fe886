"""The Python API: a program asks personas on a discussion as the commands do (docs/api.md)."""
from cascade.api.runner import Runner, TurnReply

__all__ = ["Runner", "TurnReply"]
