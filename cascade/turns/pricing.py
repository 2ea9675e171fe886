"""What an answer cost: a LiteLLM proxy's ``x-litellm-response-cost`` header; else the
per-token price in the price list litellm ships (read through an index of its prices kept in
the user's cache folder: litellm is not imported); else None. And the answer itself: its
text and its token counts.
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
from pathlib import Path
from typing import Any

from msgspec import Struct

from cascade.base.atomic import atomic_write


class Answer(Struct):
    text: str
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


def _package_file(package: str, name: str) -> Path | None:
    """The file ``name`` in an installed ``package``, found without importing it."""
    spec = importlib.util.find_spec(package)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / name
        if path.is_file():
            return path
    return None


def answer(text: str, prompt_tokens: Any, completion_tokens: Any, priced: tuple[str, ...],
           cost_header: str | None) -> Answer:
    """The answer: its text, its token counts, and its cost (the proxy's header, else the
    price list's for the first of the names ``priced`` it lists)."""
    prompt, completion = _count(prompt_tokens), _count(completion_tokens)
    cost = _header_cost(cost_header)
    if cost is None:
        cost = listed_cost(priced, prompt, completion)
    return Answer(text, prompt, completion, cost)


def _count(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def _header_cost(value: str | None) -> float | None:
    try:
        cost = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):  # TypeError: no header
        return None
    return cost if math.isfinite(cost) and cost >= 0 else None


_index: str | None = None  # the price index's text (see _price_index)
INDEX_HEAD = '["cascade price index", 1]\n'


def _price_index(path: Path) -> str:
    """The per-token prices of the price list at ``path``, one model a line after a header
    line: ``[name, input cost, output cost]`` as JSON, for each model it gives a price entry.
    Kept in the user's cache folder, keyed by the list's size and time: parsing the 3 MB list
    costs 20-90 ms, on every run that prices a model it names; the index (~220 KB) is read,
    and the line for a model found, in about 1 ms."""
    stat = path.stat()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    index = base / "cascade" / f"price-index-{stat.st_size}-{stat.st_mtime_ns}.jsonl"
    try:
        text = index.read_text("utf-8")
        if text.startswith(INDEX_HEAD):
            return text
    except (OSError, ValueError):
        pass
    prices = json.loads(path.read_bytes())
    text = INDEX_HEAD + "".join(
        json.dumps([name, entry.get("input_cost_per_token"),
                    entry.get("output_cost_per_token")]) + "\n"
        for name, entry in (prices.items() if isinstance(prices, dict) else ())
        if isinstance(name, str) and isinstance(entry, dict))
    try:
        index.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(index, text.encode("utf-8"), durable=False)
    except OSError:
        pass  # a read-only cache folder: the next run reads the list again
    return text


def _listed_prices(index: str, name: str) -> tuple[Any, Any] | None:
    """(input cost, output cost) per token of ``name`` as the index lists them; None for a
    model it does not list. Names are written as JSON escapes them (ASCII only), so a line
    starts with exactly this prefix for this name and no other."""
    at = index.find("\n" + json.dumps([name])[:-1] + ",")
    if at < 0:
        return None
    end = index.find("\n", at + 1)
    _name, input_cost, output_cost = json.loads(index[at + 1:end if end >= 0 else None])
    return input_cost, output_cost


def listed_cost(names: tuple[Any, ...], prompt_tokens: int,
                completion_tokens: int) -> float | None:
    """The price litellm's bundled price list gives the first of ``names`` it lists (the
    model asked, under its names, or the one that answered): tokens times the per-token
    prices; None for a model it does not list."""
    global _index
    try:
        if _index is None:
            path = _package_file("litellm", "model_prices_and_context_window_backup.json")
            _index = _price_index(path) if path else INDEX_HEAD
        for candidate in (n for n in names if isinstance(n, str) and n):
            listed = _listed_prices(_index, candidate)
            if listed is None:
                continue
            try:
                return (prompt_tokens * float(listed[0] or 0)
                        + completion_tokens * float(listed[1] or 0))
            except (TypeError, ValueError):
                return None
    except (OSError, ValueError):
        return None
    return None
