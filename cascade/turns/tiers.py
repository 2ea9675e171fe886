"""Which model a role asks: the persona's own, the rule's for the role or its tier, the strong
model for a strong role, the rule's or the environment's, then the embedded one."""
from __future__ import annotations

import os

from cascade.turns.model import resolve_model
from cascade.turns.settings import Settings


def strong_model() -> str | None:
    return os.environ.get("CASCADE_MODEL_STRONG") or None


def models_for(persona, role: str | None, tier: str, rule_model: str | None,
               rule_models: dict | None, settings: Settings) -> tuple[str, ...]:
    """The model a role asks, then its own fallbacks (before CASCADE_FALLBACK_MODELS). The
    model: persona ``model:`` > the rule's ``models:`` for the role, else for its tier (the
    persona's ``provider_hint``, when it gives one) > CASCADE_MODEL_STRONG (a strong role) >
    the rule's ``model:`` / CASCADE_MODEL > the embedded model. The fallbacks: the rest of
    that ``models:`` entry."""
    tier = persona.provider_hint or tier
    given = rule_models or {}
    entry = given.get(role) if role and role not in ("fast", "strong") else None
    entry = entry or given.get(tier) or ()
    entry = (entry,) if isinstance(entry, str) else tuple(entry)
    tiered = entry[0] if entry else (strong_model() if tier == "strong" else None)
    model = resolve_model(persona.model or tiered, rule_model, settings)
    return tuple(dict.fromkeys((model, *entry[1:])))


def model_for(persona, tier: str, rule_model: str | None, rule_models: dict | None,
              settings: Settings, role: str | None = None) -> str:
    """The model a role asks first (``models_for``)."""
    return models_for(persona, role, tier, rule_model, rule_models, settings)[0]
