"""Embedding backends behind one protocol, chosen by a spec string."""

from __future__ import annotations

from t2rag.embed.base import Embedder, normalize_rows
from t2rag.embed.registry import DEFAULT_EMBEDDER, get_embedder

__all__ = ["DEFAULT_EMBEDDER", "Embedder", "get_embedder", "normalize_rows"]
