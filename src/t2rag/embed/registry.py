"""Spec string -> embedder, through an explicit table (never a substring match)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from t2rag.embed.base import Embedder
from t2rag.errors import ConfigError

DEFAULT_EMBEDDER = "minilm"


def _hashing(arg: str, **_: Any) -> Embedder:
    from t2rag.embed.hashing import HashingEmbedder

    return HashingEmbedder(int(arg) if arg else 256)


def _minilm(arg: str, **opts: Any) -> Embedder:
    from t2rag.embed.minilm import MiniLMEmbedder

    return MiniLMEmbedder(**opts)


def _openai(arg: str, **opts: Any) -> Embedder:
    from t2rag.embed.openai_compat import OpenAICompatEmbedder

    if not arg:
        raise ConfigError("embedder spec 'openai:' needs a model name, e.g. openai:text-embedding-3-small")
    model, at, host = arg.partition("@")
    if at and not (opts.get("base_url") or os.environ.get("OPENAI_BASE_URL")):
        # An index built against a private server records it as MODEL@HOST. Without that
        # server's URL, never fall back to the public endpoint: texts would leave the machine.
        raise ConfigError(f"this index's embedder {model!r} ran at {host}: give its URL with --base-url "
                          "or OPENAI_BASE_URL (texts are not sent to the default public endpoint)")
    return OpenAICompatEmbedder(model=model, **opts)


def _st(arg: str, **opts: Any) -> Embedder:
    from t2rag.embed.st import SentenceTransformerEmbedder

    if not arg:
        raise ConfigError("embedder spec 'st:' needs a model path or name")
    return SentenceTransformerEmbedder(arg, **opts)


_REGISTRY: dict[str, Callable[..., Embedder]] = {
    "hashing": _hashing,
    "minilm": _minilm,
    "openai": _openai,
    "st": _st,
}


# An index manifest records the embedder's exact name; names that differ from their spec map back.
_NAMES = {"minilm-l6-v2-int8": "minilm"}


def get_embedder(spec: str = DEFAULT_EMBEDDER, **opts: Any) -> Embedder:
    """Build an embedder from ``kind[:arg]``: minilm, hashing[:DIM], openai:MODEL, st:PATH
    (or from the exact name an index manifest recorded)."""
    spec = _NAMES.get(spec, spec)
    kind, _, arg = spec.partition(":")
    try:
        factory = _REGISTRY[kind]
    except KeyError:
        raise ConfigError(
            f"unknown embedder {spec!r}; choose one of: " + ", ".join(sorted(_REGISTRY))
        ) from None
    return factory(arg, **opts)
