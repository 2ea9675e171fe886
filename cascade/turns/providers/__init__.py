"""Providers: the ways a model is asked, registered by name (the built-in ones, and how a
package adds one through the entry point group ``cascade.providers``: docs/providers.md).

A provider is a module that registers a ``Provider``: its name, and ``route(target, ask)``,
which says how one model of the fallback chain is asked (a ``cascade.turns.call.Route``) or
why it is not (one line: "no credentials for ..."). Whatever every provider shares --
retries, the fallback chain, a failure said in one line, credentials scrubbed from what is
shown, the budget -- is cascade.turns.chain's, so a provider only builds its request and
reads its answer. A built-in provider's module is imported the first time it is asked for (a
run served from the reply cache loads no HTTP client); of installed packages, only
distributions are read, never the repository under review.

Which provider asks a name of the chain (``target``): a provider declared by that name
(cascade.config.providers) asks its command, or its model as a model string would be; a
model string ``<prefix>/<name>`` goes to the provider registered as ``<prefix>`` that serves
model strings (all of them through litellm under ``CASCADE_HTTP=litellm``, but the embedded
model); anything else to litellm.
"""
from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable

from msgspec import Struct

from cascade.base.errors import CascadeError
from cascade.base.plugins import load_entry_points
from cascade.turns.call import LOCAL_PREFIX, Ask, Route, Target
from cascade.turns.settings import Settings

GROUP = "cascade.providers"
LITELLM = "litellm"
COMMAND = "command"
LOCAL = LOCAL_PREFIX.rstrip("/")

RouteFn = Callable[[Target, Ask], "Route | str | Awaitable[Route | str]"]


class Provider(Struct, frozen=True):
    """A registered provider. ``serves_prefix``: it asks model strings ``<name>/<model>``
    (else only a declared provider names it, as ``command``); ``uses_litellm``: asking it
    imports litellm (worth starting early, off the event loop)."""

    name: str
    route: RouteFn
    serves_prefix: bool = True
    uses_litellm: bool = False


# The built-in providers: name -> (module, whether it imports litellm). Known without
# importing the modules, which load an HTTP client.
_BUILT_IN: dict[str, tuple[str, bool]] = {
    "openai": ("cascade.turns.providers.openai_chat", False),
    "anthropic": ("cascade.turns.providers.anthropic_messages", False),
    "ollama": ("cascade.turns.providers.ollama_chat", False),
    "ollama_chat": ("cascade.turns.providers.ollama_chat", False),
    COMMAND: ("cascade.turns.providers.command", False),
    LOCAL: ("cascade.turns.providers.embedded", True),
    LITELLM: ("cascade.turns.providers.litellm_route", True),
}
_registry: dict[str, Provider] = {}
_plugins_loaded = False


def register(provider: Provider) -> Provider:
    """Add ``provider`` under its name (a later registration of the name replaces it)."""
    _registry[provider.name] = provider
    return provider


def provider(name: str) -> Provider:
    """The provider registered as ``name`` (its module imported on first use)."""
    found = _registry.get(name) or _import(name)
    if found is None:
        raise CascadeError(f"no provider is registered as {name!r}")
    return found


def _import(name: str) -> Provider | None:
    """Import the module that registers ``name``: a built-in one, else every installed
    package's entry points (once)."""
    global _plugins_loaded
    if name in _BUILT_IN:
        importlib.import_module(_BUILT_IN[name][0])
    elif not _plugins_loaded:
        _plugins_loaded = True
        load_entry_points(GROUP, "providers")
    return _registry.get(name)


def _serving(prefix: str) -> str | None:
    """The provider that asks model strings ``<prefix>/...`` itself, or None (litellm)."""
    if prefix in _BUILT_IN:
        return prefix if prefix not in (COMMAND, LITELLM) else None
    found = _registry.get(prefix) or _import(prefix)
    return prefix if found is not None and found.serves_prefix else None


def target(name: str, settings: Settings) -> Target:
    """Which provider asks ``name`` (a declared provider's name or a model string), and with
    what: see the module's docstring."""
    entry = settings.providers.entry(name)
    if entry is not None and entry.command is not None:
        return Target(name, COMMAND, entry.command, entry.options)
    model = entry.model if entry is not None and entry.model else name
    options = entry.options if entry is not None else ()
    prefix, _, rest = model.partition("/")
    if model.startswith(LOCAL_PREFIX):
        return Target(name, LOCAL, model, options)
    if rest and settings.http != "litellm":
        serving = _serving(prefix)
        if serving is not None:
            return Target(name, serving, model, options)
    return Target(name, LITELLM, model, options)


def uses_litellm(name: str, settings: Settings) -> bool:
    """Whether asking ``name`` imports litellm."""
    which = target(name, settings).provider
    if which in _BUILT_IN:
        return _BUILT_IN[which][1]
    return provider(which).uses_litellm
