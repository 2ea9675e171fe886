"""The tool's stamp on the blocks it writes, bound to their content.

A block the tool writes for a persona (``<!-- cascade:ai ... -->``) or for a person's decision
(``<!-- cascade:decision ... -->``) carries ``sig=``, a SHA-256 digest of what the parser reads
back from the block: its kind, author, vote, markdown and the stamp's other fields (the model,
the reviewed revision, ...). A block that is edited after it was written, a stamp copied onto
another block, or a block written by hand under a persona's name does not verify, and does
not count.

This is integrity, not authentication: the digest has no secret, so a committer who means to
forge can compute it. What it catches is every edit and hand-written block made without
that intent, and it makes a forgery deliberate. The organisational guard against deliberate
forgery is review of the ledgers themselves (CODEOWNERS on ledgers and rule files).
"""
from __future__ import annotations

import hashlib

from cascade.ledger.model import Comment

SIG = "sig"
VERSION = "1"


def digest(comment: Comment) -> str:
    fields = "".join(f"{k}={v}\n" for k, v in sorted(comment.provenance.items()) if k != SIG)
    payload = (f"cascade-block/{VERSION}\n{comment.origin}\n{comment.author}\n{comment.vote}\n"
               f"{fields}\n{comment.body}")
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def verify(comment: Comment) -> str | None:
    """None when the block carries the tool's valid stamp; otherwise why it does not."""
    if comment.stamps == 0 or comment.origin is None:
        return "no stamp: written by hand, not by cascade"
    if comment.stamps > 1:
        return "more than one stamp line"
    sig = comment.provenance.get(SIG)
    if not sig:
        return "stamp without a digest (written by an older cascade, or by hand)"
    if sig != digest(comment):
        return "edited after cascade wrote it (its digest does not match)"
    return None
