"""Revisions of a document, named the way git names them: the blob id of its bytes."""
from __future__ import annotations

import hashlib


def blob_id(data: bytes) -> str:
    """What ``git hash-object`` prints for ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
