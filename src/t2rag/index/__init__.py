"""The offline half: corpus -> chunks -> OpenIE triples -> propositions -> vector index."""

from __future__ import annotations

from t2rag.index.builder import BuildProgress, TripleIndex
from t2rag.index.corpus import Document, load_corpus
from t2rag.index.importer import Extraction, load_openie

__all__ = ["BuildProgress", "Document", "Extraction", "TripleIndex", "load_corpus", "load_openie"]
