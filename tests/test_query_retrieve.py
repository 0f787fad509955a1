"""Adaptive retrieval: the global candidate pool and the unique-chunk budget."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from t2rag.embed.hashing import HashingEmbedder
from t2rag.index.builder import TripleIndex
from t2rag.index.corpus import Document
from t2rag.index.importer import Extraction
from t2rag.query.retrieve import Retriever, pair_key, pool, select
from t2rag.types import Chunk, PropositionHit, Triple


def hit(pid: str, *chunks: str, score: float = 0.0) -> PropositionHit:
    return PropositionHit(pid, f"text of {pid}", Triple(pid, "r", "o"), tuple(chunks), score)


class FakeEmbedder:
    name, dim = "fake", 2

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        self.texts = list(texts)
        return np.zeros((len(texts), 2), dtype=np.float32)


class FakeStore:
    """search() answers per query text from a table; propositions and chunks from dicts."""

    def __init__(self, emb: FakeEmbedder, table: dict[str, list[tuple[str, float]]], props: dict[str, PropositionHit]):
        self.emb, self.table, self.props = emb, table, props
        self.fetched: list[str] = []

    def search(self, vectors: np.ndarray, top_m: int) -> list[list[tuple[str, float]]]:
        return [self.table[t][:top_m] for t in self.emb.texts]

    def get_propositions(self, ids: Iterable[str]) -> dict[str, PropositionHit]:
        ids = list(ids)
        self.fetched += ids
        return {i: self.props[i] for i in ids if i in self.props}

    def get_chunks(self, ids: Iterable[str]) -> dict[str, Chunk]:
        return {i: Chunk(i, f"title {i}", f"text {i}") for i in ids}


def test_pool_counts_a_proposition_once_at_its_best_score() -> None:
    ranked = pool([[("a", 0.9), ("b", 0.5)], [("b", 0.95), ("c", 0.4)], [("a", 0.1)]])
    assert ranked == [("b", 0.95), ("a", 0.9), ("c", 0.4)]


def test_select_fills_unique_chunk_budget() -> None:
    ranked = [hit("p1", "c1"), hit("p2", "c1"), hit("p3", "c2", "c3"), hit("p4", "c4"), hit("p5", "c5")]
    props, chunks = select(ranked, 3)
    # p2 adds no new chunk (free); p3 brings two chunks at once and fills the budget
    assert [p.id for p in props] == ["p1", "p2", "p3"]
    assert chunks == ["c1", "c2", "c3"]


def test_select_cuts_chunk_list_at_budget() -> None:
    props, chunks = select([hit("p1", "c1"), hit("p2", "c2", "c3")], 2)
    assert [p.id for p in props] == ["p1", "p2"] and chunks == ["c1", "c2"]


def test_select_with_too_few_candidates_returns_what_there_is() -> None:
    props, chunks = select([hit("p1", "c1")], 5)
    assert [p.id for p in props] == ["p1"] and chunks == ["c1"]


def fact(pid: str, s: str, p: str, o: str, *chunks: str) -> PropositionHit:
    return PropositionHit(pid, f"{s} {p} {o}", Triple(s, p, o), tuple(chunks))


def test_pair_key_ignores_order_case_punctuation_and_articles() -> None:
    assert pair_key(Triple("Ann Lee", "married", "Bo")) == pair_key(Triple("bo", "is the husband of", "Ann  Lee."))
    assert pair_key(Triple("The Harbour", "is in", "Oslo")) == pair_key(Triple("harbour", "lies in", "oslo"))
    assert pair_key(Triple("Ann", "married", "Bo")) != pair_key(Triple("Ann", "married", "Cy"))


def test_select_distinct_passes_over_a_restated_pair() -> None:
    ranked = [fact("p1", "Ann", "married", "Bo", "c1"), fact("p2", "Bo", "is the husband of", "Ann", "c2"),
              fact("p3", "Ann", "was born in", "Oslo", "c3"), fact("p4", "Ann", "wed", "Bo", "c4")]
    chosen, chunks = select(ranked, k_chunks=5, max_facts=2, distinct=True)
    assert [p.id for p in chosen] == ["p1", "p3"] and chunks == ["c1", "c3"]
    chosen, _ = select(ranked, k_chunks=5, max_facts=2)  # off by default: the restatement takes a place
    assert [p.id for p in chosen] == ["p1", "p2"]


def test_retriever_pools_all_queries_globally_in_one_embedding_call() -> None:
    emb = FakeEmbedder()
    props = {p.id: p for p in [hit("p1", "c1"), hit("p2", "c2", "c3"), hit("p3", "c4"), hit("p4", "c5")]}
    table = {"q1": [("p1", 0.5), ("p3", 0.3)], "q2": [("p2", 0.9), ("p1", 0.8), ("p4", 0.1)]}
    store = FakeStore(emb, table, props)
    ev = Retriever(store, emb).retrieve(["q1", "q2"], k_chunks=3, top_m=10)
    assert emb.calls == 1 and emb.texts == ["q1", "q2"]
    # one global ranking: p2 (0.9), p1 (0.8 -- its best, counted once) fill 3 chunks
    assert [(p.id, p.score) for p in ev.propositions] == [("p2", 0.9), ("p1", 0.8)]
    assert [c.id for c in ev.chunks] == ["c2", "c3", "c1"]
    assert ev.queries == ("q1", "q2")


def test_retriever_respects_top_m_per_query() -> None:
    emb = FakeEmbedder()
    props = {p.id: p for p in [hit("p1", "c1"), hit("p2", "c2")]}
    ev = Retriever(FakeStore(emb, {"q": [("p1", 0.9), ("p2", 0.8)]}, props), emb).retrieve(
        ["q"], k_chunks=5, top_m=1
    )
    assert [p.id for p in ev.propositions] == ["p1"]


def test_real_index_proposition_linked_to_several_chunks(tmp_path: Path) -> None:
    shared = Triple("Ada Lovelace", "wrote", "the first program")
    docs = [Document("Ada", "Ada wrote the first program."), Document("Notes", "The first program was Ada's.")]
    imported = {
        "Ada\nAda wrote the first program.": Extraction(["Ada Lovelace"], [shared]),
        "Notes\nThe first program was Ada's.": Extraction(["Ada Lovelace"], [shared]),
    }
    with TripleIndex.create(tmp_path / "idx", embedder=HashingEmbedder()) as index:
        index.add(docs, imported=imported)
        ev = Retriever(index.store, index.embedder).retrieve(
            ["Ada Lovelace wrote", "wrote the first program"], k_chunks=5, top_m=10
        )
    assert len(ev.propositions) == 1  # found by both queries, counted once
    assert len(ev.propositions[0].chunk_ids) == 2
    assert sorted(c.title for c in ev.chunks) == ["Ada", "Notes"]
