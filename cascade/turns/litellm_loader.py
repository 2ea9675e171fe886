"""litellm, imported once and quietly, only for a model that needs it: its import takes 2-3 s
here, so nothing imports it at module level."""
from __future__ import annotations

import logging
import os
from types import ModuleType

_litellm: ModuleType | None = None


def loaded() -> ModuleType | None:
    """litellm if ``litellm_module`` imported and set it up already, else None (never
    imports it: asked on the event loop, where an import would hold up every call)."""
    return _litellm


def litellm_module() -> ModuleType:
    """Import litellm once, quietly, with its price list read from the package (no network)."""
    global _litellm
    if _litellm is None:
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        os.environ.setdefault("LITELLM_LOG", "ERROR")
        import litellm  # litellm only for a model the direct path does not serve

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        litellm.drop_params = True
        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        try:
            # The openai SDK imports its resources on the first request (~1.4 s here). Left
            # to then, that import runs inside the event loop and holds up every concurrent
            # call; done now, it is paid once, before any call starts.
            import openai.resources  # noqa: F401
        except ImportError:
            pass
        _litellm = litellm
    return _litellm
