"""Which passages the answer would read, with and without a lexical ranking in their fusion: no LLM.

T2RAG's answer reads the question's own passages: its dense ranking over whole chunks fused
(RRF) with the chunks of the facts retrieved for it (``Retriever.passages``). BM25 RAG beat
dense RAG on HotpotQA and Medical, so this replays that choice for every dev question three
ways -- dense chunks alone (dense RAG's read), today's fusion, and today's fusion with a BM25
ranking of the chunks added -- and reports the recall of the gold passages at 4 and 5 (the
answer reads 4 when the chain reached its answer hop, 5 otherwise).

    .venv/bin/python benchmarks/passage_fusion.py --dataset hotpotqa --data-dir ../shared/data \\
        --index results/indexes/hotpotqa-minilm-l6-v2-int8-local_default --limit 70
"""

from __future__ import annotations

import argparse
from statistics import mean

from t2rag.api import T2RAG
from t2rag.eval.baselines import BM25Retriever
from t2rag.eval.datasets import load_samples
from t2rag.eval.metrics import recall_at_k
from t2rag.index import TripleIndex
from t2rag.query.config import QueryConfig
from t2rag.query.engine import QUESTION_POOL
from t2rag.query.retrieve import fuse
from t2rag.types import Chunk


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--limit", type=int, default=70)
    a = ap.parse_args()
    rag = T2RAG(TripleIndex.open(a.index), llm=None)  # type: ignore[arg-type]  # retrieval only: no model
    chunks = list(rag.iter_passages())
    bm25 = BM25Retriever(chunks)
    cfg = QueryConfig()
    r = rag.retriever
    ways: dict[str, list[dict[str, float]]] = {"dense chunks": [], "today: dense + facts": [],
                                               "dense + facts + BM25": []}
    for s in load_samples(a.dataset, a.data_dir, a.limit):
        q = " ".join(s.question.split())
        ev = r.search([q], cfg.retrieve, k_chunks=max(cfg.k_chunks, QUESTION_POOL))
        dense = r.store.search_chunks(r.embedder.embed([q]), cfg.retrieve.top_m)[0]
        lexical = [(c.id, 1.0) for c in bm25.retrieve(q, cfg.retrieve.top_m)]
        facts = [(c.id, 1.0) for c in ev.chunks]
        picks = {"dense chunks": dense[:5], "today: dense + facts": fuse(dense, facts)[:5],
                 "dense + facts + BM25": fuse(dense, facts, lexical)[:5]}
        for way, ranked in picks.items():
            found: dict[str, Chunk] = r.chunks(cid for cid, _ in ranked)
            read = [(found[cid].title, found[cid].passage) for cid, _ in ranked if cid in found]
            ways[way].append(recall_at_k(s.supporting, read, ks=(4, 5)))
    print(f"{a.dataset}, first {a.limit} dev questions: recall of the gold passages among those read")
    for way, rs in ways.items():
        r4, r5 = (100 * mean(x[f"recall@{k}"] for x in rs) for k in (4, 5))
        print(f"  {way:24s} R@4 {r4:5.1f}  R@5 {r5:5.1f}")


if __name__ == "__main__":
    main()
