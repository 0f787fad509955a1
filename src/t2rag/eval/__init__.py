"""The benchmark harness: datasets, metrics, baselines, runner and report (calls the public API only)."""

from __future__ import annotations

from typing import Any

from t2rag.query.config import ABLATIONS

# Kept import-light, so the CLI can list methods without loading the index stack. T2RAG with its
# defaults, and each named variant of the library's (``t2rag.query.config.ABLATIONS``).
T2RAG_CONFIGS: dict[str, dict[str, Any]] = {"t2rag": {}, **{f"t2rag_{name}": cfg for name, cfg in ABLATIONS.items()}}
METHODS: tuple[str, ...] = ("nor", "bm25", "standard", "ircot", *T2RAG_CONFIGS)

__all__ = ["METHODS", "T2RAG_CONFIGS"]
