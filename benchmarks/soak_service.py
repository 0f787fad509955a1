"""Soak test of `t2rag serve` on loopback: document jobs interleaved with questions and fact
searches while another process rewrites the index, checking that nothing leaks or goes stale.

The server runs in this process (scripted LLM, hashing embedder) and listens on 127.0.0.1
only; a writer subprocess deletes and re-adds documents through the library, as the CLI does;
everything is bounded in count and stops by itself. Checked:

* open files and resident memory stay flat (sampled through the run: the last quarter's
  maximum against the first quarter's);
* no response is a 5xx, no job fails;
* every fact a search returns is consistent with the index it was read from: a fact
  "TownN mentions PersonN" is credited to the document TownN (a stale vector pointing at a
  reused id would credit another document's fact).

    .venv/bin/python benchmarks/soak_service.py --jobs 1000 --asks 10000
Prints a JSON summary; exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

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

WRITER = textwrap.dedent("""
    import sys, time
    from t2rag.errors import IndexLockedError
    from t2rag.index.builder import TripleIndex
    from t2rag.index.corpus import Document
    from t2rag.index.importer import Extraction
    from t2rag.types import Triple
    index, rounds = sys.argv[1], int(sys.argv[2])
    for r in range(rounds):
        names = [f"Writer{r % 7}x{i}" for i in range(3)]
        docs = [Document(n, f"{n} mentions Person{n}.") for n in names]
        imported = {f"{d.title}\\n{d.text}": Extraction([], [Triple(d.title, "mentions", f"Person{d.title}")])
                    for d in docs}
        while True:  # one writer at a time: wait while the server's job writes
            try:
                with TripleIndex.create(index) as ix:
                    ix.delete([f"Writer{(r - 1) % 7}x{i}" for i in range(3)])
                    ix.add(docs, imported=imported)
                break
            except IndexLockedError:
                time.sleep(0.05)
        time.sleep(0.05)
""")


def town(i: int) -> tuple[Document, Extraction]:
    d = Document(f"Town{i}", f"Town{i} mentions Person{i}.")
    return d, Extraction([], [Triple(d.title, "mentions", f"Person{i}")])


def _job_triple(messages: list[dict[str, str]]) -> str:
    """The scripted extraction of a job's document 'JobN mentions PersonN.'"""
    found = re.findall(r"(Job\d+) mentions (Person\d+)", messages[-1]["content"])
    return json.dumps({"triples": [[found[-1][0], "mentions", found[-1][1]]] if found else []})


def scripted() -> ScriptedLLM:
    return ScriptedLLM(rules=[
        ("Placeholders to fill", {"bindings": []}),
        (r"Write the answer|Notes from the search|Passages:", {"reasoning": "", "answer": "Town1"}),
        ("Question:", {"steps": [], "answer": ["Town1", "mentions", "?answer"]}),
        ("(?i)entities", {"entities": ["Town"]}),
        ("(?i)triples", _job_triple),
    ])


def sample() -> dict[str, float]:
    with open("/proc/self/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
    return {"fds": len(os.listdir("/proc/self/fd")), "rss_mib": rss / 1024}


def consistent(facts: list[dict[str, Any]]) -> bool:
    """Every fact 'X mentions ...' is credited to the document X."""
    return all(f["text"].split(" mentions ")[0] in {s["title"] for s in f["sources"]} for f in facts)


def run(jobs: int, asks: int, concurrency: int) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="t2rag-soak-"))
    seed = [town(i) for i in range(50)]
    with TripleIndex.create(tmp / "ix", embedder=HashingEmbedder()) as ix:
        ix.add([d for d, _ in seed], imported={f"{d.title}\n{d.text}": x for d, x in seed})
    service = Service(tmp / "ix", scripted(), max_jobs=1_000_000)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(service, Settings()), host="127.0.0.1", port=port,
                                           log_level="error"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    url = f"http://127.0.0.1:{port}"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp / "ix"), str(max(10, jobs // 5))])
    stats = {"5xx": 0, "failed_jobs": 0, "inconsistent": 0, "asks": 0, "searches": 0, "jobs": 0}
    samples: list[dict[str, float]] = []
    examples: list[Any] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        with httpx.Client(base_url=url, timeout=60) as c:
            if i % 10 == 0:
                r = c.get("/v1/search", params={"q": f"Town{i % 50} mentions Person{i % 50}", "k": 10})
                facts = r.json().get("facts", []) if r.status_code < 500 else []
                ok = consistent(facts)
                with lock:
                    stats["searches"] += 1
                    stats["inconsistent"] += not ok
                    if not ok and len(examples) < 3:
                        examples.append([f for f in facts if not consistent([f])][:2])
            else:
                r = c.post("/v1/ask", json={"question": f"What does Town{i % 50} mention?"})
                with lock:
                    stats["asks"] += 1
            with lock:
                stats["5xx"] += r.status_code >= 500

    t0 = time.perf_counter()
    per_job = max(1, asks // max(1, jobs))
    with httpx.Client(base_url=url, timeout=60) as c, ThreadPoolExecutor(concurrency) as pool:
        pending: list[str] = []
        for j in range(jobs):
            doc = {"title": f"Job{j}", "text": f"Job{j} mentions Person{j}."}
            pending.append(c.post("/v1/documents", json={"documents": [doc]}).json()["id"])
            list(pool.map(one, range(j * per_job, (j + 1) * per_job)))
            if j % max(1, jobs // 20) == 0:
                samples.append(sample())
        for job_id in pending:
            while (status := c.get(f"/v1/jobs/{job_id}").json())["status"] not in ("done", "failed"):
                time.sleep(0.05)
            stats["jobs"] += 1
            stats["failed_jobs"] += status["status"] == "failed"
    samples.append(sample())
    writer.wait(600)
    server.should_exit = True
    service.close()
    quarter = max(1, len(samples) // 4)
    first, last = samples[:quarter], samples[-quarter:]
    growth = {k: max(s[k] for s in last) - max(s[k] for s in first) for k in ("fds", "rss_mib")}
    return {**stats, "inconsistent_examples": examples, "seconds": round(time.perf_counter() - t0, 1),
            "writer_exit": writer.returncode,
            "fds_first": max(s["fds"] for s in first), "fds_last": max(s["fds"] for s in last),
            "rss_mib_first": round(max(s["rss_mib"] for s in first)),
            "rss_mib_last": round(max(s["rss_mib"] for s in last)),
            "growth": growth}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=1000)
    p.add_argument("--asks", type=int, default=10_000, help="questions and fact searches (one in ten)")
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--max-fd-growth", type=int, default=8)
    p.add_argument("--max-rss-growth-mib", type=float, default=64.0)
    args = p.parse_args()
    out = run(args.jobs, args.asks, args.concurrency)
    ok = (out["5xx"] == 0 and out["failed_jobs"] == 0 and out["inconsistent"] == 0 and out["writer_exit"] == 0
          and out["growth"]["fds"] <= args.max_fd_growth and out["growth"]["rss_mib"] <= args.max_rss_growth_mib)
    print(json.dumps({**out, "ok": ok}, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
