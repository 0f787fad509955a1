"""The benchmark harness: datasets, metrics, baselines, runner and report (calls the public API only)."""

from __future__ import annotations

from typing import Any

# Kept here, import-light, so the CLI can list methods without loading the index stack.
T2RAG_CONFIGS: dict[str, dict[str, Any]] = {
    "t2rag": {},
    "t2rag_single": {"rounds": 1},
    "t2rag_nolookback": {"lookback": False},
    "t2rag_question": {"question_query": True},  # not in the paper: see QueryConfig.question_query
}
METHODS: tuple[str, ...] = ("nor", "bm25", "standard", "ircot", *T2RAG_CONFIGS)

__all__ = ["METHODS", "T2RAG_CONFIGS"]
