"""Proposition search latency and recall: exact vs approximate FAISS indexes.

At the MuSiQue dev index size (real propositions, default embedder) and at N synthetic
propositions (a Gaussian mixture on the unit sphere, 384-d, one cluster
per 100 points, within-cluster cosine about 0.7, so neighbours are structured as in real
embeddings rather than uniformly random). Queries are searched one at a time, as the
engine does; median and p99 over 1,000 queries; recall@50 of each approximate index against
exact search.

    .venv/bin/python benchmarks/bench_search.py --synthetic 1000000
"""

from __future__ import annotations

import argparse
import time

import faiss
import numpy as np
from _common import DATA, median, percentile, save, timed

from t2rag.config import StoreConfig
from t2rag.embed import get_embedder
from t2rag.index import load_corpus, load_openie
from t2rag.index.vectors import build_index
from t2rag.types import Proposition

K = 50
BUILD_THREADS = faiss.omp_get_max_threads()
QUERY_THREADS = 1


def musique_vectors(n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    docs = load_corpus(DATA / "musique_corpus.json")
    imported = load_openie(DATA / "musique_openie_gpt-3.5-turbo-1106.json")
    texts = list({Proposition.from_triple(t).id: Proposition.from_triple(t).text
                  for d in docs for t in imported[f"{d.title}\n{d.text}"].triples}.values())
    emb = get_embedder("minilm")
    vecs = emb.embed(texts)
    import json

    questions = [q["question"] for q in json.loads((DATA / "musique.json").read_text())]
    queries = emb.embed((questions * (n_queries // len(questions) + 1))[:n_queries])
    return vecs, queries


def synthetic_vectors(n: int, n_queries: int, dim: int = 384, per_cluster: int = 100) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    clusters = max(1, n // per_cluster)
    centers = rng.standard_normal((clusters, dim), dtype=np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)

    def sample(m: int) -> np.ndarray:
        out = np.empty((m, dim), dtype=np.float32)
        for s in range(0, m, 100_000):
            e = min(m, s + 100_000)
            x = centers[rng.integers(0, clusters, e - s)] + 0.035 * rng.standard_normal((e - s, dim), dtype=np.float32)
            out[s:e] = x / np.linalg.norm(x, axis=1, keepdims=True)
        return out

    return sample(n), sample(n_queries)


def measure(name: str, cfg: StoreConfig, vecs: np.ndarray, queries: np.ndarray,
            exact_ids: np.ndarray | None) -> dict[str, object]:
    faiss.omp_set_num_threads(BUILD_THREADS)  # building may use every core; queries are timed on QUERY_THREADS
    build_s, index = timed(lambda: build_index(cfg, vecs.shape[1], np.arange(len(vecs), dtype=np.int64), vecs))
    if exact_ids is None:  # the exact index: ground truth in one batched call, latency on 100 queries
        _, truth = index.search(queries, K)
    faiss.omp_set_num_threads(QUERY_THREADS)
    if cfg.index_type == "hnsw":
        faiss.downcast_index(index.index).hnsw.efSearch = cfg.hnsw_ef_search
    elif cfg.index_type == "ivf":
        index.nprobe = cfg.ivf_nprobe
    lat: list[float] = []
    found = np.empty((len(queries), K), dtype=np.int64)
    timed_queries = len(queries) if exact_ids is not None else min(100, len(queries))
    for i in range(timed_queries):
        t0 = time.perf_counter()
        _, ids = index.search(queries[i : i + 1], K)
        lat.append((time.perf_counter() - t0) * 1000)
        found[i] = ids[0]
    if exact_ids is None:
        found = truth
    out: dict[str, object] = {"index": name, "build_s": round(build_s, 2), "timed_queries": timed_queries,
                              "median_ms": round(median(lat), 3), "p99_ms": round(percentile(lat, 99), 3)}
    if exact_ids is not None:
        rec = [len(set(found[i]) & set(exact_ids[i])) / K for i in range(len(queries))]
        out["recall_at_50"] = round(float(np.mean(rec)), 4)
    print(out, flush=True)
    return out | {"_ids": found}


def run(label: str, vecs: np.ndarray, queries: np.ndarray, configs: dict[str, StoreConfig]) -> list[dict[str, object]]:
    print(f"== {label}: {len(vecs)} vectors, {len(queries)} queries", flush=True)
    exact = measure("flat (exact)", StoreConfig(index_type="flat"), vecs, queries, None)
    rows = [exact]
    for name, cfg in configs.items():
        rows.append(measure(name, cfg, vecs, queries, exact["_ids"]))  # type: ignore[arg-type]
    return [{k: v for k, v in r.items() if k != "_ids"} | {"n": len(vecs)} for r in rows]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--synthetic", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--skip-musique", action="store_true")
    ap.add_argument("--synthetic-types", default="hnsw,ivf", help="approximate indexes to try at the synthetic size")
    ap.add_argument("--threads", type=int, default=1, help="FAISS threads per query (1: latency, not throughput)")
    args = ap.parse_args()
    global QUERY_THREADS
    QUERY_THREADS = args.threads
    configs = {
        "hnsw M=32 efSearch=128": StoreConfig(index_type="hnsw", hnsw_m=32, hnsw_ef_search=128),
        "ivf nprobe=32": StoreConfig(index_type="ivf", ivf_nprobe=32),
    }
    rows: list[dict[str, object]] = []
    if not args.skip_musique:
        rows += run("musique", *musique_vectors(args.queries), configs)
    if args.synthetic:
        wanted = {k: v for k, v in configs.items() if v.index_type in args.synthetic_types.split(",")}
        rows += run("synthetic", *synthetic_vectors(args.synthetic, args.queries), wanted)
    result = {"command": "benchmarks/bench_search.py " + " ".join(f"--{k.replace('_', '-')} {v}"
                                                                  for k, v in vars(args).items()),
              "faiss_threads": faiss.omp_get_max_threads(), "rows": rows}
    print("saved", save("search", result))


if __name__ == "__main__":
    main()
