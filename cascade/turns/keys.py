"""Where each provider reads its credentials: "no credentials for <model>: set <VAR>" before
any call when a key could only be missing, and the key an OpenAI-compatible endpoint is sent.
litellm is asked only for a provider this table does not know.
"""
from __future__ import annotations

import os
import sys

from cascade.turns.call import LOCAL_PREFIX
from cascade.turns.litellm_loader import litellm_module
from cascade.turns.settings import Settings

# The providers whose keys are known without importing litellm.
KNOWN_PREFIXES = ("openai", "anthropic")


# Where each provider reads its key, for "no credentials for <model>: set <VAR>". A tuple is
# (variables shown, how they combine, variables also accepted).
_KEY_VARS: dict[str, tuple[tuple[str, ...], str, tuple[str, ...]]] = {
    "openai": (("OPENAI_API_KEY",), "or", ()),
    "text-completion-openai": (("OPENAI_API_KEY",), "or", ()),
    "anthropic": (("ANTHROPIC_API_KEY",), "or", ("ANTHROPIC_AUTH_TOKEN",)),
    "gemini": (("GEMINI_API_KEY", "GOOGLE_API_KEY"), "or", ()),
    "bedrock": (("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"), "and", ()),
    "sagemaker": (("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"), "and", ()),
    "vertex_ai": (("GOOGLE_APPLICATION_CREDENTIALS",), "or", ()),
    "azure": (("AZURE_API_KEY",), "or", ("AZURE_AD_TOKEN",)),
}
# Providers whose credentials may come from outside the environment (an AWS profile or
# instance role, Google's default credentials, Entra ID) or that need none (ollama): never
# refused before the call; a failure to find credentials is recognised afterwards instead.
_AMBIENT = {"bedrock", "sagemaker", "vertex_ai", "vertex_ai_beta", "azure", "azure_ai",
            "ollama", "ollama_chat"}


def _provider(model: str) -> str | None:
    prefix = model.partition("/")[0]
    if "/" in model and prefix in KNOWN_PREFIXES:
        return prefix  # known without importing litellm
    try:
        return litellm_module().get_llm_provider(model=model)[1] or None
    except Exception:  # noqa: BLE001 - an unknown provider: litellm says so when called
        return None


def _is_set(var: str) -> bool:
    return bool(os.environ.get(var, "").strip())


def key_phrase(model: str) -> str | None:
    """"set A" / "set A or B" / "set A and B": where ``model``'s credentials would come from."""
    provider = _provider(model)
    if provider in _KEY_VARS:
        shown, joiner, _ = _KEY_VARS[provider]
    else:
        shown, joiner = _missing_keys(model), "or"
    return f"set {f' {joiner} '.join(shown)}" if shown else None


def _missing_keys(model: str, api_base: str | None = None) -> tuple[str, ...]:
    """The key variables litellm says ``model`` lacks (none when it cannot say)."""
    try:
        report = litellm_module().validate_environment(model=model, api_base=api_base)
    except Exception:  # noqa: BLE001 - an unknown provider: litellm says so when called
        return ()
    return tuple(v for v in report.get("missing_keys") or []
                 if v.endswith(("_API_KEY", "_API_TOKEN", "_AUTH_TOKEN", "_KEY")))


def missing_credentials(model: str, api_key: str | None = None,
                        api_base: str | None = None) -> str | None:
    """``"no credentials for <model>: set <VAR>"`` when a call could only fail for want of a
    key in the environment; None when the key is there, not needed, or not knowable here."""
    if model.startswith(LOCAL_PREFIX) or api_key:
        return None
    provider = _provider(model)
    if provider is None or provider in _AMBIENT:
        return None
    # A key set in code by a program that uses cascade as a library (which then imported
    # litellm itself: a model asked over plain HTTP does not import it to look).
    litellm = sys.modules.get("litellm") if provider in KNOWN_PREFIXES else litellm_module()
    if litellm is not None and (getattr(litellm, "api_key", None)
                                or getattr(litellm, f"{provider}_key", None)):
        return None
    if provider in _KEY_VARS:
        shown, joiner, also = _KEY_VARS[provider]
        if joiner == "and":  # every variable shown (``also`` offers alternatives to "or" only)
            present = all(_is_set(v) for v in shown)
        else:
            present = any(_is_set(v) for v in shown + also)
        if present:
            return None
    else:
        shown, joiner = _missing_keys(model, api_base), "or"
        if not shown or any(_is_set(v) for v in shown):
            return None  # only a base URL or a project is missing, or a key is there after all
    return f"no credentials for {model}: set {f' {joiner} '.join(shown)}"


def key_hint(settings: Settings, key: str | None) -> str | None:
    if settings.api_key:
        return "check CASCADE_API_KEY"
    if key == "no-key":
        return "no key was sent: set CASCADE_API_KEY"
    return None


def openai_key(settings: Settings, api_base: str | None = None) -> str | None:
    """The key litellm would send an openai/ model: CASCADE_API_KEY; "no-key" for a
    configured endpoint (``api_base``, else CASCADE_API_BASE) when OPENAI_API_KEY is not set;
    a key set in code on litellm; OPENAI_API_KEY."""
    if settings.api_key:
        return settings.api_key
    env_key = os.environ.get("OPENAI_API_KEY", "").strip() or None
    if (api_base or settings.api_base) and not env_key:
        return "no-key"
    library = sys.modules.get("litellm")  # None: getattr gives None
    in_code = getattr(library, "api_key", None) or getattr(library, "openai_key", None)
    return (in_code if isinstance(in_code, str) and in_code else None) or env_key
