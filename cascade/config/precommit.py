"""What a repository's ``.pre-commit-config.yaml`` lets the cascade hook see.

pre-commit runs a hook only for the staged paths that its ``files:`` regex (and the config's
top-level one) matches and its ``exclude:`` does not (``re.search``). A ``files:`` filter
written once from the rules drifts as soon as a rule is added: pre-commit prints "(no files to
check) Skipped" and the document lands unreviewed. ``cascade init`` writes none (the hook
returns at once on a commit no rule governs); this finds one that an older ``init``, or a
person, wrote, so that ``init`` and ``check`` can say which governed paths it hides.
"""
from __future__ import annotations

import functools
import re

import msgspec
import yaml

CONFIG = ".pre-commit-config.yaml"
HOOK_ID = "cascade"


class HookFilter(msgspec.Struct, frozen=True):
    """The cascade hook's view: the paths it is run for."""

    files: list[str]  # every one must match (the config's and the hook's)
    exclude: list[str]  # none may match

    def hides(self, path: str) -> bool:
        return (not all(re.search(f, path) for f in self.files)
                or any(re.search(e, path) for e in self.exclude))

    def describe(self) -> str:
        return " and ".join([f"files: {f!r}" for f in self.files]
                            + [f"exclude: {e!r}" for e in self.exclude])


def has_hook(text: str) -> bool:
    """Whether a config's text has the cascade hook (a config that cannot be read: no)."""
    return bool(_hooks(text)[1])


def _hooks(text: str) -> tuple[dict, list[dict]]:
    """The config a text loads to, and its cascade hooks (none when it cannot be read)."""
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}, []
    if not isinstance(config, dict) or not isinstance(config.get("repos"), list):
        return {}, []
    return config, [h for r in config["repos"] if isinstance(r, dict)
                    for h in (r.get("hooks") or [])
                    if isinstance(h, dict) and h.get("id") == HOOK_ID]


@functools.lru_cache(maxsize=8)
def hook_filter(text: str) -> HookFilter | None:
    """The filter on the cascade hook in a config's text; None when there is no cascade hook,
    it sees every staged path, or the config cannot be read (pre-commit says why itself)."""
    config, hooks = _hooks(text)
    if not hooks:
        return None
    hook = hooks[0]
    if hook.get("always_run") is True and hook.get("pass_filenames") is False:
        return None  # run on every commit, and it asks git what is staged
    files = [f for f in (config.get("files"), hook.get("files")) if isinstance(f, str) and f]
    exclude = [e for e in (config.get("exclude"), hook.get("exclude"))
               if isinstance(e, str) and e and e != "^$"]
    try:
        for pattern in files + exclude:
            re.compile(pattern)
    except re.error:
        return None
    return HookFilter(files, exclude) if files or exclude else None
