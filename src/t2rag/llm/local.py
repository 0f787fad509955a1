"""An in-process local GGUF chat model through xllamacpp (llama.cpp), with JSON-schema constrained output."""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from t2rag.errors import BackendError, ConfigError, RequestRejected
from t2rag.jsontext import loads
from t2rag.llm.base import DEFAULT_MAX_TOKENS
from t2rag.llm.models import BUNDLED_MODELS, resolve_model_path
from t2rag.llm.structured import clean_text
from t2rag.types import Completion, Message


def _one_line(text: object, limit: int = 300) -> str:
    return " ".join(str(text).split())[:limit]


# Tokens per decoding slot. 8,192 fits five ~750-word passages in the reader's prompt; with 2
# slots the 1.5B model's resident memory grows 1,993 -> 2,217 MiB from 4,096 (2,665 at 16,384,
# 3,561 at 32,768), and a short prompt runs no slower in a larger context.
DEFAULT_CONTEXT = 8192


# Speculative decoding: a cheap guess at the next tokens, checked by the model in one batch.
# "ngram" drafts from n-grams of the prompt and the reply so far (prompt lookup: extraction copies
# spans of its passage); "draft:SPEC" drafts with a smaller bundled model, e.g. draft:small.
SPECULATIVE = ("none", "ngram", "ngram-mod", "draft:small")


def _speculative(params: Any, mode: str) -> None:
    import xllamacpp

    kinds = xllamacpp.common_speculative_type
    if mode == "ngram":
        params.speculative.types = [kinds.COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE]
    elif mode == "ngram-mod":
        params.speculative.types = [kinds.COMMON_SPECULATIVE_TYPE_NGRAM_MOD]
    elif mode.startswith("draft:"):
        params.speculative.types = [kinds.COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE]
        params.speculative.draft.mparams.path = str(resolve_model_path(mode.partition(":")[2]))
        params.speculative.draft.cpuparams.n_threads = params.cpuparams.n_threads
        params.speculative.draft.cpuparams_batch.n_threads = params.cpuparams.n_threads
    elif mode != "none":
        raise ConfigError(f"speculative must be one of {', '.join(SPECULATIVE)}, not {mode!r}")


def server_params(
    path: Path, *, n_ctx: int, n_parallel: int, threads: int, seed: int = 0, cache_ram_mib: int = 1024,
    verbose: bool = False, speculative: str = "none",
) -> Any:
    """llama.cpp server parameters for a GGUF: ``n_parallel`` slots of ``n_ctx`` tokens each."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    # llama.cpp divides the context among slots; give every slot the full n_ctx.
    params.n_ctx = n_ctx * n_parallel
    params.n_parallel = n_parallel
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.sampling.seed = seed
    params.cache_prompt = True
    # Host-RAM store of evicted slot prompts (llama.cpp's default is 8 GiB); keep it modest.
    params.cache_ram_mib = cache_ram_mib
    params.warmup = False
    # -1 silences llama.cpp entirely (its default of 3 logs every load and request).
    params.verbosity = 3 if verbose else -1
    _speculative(params, speculative)
    return params


class LocalLLM:
    """A llama.cpp server living in this process; ``model`` is ``default``, ``small`` or a ``.gguf`` path.

    The server queues requests onto ``n_parallel`` slots and releases the GIL, so concurrent
    ``complete`` calls from threads are safe and, with ``n_parallel > 1``, batched together.
    Each slot keeps its prompt cache between calls, so a shared prompt prefix is reused.
    """

    def __init__(
        self,
        model: str = "default",
        *,
        n_ctx: int = DEFAULT_CONTEXT,
        n_threads: int | None = None,
        n_parallel: int = 1,
        seed: int = 0,
        cache_ram_mib: int = 1024,
        verbose: bool = False,
        speculative: str = "none",
    ) -> None:
        if importlib.util.find_spec("xllamacpp") is None:
            raise ConfigError("the local LLM needs xllamacpp: pip install xllamacpp")
        if n_parallel < 1 or n_ctx < 256:
            raise ConfigError(f"LocalLLM needs n_parallel >= 1 and n_ctx >= 256 (got {n_parallel}, {n_ctx})")
        path = resolve_model_path(model)
        self.name = f"local:{model}" if model in BUNDLED_MODELS else f"local:{Path(model).stem}"
        self.max_concurrency = n_parallel
        self.context_tokens = n_ctx  # per request: prompts that carry passages are fitted to it
        self.path = path
        self._seed = seed
        threads = n_threads or os.cpu_count() or 1

        self._params = server_params(path, n_ctx=n_ctx, n_parallel=n_parallel, threads=threads, seed=seed,
                                     cache_ram_mib=cache_ram_mib, verbose=verbose, speculative=speculative)
        # llama.cpp's own timings, summed over requests: prompt and generated tokens and the
        # milliseconds spent on each; draft tokens proposed and accepted (speculative decoding).
        self.timings = dict.fromkeys(("prompt_n", "prompt_ms", "predicted_n", "predicted_ms", "draft_n",
                                      "draft_n_accepted"), 0.0)
        self._timings_lock = threading.Lock()
        self._server: Any = None  # loaded on the first request: cached replies need no model
        self._load_lock = threading.Lock()
        self.load_s: float | None = None

    def load(self) -> None:
        """Load the model now (it is otherwise loaded by the first request)."""
        import xllamacpp

        with self._load_lock:
            if self._server is not None:
                return
            t0 = time.perf_counter()
            if sys.stderr.isatty():  # a terminal hears why the first answer waits; logs stay clean
                size = self.path.stat().st_size / 1e9
                print(f"t2rag: loading {self.name} ({size:.1f} GB)…", file=sys.stderr, end="", flush=True)
            try:
                self._server = xllamacpp.Server(self._params)
            except (RuntimeError, ValueError) as e:
                raise BackendError(f"cannot load local model {self.path}: {_one_line(e)}") from None
            self.load_s = time.perf_counter() - t0
            if sys.stderr.isatty():
                print(f" loaded in {self.load_s:.1f}s", file=sys.stderr, flush=True)

    def __repr__(self) -> str:
        return f"LocalLLM({self.name!r}, n_parallel={self.max_concurrency})"

    def complete(
        self,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
    ) -> Completion:
        request: dict[str, Any] = {
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "seed": self._seed,
            "cache_prompt": True,
        }
        if schema is not None:
            # The runtime compiles the schema into a grammar: output is constrained, not just asked for.
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "out", "schema": schema},
            }
        if self._server is None:
            self.load()
        t0 = time.perf_counter()
        try:
            response = self._server.handle_chat_completions(request)
        except (RuntimeError, ValueError, TypeError) as e:
            raise BackendError(f"{self.name}: {_one_line(e)}") from None
        wall = time.perf_counter() - t0
        return self._completion(response, schema is not None, wall)

    def _completion(self, response: Any, want_json: bool, wall: float) -> Completion:
        if not isinstance(response, dict):
            raise BackendError(f"{self.name}: unexpected response type {type(response).__name__}")
        if "error" in response:
            err = response["error"]
            message = err.get("message", err) if isinstance(err, dict) else err
            if "context" in str(message).lower():  # this request is too long; the model is fine
                raise RequestRejected(f"{self.name}: {_one_line(message)}")
            raise BackendError(f"{self.name}: {_one_line(message)}")
        try:
            text = clean_text(response["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError):
            raise BackendError(f"{self.name}: response without a message: {_one_line(response, 120)}") from None
        usage = response.get("usage") or {}
        timings = response.get("timings") or {}
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
        if cached is None:
            cached = timings.get("cache_n", 0)
        with self._timings_lock:
            for key in self.timings:
                self.timings[key] += float(timings.get(key) or 0)
        parsed: Any = None
        if want_json:
            try:
                parsed = loads(text)
            except ValueError:
                parsed = None
        return Completion(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            wall_s=wall,
            parsed=parsed,
            model=self.name,
            cached_prompt_tokens=int(cached or 0),
        )
