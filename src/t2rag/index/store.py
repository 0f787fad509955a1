"""What every index store provides, and how a location (directory or database URL) picks one.

Nothing outside a store implementation runs SQL or touches a vector index: the builder, the
retriever, the API and the benchmark go through this protocol. Two implementations:
``SqliteStore`` (a directory: SQLite + FAISS, one writer) and ``PgStore`` (PostgreSQL +
pgvector, shared by many processes and machines).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Protocol

import numpy as np

from t2rag.config import StoreConfig
from t2rag.errors import IndexNotFoundError
from t2rag.index.manifest import Manifest
from t2rag.index.pg_store import PgStore, is_url
from t2rag.index.sqlite_store import SqliteStore
from t2rag.redact import redact
from t2rag.types import Chunk, Location, OpenIERecord, PropositionHit

__all__ = ["Store", "open_store", "is_url", "PgStore", "SqliteStore"]


class Store(Protocol):
    location: str  # a directory, or a database URL with any password removed
    writer: bool

    def close(self) -> None: ...
    def save_manifest(self, manifest: Manifest) -> None: ...
    def generation(self) -> int: ...

    # documents and chunks
    def add_document(self, doc: str, chunks: list[Chunk], locations: list[Location] | None = None) -> int: ...
    def chunk_locations(self, ids: Iterable[str]) -> dict[str, Location]: ...
    def chunks_without_openie(self) -> list[Chunk]: ...
    def get_chunks(self, ids: Iterable[str]) -> dict[str, Chunk]: ...
    def iter_chunks(self) -> Iterator[Chunk]: ...
    def documents(self) -> list[str]: ...
    def doc_chunk_ids(self, docs: list[str]) -> dict[str, set[str]]: ...
    def document_chunks(self) -> list[tuple[str, list[Chunk]]]: ...
    def delete_documents(self, docs: list[str]) -> dict[str, int]: ...

    # extractions, propositions and their vectors
    def record_openie(self, rec: OpenIERecord) -> None: ...
    def claim(self, chunk_ids: list[str], owner: str, ttl_s: float) -> set[str]: ...
    def release_dead(self, host: str) -> int: ...
    def openie_records(self, failed_only: bool = False, limit: int | None = None) -> list[OpenIERecord]: ...
    def forget_failures(self, *, everything: bool, only_unextracted: bool) -> None: ...
    def propositions_without_vectors(self) -> list[tuple[int, str]]: ...
    def set_vectors(self, rowids: list[int], vectors: np.ndarray) -> None: ...
    def save_vectors(self) -> None: ...
    def get_propositions(self, ids: Iterable[str]) -> dict[str, PropositionHit]: ...
    def search(self, vectors: np.ndarray, top_m: int) -> list[list[tuple[str, float]]]: ...
    def search_lexical(self, queries: list[str], top_m: int) -> list[list[tuple[str, float]]]: ...

    # whole-chunk vectors
    def chunks_without_vectors(self) -> list[Chunk]: ...
    def set_chunk_vectors(self, ids: list[str], vectors: np.ndarray) -> None: ...
    def search_chunks(self, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]: ...

    def counts(self) -> dict[str, int]: ...


def open_store(location: str | Path, dim: int, cfg: StoreConfig, *, writer: bool = False) -> Store:
    """The store at ``location``: a ``postgresql://`` URL or an index directory."""
    if is_url(location):
        return PgStore(str(location), dim, cfg, writer=writer)
    return SqliteStore(Path(location), dim, cfg, writer=writer)


def read_manifest(location: str | Path) -> Manifest | None:
    """The manifest of the index at ``location``, or None when none was made there yet."""
    if is_url(location):
        return PgStore.read_manifest(str(location))
    from t2rag.index.manifest import MANIFEST

    return Manifest.load(Path(location)) if (Path(location) / MANIFEST).exists() else None


def require_manifest(location: str | Path) -> Manifest:
    """The manifest at ``location``, or IndexNotFoundError with one line saying what to do."""
    manifest = read_manifest(location)
    if manifest is None:
        where = redact(str(location)) if is_url(location) else str(location)
        raise IndexNotFoundError(f"no T2RAG index at {where}; build one with 't2rag index'")
    return manifest
