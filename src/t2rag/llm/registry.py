"""Spec string -> LLM backend, through an explicit table (never a substring match)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from t2rag.errors import ConfigError
from t2rag.llm.base import LLM

DEFAULT_LLM = "local"
OLLAMA_DEFAULT_HOST = "127.0.0.1:11434"
REMOTE = ("openai", "ollama")  # OpenAI-compatible servers


def _remote(parallel: int | None, context: int | None, opts: dict[str, Any]) -> dict[str, Any]:
    """A remote backend's names for the slots (concurrent requests) and the server's context."""
    return {**opts, **({"max_concurrency": parallel} if parallel else {}),
            **({"context_tokens": context} if context else {})}


def _openai(arg: str, parallel: int | None = None, context: int | None = None, **opts: Any) -> LLM:
    from t2rag.llm.openai_compat import OpenAICompatLLM

    if not arg:
        raise ConfigError("LLM spec 'openai:' needs a model name, e.g. openai:gpt-4o-mini")
    return OpenAICompatLLM(model=arg, **_remote(parallel, context, opts))


def _ollama(arg: str, parallel: int | None = None, context: int | None = None, **opts: Any) -> LLM:
    """An Ollama server through its OpenAI-compatible API: ``$OLLAMA_HOST`` or Ollama's default
    address, unless a base URL is given; no key is needed or sent."""
    from t2rag.llm.openai_compat import OpenAICompatLLM

    if not arg:
        raise ConfigError("LLM spec 'ollama:' needs a model name, e.g. ollama:qwen2.5:1.5b")
    opts.setdefault("base_url", ollama_url())
    return OpenAICompatLLM(model=arg, api_key_env="OLLAMA_API_KEY", **_remote(parallel, context, opts))


def ollama_url() -> str:
    """Ollama's OpenAI-compatible URL: from ``$OLLAMA_HOST`` (``host:port`` or a URL), or its
    default address on this machine."""
    host = os.environ.get("OLLAMA_HOST", "").strip() or OLLAMA_DEFAULT_HOST
    if "://" not in host:
        host = "http://" + host
    return host.rstrip("/") + ("" if host.rstrip("/").endswith("/v1") else "/v1")


def _local(arg: str, parallel: int | None = None, context: int | None = None, **opts: Any) -> LLM:
    from t2rag.llm.local import LocalLLM

    own: dict[str, Any] = {**({"n_parallel": parallel} if parallel else {}), **({"n_ctx": context} if context else {})}
    return LocalLLM(arg or "default", **opts, **own)


def _scripted(arg: str, parallel: int | None = None, context: int | None = None, **opts: Any) -> LLM:
    from t2rag.llm.scripted import ScriptedLLM

    return ScriptedLLM(**opts)


_REGISTRY: dict[str, Callable[..., LLM]] = {
    "openai": _openai,
    "ollama": _ollama,
    "local": _local,
    "scripted": _scripted,
}


def check_spec(spec: str) -> None:
    """Reject an unknown backend kind early, before anything slow is loaded."""
    if spec.partition(":")[0] not in _REGISTRY:
        raise ConfigError(f"unknown LLM {spec!r}; choose one of: " + ", ".join(sorted(_REGISTRY)))


def get_llm(
    spec: str = DEFAULT_LLM,
    *,
    parallel: int | None = None,
    base_url: str | None = None,
    context: int | None = None,
    cache: bool | str | Path = False,
    **opts: Any,
) -> LLM:
    """Build an LLM from ``kind[:arg]`` (local[:default|small|PATH.gguf], openai:MODEL,
    ollama:MODEL, scripted): the one place the CLI, the API and the benchmark get their models.

    ``parallel``: decoding slots (local) or concurrent requests (openai). ``base_url``: an
    OpenAI-compatible endpoint. ``context``: the context window in tokens (local: the size the
    model loads with; openai: the server's, so prompts carrying passages can be fitted to it).
    ``cache``: True keeps replies in the default response cache, a path in another file (the
    scripted test double is never cached)."""
    check_spec(spec)
    kind, _, arg = spec.partition(":")
    if base_url:
        if kind not in REMOTE:
            raise ConfigError("a base URL only applies to openai:MODEL and ollama:MODEL")
        opts["base_url"] = base_url
    if parallel is not None and parallel < 1:
        raise ConfigError(f"parallel must be at least 1 (got {parallel})")
    if context is not None and context < 256:
        raise ConfigError(f"the context must be at least 256 tokens (got {context})")
    llm = _REGISTRY[kind](arg, parallel=parallel, context=context, **opts)
    return with_cache(llm, cache if kind != "scripted" else False)


def with_cache(llm: LLM, cache: bool | str | Path) -> LLM:
    """``llm`` behind the persistent response cache (True: the default file; a path: that
    file); never wrapped twice."""
    from t2rag.llm.cache import CachedLLM
    from t2rag.paths import default_llm_cache

    if not cache or isinstance(llm, CachedLLM):
        return llm
    return CachedLLM(llm, default_llm_cache() if cache is True else Path(cache))
