"""Store backends side by side, in one run: FAISS (flat, HNSW) as the directory store keeps it,
and PostgreSQL + pgvector (HNSW) through ``PgStore``'s own write and search paths.

For the MuSiQue propositions (real MiniLM vectors) and N synthetic vectors (the clustered
generator of ``bench_search.py``): build rate (vectors/s; for PostgreSQL, rows written in
batches with the HNSW index in place, as a build does), search latency one query at a time
(median, p99) and recall@50 against exact search; then PostgreSQL read throughput with 1 and
4 processes searching the same index. The server is a private ``pgserver`` in a temp
directory (or ``--url``). Results go to ``results/speed/stores.json``.

    .venv/bin/python benchmarks/bench_stores.py --synthetic 200000 --queries 200
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import tempfile
import time
from typing import Any

import numpy as np
from _common import median, percentile, save, timed
from bench_search import musique_vectors, synthetic_vectors

from t2rag.config import StoreConfig
from t2rag.index.pg_store import HNSW_EF_CONSTRUCTION, HNSW_M, PgStore
from t2rag.index.vectors import build_index

K = 50
BATCH = 1000


def faiss_arm(name: str, cfg: StoreConfig, vecs: np.ndarray, queries: np.ndarray) -> tuple[dict[str, Any], np.ndarray]:
    import faiss

    faiss.omp_set_num_threads(2)
    build_s, index = timed(lambda: build_index(cfg, vecs.shape[1], np.arange(len(vecs), dtype=np.int64), vecs))
    faiss.omp_set_num_threads(1)
    if cfg.index_type == "hnsw":
        faiss.downcast_index(index.index).hnsw.efSearch = max(cfg.hnsw_ef_search, K)
    lat, found = [], np.empty((len(queries), K), dtype=np.int64)
    for i in range(len(queries)):
        t0 = time.perf_counter()
        _, ids = index.search(queries[i: i + 1], K)
        lat.append((time.perf_counter() - t0) * 1000)
        found[i] = ids[0]
    return _row(name, len(vecs), build_s, lat), found


def _row(name: str, n: int, build_s: float, lat: list[float]) -> dict[str, Any]:
    return {"store": name, "n": n, "build_s": round(build_s, 2), "build_rate_per_s": round(n / max(build_s, 1e-9)),
            "median_ms": round(median(lat), 3), "p99_ms": round(percentile(lat, 99), 3)}


def pg_load(url: str, vecs: np.ndarray) -> tuple[float, PgStore]:
    """Write ``vecs`` as propositions through the store's own paths; returns (seconds, store)."""
    store = PgStore(url, vecs.shape[1], StoreConfig(), writer=True)
    store.db.execute("TRUNCATE propositions RESTART IDENTITY")
    t0 = time.perf_counter()
    with store.transaction() as db, db.cursor() as cur:
        cur.executemany("INSERT INTO propositions(id, text, subject, predicate, object) VALUES (%s, '', '', '', '')",
                        [(str(i),) for i in range(len(vecs))])
    for s in range(0, len(vecs), BATCH):
        store.set_vectors(list(range(s + 1, min(len(vecs), s + BATCH) + 1)), vecs[s: s + BATCH])
    return time.perf_counter() - t0, store


def pg_arm(url: str, vecs: np.ndarray, queries: np.ndarray) -> tuple[dict[str, Any], np.ndarray]:
    build_s, store = pg_load(url, vecs)
    lat, found = [], np.full((len(queries), K), -1, dtype=np.int64)
    for i in range(len(queries)):
        t0 = time.perf_counter()
        hits = store.search(queries[i: i + 1], K)[0]
        lat.append((time.perf_counter() - t0) * 1000)
        found[i, : len(hits)] = [int(pid) for pid, _ in hits]
    store.close()
    return _row(f"postgresql pgvector hnsw m={HNSW_M} ef_construction={HNSW_EF_CONSTRUCTION} ef_search=128",
                len(vecs), build_s, lat), found


def _reader(url: str, dim: int, queries: np.ndarray, seconds: float, out: Any) -> None:
    store = PgStore(url, dim, StoreConfig())
    n, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        store.search(queries[n % len(queries): n % len(queries) + 1], K)
        n += 1
    out.put(n)


def throughput(url: str, dim: int, queries: np.ndarray, procs: int, seconds: float) -> float:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    ps = [ctx.Process(target=_reader, args=(url, dim, queries, seconds, q)) for _ in range(procs)]
    for p in ps:
        p.start()
    total = sum(q.get() for _ in ps)
    for p in ps:
        p.join()
    return total / seconds


def run(label: str, url: str, vecs: np.ndarray, queries: np.ndarray, seconds: float) -> list[dict[str, Any]]:
    print(f"== {label}: {len(vecs)} vectors, {len(queries)} queries", flush=True)
    vecs = np.ascontiguousarray(vecs, dtype=np.float32)
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    exact_row, exact = faiss_arm("faiss flat (exact)", StoreConfig(index_type="flat"), vecs, queries)
    rows = [exact_row | {"recall_at_50": 1.0}]
    hnsw_row, hnsw = faiss_arm("faiss hnsw M=32 efSearch=128", StoreConfig(index_type="hnsw"), vecs, queries)
    pg_row, pg = pg_arm(url, vecs, queries)
    for row, ids in ((hnsw_row, hnsw), (pg_row, pg)):
        rec = [len(set(ids[i]) & set(exact[i])) / K for i in range(len(queries))]
        rows.append(row | {"recall_at_50": round(float(np.mean(rec)), 4)})
    pg_row = rows[-1]
    pg_row["median_ratio_to_faiss_hnsw"] = round(pg_row["median_ms"] / max(rows[1]["median_ms"], 1e-9), 2)
    for procs in (1, 4):
        pg_row[f"qps_{procs}_proc"] = round(throughput(url, vecs.shape[1], queries, procs, seconds), 1)
    for r in rows:
        r["dataset"] = label
        print(r, flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--synthetic", type=int, default=200_000, help="synthetic vectors (0: skip)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=10.0, help="length of each throughput arm")
    ap.add_argument("--skip-musique", action="store_true")
    ap.add_argument("--url", help="a PostgreSQL database to use (default: a private pgserver)")
    args = ap.parse_args()
    server = None
    if args.url is None:
        import pgserver

        server = pgserver.get_server(tempfile.mkdtemp(prefix="t2rag-bench-pg-"), cleanup_mode="delete")
    rows: list[dict[str, Any]] = []
    try:
        for label, make in (("musique", None if args.skip_musique else lambda: musique_vectors(args.queries)),
                            ("synthetic", (lambda: synthetic_vectors(args.synthetic, args.queries))
                             if args.synthetic else None)):
            if make is None:
                continue
            url = args.url
            if server is not None:
                server.psql(f"DROP DATABASE IF EXISTS bench_{label}; CREATE DATABASE bench_{label};")
                url = server.get_uri(f"bench_{label}")
            rows += run(label, url, *make(), args.seconds)
    finally:
        if server is not None:
            server.cleanup()
    command = "benchmarks/bench_stores.py " + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()
                                                       if k != "url")
    print("saved", save("stores", {"command": command, "rows": rows}))


if __name__ == "__main__":
    main()
