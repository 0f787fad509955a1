"""Where T2RAG keeps what it builds for itself: the LLM response cache and assembled models."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """``$T2RAG_CACHE_DIR`` or ``~/.cache/t2rag``."""
    env = os.environ.get("T2RAG_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "t2rag"


def default_llm_cache() -> Path:
    return default_cache_dir() / "llm-cache.sqlite"
