"""Adaptive retrieval: rank propositions per query (dense, or dense + BM25 fused), pool the
queries' candidates, then fill a unique-chunk budget."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from t2rag.embed.base import Embedder
from t2rag.query.config import RetrieveConfig
from t2rag.types import Chunk, Location, PropositionHit, Triple, near_text

_FETCH_BATCH = 32  # candidate propositions looked up at a time while filling the budget
RRF_K = 60  # reciprocal rank fusion constant (Cormack et al. 2009): flattens the top ranks


class PropositionStore(Protocol):
    """The part of an index store retrieval needs (any backend that offers it will do)."""

    def search(self, vectors: np.ndarray, top_m: int) -> list[list[tuple[str, float]]]: ...

    def search_lexical(self, queries: list[str], top_m: int) -> list[list[tuple[str, float]]]: ...

    def get_propositions(self, ids: Iterable[str]) -> dict[str, PropositionHit]: ...

    def get_chunks(self, ids: Iterable[str]) -> dict[str, Chunk]: ...

    def search_chunks(self, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]: ...

    def chunk_locations(self, ids: Iterable[str]) -> dict[str, Location]: ...


@dataclass(frozen=True)
class Evidence:
    """One round's retrieval: the queries, the chosen propositions (best first, with their
    pooled scores) and their source chunks (unique, at most the budget, first-seen order)."""

    queries: tuple[str, ...] = ()
    propositions: tuple[PropositionHit, ...] = ()
    chunks: tuple[Chunk, ...] = ()


def pool(results: Sequence[Sequence[tuple[str, float]]]) -> list[tuple[str, float]]:
    """Merge per-query candidate lists into one ranking; a proposition counts once, at its best."""
    best: dict[str, float] = {}
    for hits in results:
        for pid, score in hits:
            if pid not in best or score > best[pid]:
                best[pid] = score
    return sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))


def fuse(*rankings: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """Reciprocal rank fusion of one query's rankings: sum of 1 / (RRF_K + rank), best first."""
    score: dict[str, float] = {}
    for ranking in rankings:
        for rank, (pid, _) in enumerate(ranking, 1):
            score[pid] = score.get(pid, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))


def pair_key(triple: Triple) -> frozenset[str]:
    """The two entities a fact joins, in either order, up to case, punctuation and articles:
    "Ann married Bo", "Bo is the husband of Ann" and "ann wed bo." share one key."""
    return frozenset(near_text(x) for x in (triple.subject, triple.object))


def select(
    ranked: Iterable[PropositionHit], k_chunks: int, max_facts: int | None = None, *, distinct: bool = False,
) -> tuple[list[PropositionHit], list[str]]:
    """Take propositions from the top until their source chunks cover ``k_chunks`` unique chunks
    (or ``max_facts`` propositions are taken); with ``distinct``, a proposition joining the same
    two entities as one already taken is passed over (another phrasing of a fact shown).

    A proposition linked to several chunks brings all of them, but the chunk list is cut at
    the budget (the budget bounds what the resolver reads). Returns (propositions, chunk ids)."""
    chosen: list[PropositionHit] = []
    chunks: dict[str, None] = {}
    pairs: set[frozenset[str]] = set()
    for hit in ranked:
        if len(chunks) >= k_chunks or (max_facts is not None and len(chosen) >= max_facts):
            break
        if distinct:
            if (key := pair_key(hit.triple)) in pairs:
                continue
            pairs.add(key)
        chosen.append(hit)
        chunks.update(dict.fromkeys(hit.chunk_ids))
    return chosen, list(chunks)[:k_chunks]


class Retriever:
    """Embeds query propositions and retrieves evidence from a store. The lock makes one
    retriever safe to share between threads (the LLM calls, not retrieval, run in parallel)."""

    def __init__(self, store: PropositionStore, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self._lock = threading.Lock()

    def retrieve(
        self, queries: Sequence[str], *, k_chunks: int, top_m: int, hybrid: bool = False,
        max_facts: int | None = None, distinct: bool = False,
    ) -> Evidence:
        """Evidence for ``queries``: with ``hybrid``, each query's dense and BM25 rankings are
        fused (RRF) before pooling, so scores are fusion scores rather than cosines."""
        if not queries:
            return Evidence()
        with self._lock:
            dense = self.store.search(self.embedder.embed(list(queries)), top_m)
            if hybrid:
                lexical = self.store.search_lexical(list(queries), top_m)
                dense = [fuse(d, lx) for d, lx in zip(dense, lexical)]
            ranked = pool(dense)
            chosen, chunk_ids = select(self._hits(ranked), k_chunks, max_facts, distinct=distinct)
            chunks = self.store.get_chunks(chunk_ids)
        return Evidence(
            queries=tuple(queries),
            propositions=tuple(chosen),
            chunks=tuple(chunks[c] for c in chunk_ids if c in chunks),
        )

    def search(self, queries: Sequence[str], config: RetrieveConfig, *, k_chunks: int,
               max_facts: int | None = None) -> Evidence:
        """``retrieve`` under a query's retrieve settings."""
        return self.retrieve(queries, k_chunks=k_chunks, top_m=config.top_m, hybrid=config.hybrid,
                             max_facts=max_facts, distinct=config.distinct)

    def passages(self, question: str, evidence: Evidence, k: int, top_m: int) -> tuple[Chunk, ...]:
        """The ``k`` passages to read for ``question``: its dense ranking over whole chunks fused
        (RRF) with the chunks of ``evidence`` (the facts retrieved for it), so the reader never
        sees worse passages than chunk RAG's. Without chunk vectors, ``evidence``'s chunks."""
        with self._lock:
            dense = self.store.search_chunks(self.embedder.embed([question]), top_m)[0]
            ranked = fuse(dense, [(c.id, 1.0) for c in evidence.chunks])[:k] if dense else []
            found = self.store.get_chunks(cid for cid, _ in ranked)
        if not ranked:
            return evidence.chunks[:k]
        return tuple(found[cid] for cid, _ in ranked if cid in found)

    def embed(self, texts: list[str]) -> np.ndarray:
        """The embedder's vectors for ``texts``, under the retriever's lock."""
        with self._lock:
            return self.embedder.embed(texts)

    def chunks(self, ids: Iterable[str]) -> dict[str, Chunk]:
        with self._lock:
            return self.store.get_chunks(ids)

    def locations(self, ids: Iterable[str]) -> dict[str, Location]:
        """Where each chunk sits in its document (source, pages), for citing it."""
        with self._lock:
            return self.store.chunk_locations(ids)

    def _hits(self, ranked: list[tuple[str, float]]) -> Iterable[PropositionHit]:
        """Look candidates up lazily, in pool order, carrying their pooled score."""
        for i in range(0, len(ranked), _FETCH_BATCH):
            part = ranked[i : i + _FETCH_BATCH]
            found = self.store.get_propositions(pid for pid, _ in part)
            for pid, score in part:
                if pid in found:
                    yield replace(found[pid], score=score)
