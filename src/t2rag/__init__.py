"""T2RAG: multi-hop question answering over a private corpus with triplet-driven thinking."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from t2rag.version import VERSION as __version__

if TYPE_CHECKING:
    from t2rag.api import T2RAG
    from t2rag.config import IndexConfig
    from t2rag.errors import T2RAGError
    from t2rag.index.builder import TripleIndex
    from t2rag.query.config import QueryConfig
    from t2rag.result import Answer

__all__ = ["T2RAG", "Answer", "IndexConfig", "QueryConfig", "T2RAGError", "TripleIndex", "__version__"]

_LAZY = {
    "T2RAG": "t2rag.api",
    "Answer": "t2rag.result",
    "IndexConfig": "t2rag.config",
    "QueryConfig": "t2rag.query.config",
    "T2RAGError": "t2rag.errors",
    "TripleIndex": "t2rag.index.builder",
}


def __getattr__(name: str) -> Any:
    # Imported on first use, so `t2rag --help` does not load FAISS or ONNX Runtime.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 't2rag' has no attribute {name!r}")
