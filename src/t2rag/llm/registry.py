"""Spec string -> LLM backend, through an explicit table (never a substring match)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from t2rag.errors import ConfigError
from t2rag.llm.base import LLM

DEFAULT_LLM = "local"


def _openai(arg: str, **opts: Any) -> LLM:
    from t2rag.llm.openai_compat import OpenAICompatLLM

    if not arg:
        raise ConfigError("LLM spec 'openai:' needs a model name, e.g. openai:gpt-4o-mini")
    return OpenAICompatLLM(model=arg, **opts)


def _local(arg: str, **opts: Any) -> LLM:
    from t2rag.llm.local import LocalLLM

    return LocalLLM(arg or "default", **opts)


def _scripted(arg: str, **opts: Any) -> LLM:
    from t2rag.llm.scripted import ScriptedLLM

    return ScriptedLLM(**opts)


_REGISTRY: dict[str, Callable[..., LLM]] = {
    "openai": _openai,
    "local": _local,
    "scripted": _scripted,
}


def check_spec(spec: str) -> None:
    """Reject an unknown backend kind early, before anything slow is loaded."""
    if spec.partition(":")[0] not in _REGISTRY:
        raise ConfigError(f"unknown LLM {spec!r}; choose one of: " + ", ".join(sorted(_REGISTRY)))


def get_llm(spec: str = DEFAULT_LLM, **opts: Any) -> LLM:
    """Build an LLM from ``kind[:arg]``: local[:default|small|PATH.gguf], openai:MODEL, scripted."""
    check_spec(spec)
    kind, _, arg = spec.partition(":")
    return _REGISTRY[kind](arg, **opts)
