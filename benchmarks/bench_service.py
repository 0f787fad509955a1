"""Bounded load test of `t2rag serve`'s API on loopback, against calling the API in-process.

A fixed number of questions (default 2,000) at a fixed concurrency (default 32), answered by
the scripted LLM over a small index, so what is measured is the service's own overhead
(HTTP, JSON, admission control, threads), not a model. Both arms run in this process one after
the other on the same questions; the server listens on 127.0.0.1 only and the run stops by
itself. Prints errors, throughput, p50/p99 latency and the ratio of the two arms.

    .venv/bin/python benchmarks/bench_service.py --requests 2000 --concurrency 32
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import uvicorn

from t2rag.embed.hashing import HashingEmbedder
from t2rag.index.builder import TripleIndex
from t2rag.index.corpus import Document
from t2rag.index.importer import Extraction
from t2rag.llm.scripted import ScriptedLLM
from t2rag.service.app import Settings, create_app
from t2rag.service.served import Service
from t2rag.types import Triple


def build_index(directory: Path, n_docs: int = 200) -> None:
    docs, imported = [], {}
    for i in range(n_docs):
        title, text = f"Town {i}", f"Town {i} lies in Region {i % 17} and was founded in {1800 + i}."
        docs.append(Document(title, text))
        imported[f"{title}\n{text}"] = Extraction([], [Triple(title, "lies in", f"Region {i % 17}"),
                                                      Triple(title, "founded in", str(1800 + i))])
    with TripleIndex.create(directory, embedder=HashingEmbedder()) as ix:
        ix.add(docs, imported=imported)


def scripted() -> ScriptedLLM:
    return ScriptedLLM(rules=[
        ("Placeholders to fill", {"bindings": [{"placeholder": "?answer", "value": "1803", "evidence": [1]}]}),
        ("Write the answer", {"reasoning": "", "answer": "1803"}),
        ("Question:", {"triples": [["Town 3", "founded in", "?answer"]]}),
    ])


def summary(name: str, latencies: list[float], wall: float, errors: int) -> dict[str, float | str | int]:
    q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [latencies[0]] * 99
    return {"arm": name, "requests": len(latencies) + errors, "errors": errors, "wall_s": round(wall, 2),
            "throughput_rps": round(len(latencies) / wall, 1), "p50_ms": round(1000 * q[49], 2),
            "p99_ms": round(1000 * q[98], 2)}


def in_process(service: Service, questions: list[str], concurrency: int) -> dict[str, float | str | int]:
    def one(q: str) -> float:
        t0 = time.perf_counter()
        service.ask(q)
        return time.perf_counter() - t0

    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        latencies = list(pool.map(one, questions))
    return summary("in-process T2RAG.ask", latencies, time.perf_counter() - t0, 0)


async def over_http(url: str, questions: list[str], concurrency: int) -> dict[str, float | str | int]:
    latencies: list[float] = []
    errors = 0
    sem = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
        async def one(q: str) -> None:
            nonlocal errors
            async with sem:
                t0 = time.perf_counter()
                r = await client.post("/v1/ask", json={"question": q})
                if r.status_code == 200 and r.json().get("answer") == "1803":
                    latencies.append(time.perf_counter() - t0)
                else:
                    errors += 1

        t0 = time.perf_counter()
        await asyncio.gather(*(one(q) for q in questions))
    return summary("HTTP POST /v1/ask", latencies, time.perf_counter() - t0, errors)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=32)
    args = ap.parse_args()
    questions = [f"When was Town {i % 200} founded?" for i in range(args.requests)]
    with tempfile.TemporaryDirectory() as tmp:
        build_index(Path(tmp) / "ix")
        # Slots = concurrency: the scripted LLM has no decoding slots to wait for, so the
        # admission control must let every client in (no 429s in this test).
        service = Service(Path(tmp) / "ix", scripted(), slots=args.concurrency, max_waiting=args.concurrency)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(create_app(service, Settings()), host="127.0.0.1", port=port,
                                               log_level="warning", access_log=False))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.02)
        try:
            local = in_process(service, questions, args.concurrency)
            remote = asyncio.run(over_http(f"http://127.0.0.1:{port}", questions, args.concurrency))
        finally:
            server.should_exit = True
            thread.join(10)
            service.close()
    ratio = {"throughput_http_over_in_process": round(float(remote["throughput_rps"]) /
                                                      float(local["throughput_rps"]), 3),
             "p50_http_minus_in_process_ms": round(float(remote["p50_ms"]) - float(local["p50_ms"]), 2)}
    print(json.dumps({"in_process": local, "http": remote, **ratio}, indent=2))
    return 1 if remote["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
