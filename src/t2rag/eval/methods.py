"""The benchmark's method table: the index they share, and each method built by name.

``t2rag`` and its ablations go through the public API (``T2RAG.ask``, ``T2RAG.passages``)
like any user, one engine over the shared index; the chunk baselines read the same index's
passages and passage vectors through it (``T2RAG.search_passages``, ``T2RAG.iter_passages``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from t2rag.api import T2RAG, QueryConfig, prompt_versions
from t2rag.embed.base import Embedder
from t2rag.eval import METHODS, T2RAG_CONFIGS
from t2rag.eval.baselines import BM25Retriever, ChunkRAG, DenseRetriever, IRCoT, Method, NoRetrieval, Prediction
from t2rag.index.builder import TripleIndex
from t2rag.index.corpus import Document
from t2rag.llm.base import LLM
from t2rag.progress import BuildBar
from t2rag.types import Usage

__all__ = ["METHODS", "T2RAG_CONFIGS", "T2RAGMethod", "build_index", "make_methods", "method_settings"]

K_READ = QueryConfig().k_chunks  # the paper's k = 5 chunks, for the baselines too
IRCOT_ROUNDS = 3


class T2RAGMethod:
    """T2RAG through its public API; retrieved chunks are the rounds' chunks, in order."""

    def __init__(self, name: str, engine: T2RAG, config: QueryConfig) -> None:
        self.name = name
        self.engine = engine
        self.config = config

    def predict(self, question: str) -> Prediction:
        a = self.engine.ask(question, config=self.config)
        # Ranked as the method used them: what the answer read, each round's, the question's own.
        ids = list(dict.fromkeys([c.id for c in a.answer_chunks] + [c.id for r in a.rounds for c in r.chunks]
                                 + [c for p in a.grounding for c in p.chunk_ids]))
        extra = {
            "termination": a.termination,
            "answer_path": a.answer_path,
            "decomposition": asdict(a.decomposition),
            "rounds": len(a.rounds),
            # each round's mode and how many placeholders it bound, e.g. ["triples:1", "read:0"]
            "round_log": [f"{r.mode}:{len(r.bindings)}" for r in a.rounds],
            "resolved": [f.triple for f in a.resolved],
            "unresolved": a.unresolved,
            "timing": asdict(a.timing),  # the engine's own LLM / non-LLM split
        }
        if a.answer_check:
            extra["answer_check"] = a.answer_check
        if a.errors:
            extra["pipeline_errors"] = a.errors
        return Prediction(a.answer, self.engine.passages(ids), Usage.from_dict(a.usage), extra)


def build_index(
    directory: Path,
    docs: list[Document],
    methods: list[str],
    *,
    llm: LLM,
    embedder: Embedder,
    openie_from: str | Path | None,
    progress: bool = True,
    usage: Usage | None = None,
) -> dict[str, Any]:
    """Build or reuse the index the methods need; returns its cost (LLM usage, seconds).

    OpenIE runs only when a T2RAG method is asked for; chunk vectors are always embedded.
    ``usage`` (when given) accumulates the LLM usage as it happens, so an interrupted build's
    cost is known too."""
    from t2rag.index.importer import load_openie

    t0 = time.perf_counter()
    needs_triples = any(m in T2RAG_CONFIGS for m in methods)
    # Always load an OpenIE file when given: it decides how passages are chunked, so the index
    # is the same whichever methods ran first.
    imported = load_openie(openie_from) if openie_from else None
    usage = usage if usage is not None else Usage()
    with BuildBar(disable=not progress) as bar, TripleIndex.create(directory, embedder=embedder) as ix:
        report = ix.add(docs, llm=llm if needs_triples else None, imported=imported, usage=usage, progress=bar)
        chunk_vectors = report["chunks_embedded"]
        counts = ix.store.counts()
    return {
        "seconds": round(time.perf_counter() - t0, 3),
        "new_chunks": report["new_chunks"],
        "extracted": report["extracted"],
        "failed": report["failed"],
        "chunk_vectors_embedded": chunk_vectors,
        "counts": counts,
        "usage": usage.to_dict(),
    }


def method_settings(name: str) -> dict[str, Any]:
    """What decides a method's answers besides the model and the index: its settings and the
    versions of the prompts it sends (recorded in the run, so a predictions file explains itself)."""
    from t2rag.prompts import prompt_hashes

    if name in T2RAG_CONFIGS:
        return {"config": QueryConfig.from_dict(T2RAG_CONFIGS[name]).to_dict(), "prompts": prompt_versions()}
    config: dict[str, Any] = {"nor": {}, "ircot": {"k": K_READ, "rounds": IRCOT_ROUNDS}}.get(name, {"k_read": K_READ})
    return {"config": config, "prompts": prompt_hashes(["read", "ircot_step"] if name == "ircot" else ["read"])}


@contextmanager
def make_methods(
    names: list[str], *, llm: LLM, embedder: Embedder, index_dir: Path | None
) -> Iterator[list[Method]]:
    """Build each named method (in order) over the shared index; closes what it opened."""
    with ExitStack() as stack:
        ix = stack.enter_context(TripleIndex.open(index_dir, embedder=embedder)) if index_dir else None
        # One engine over the open index serves every method that reads it.
        engine = T2RAG(ix, llm) if ix is not None else None
        yield [_make(name, llm, engine) for name in names]


def _make(name: str, llm: LLM, engine: T2RAG | None) -> Method:
    if name == "nor":
        return NoRetrieval(llm)
    assert engine is not None, "these methods need an index"
    if name == "bm25":
        return ChunkRAG("bm25", BM25Retriever(list(engine.iter_passages())), llm, k_read=K_READ)
    if name == "standard":
        return ChunkRAG("standard", DenseRetriever(engine), llm, k_read=K_READ)
    if name == "ircot":
        return IRCoT(DenseRetriever(engine), llm, k=K_READ, rounds=IRCOT_ROUNDS)
    return T2RAGMethod(name, engine, QueryConfig.from_dict(T2RAG_CONFIGS[name]))
