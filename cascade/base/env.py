"""Numbers from the environment, validated: a bad value is one line naming its variable."""
from __future__ import annotations

import os

from cascade.base.errors import CascadeError


def number(name: str, default: float | None, kind: type = float,
           minimum: float = 0) -> float | None:
    """``$name`` as ``kind`` (float or int), at least ``minimum``; ``default`` when unset."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise CascadeError(f"{name}={raw!r} is not a {'whole ' if kind is int else ''}"
                           "number") from None
    if not value >= minimum:
        raise CascadeError(f"{name}={raw!r} must be at least {minimum}")
    return value
