"""One table like the paper's: every system on every dataset, from the benchmark run directories.

    .venv/bin/python benchmarks/paper_table.py results/musique-local results/hotpotqa-local results/medical-local

For the first ``--first`` dev questions of each run's dataset (the same questions for every
system), prints EM / F1 per dataset and their average, R@5 where a system reports what it read,
tokens per question the model evaluated (prompt tokens served from llama.cpp's prompt cache left
out, as the peers' server-side counts leave them out) and the median seconds per question, and
each system's indexing cost (``RUN_DIR/index.json`` for our index, which every one of our
methods shares, ``RUN_DIR/peers/PEER-build.json`` for a peer's own). A question a system failed
on counts as wrong; a system with fewer than the asked questions is shown with its count.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from t2rag.eval.datasets import load_samples

SYSTEMS = {  # prediction file -> the paper's name for the system
    "nor": "NOR (no retrieval)", "bm25": "BM25 RAG", "standard": "standard RAG (dense)", "ircot": "IRCoT",
    "hipporag2": "HippoRAG2", "raptor": "RAPTOR", "t2rag_authors": "T2RAG, the authors' code", "t2rag": "T2RAG (ours)",
}
PEERS = ("hipporag2", "raptor", "t2rag_authors")


def rows_of(run: Path, method: str, ids: list[str]) -> list[dict[str, Any]]:
    path = run / "predictions" / f"{method}.jsonl"
    if not path.exists():
        return []
    by_id = {r["id"]: r for r in map(json.loads, path.read_text("utf-8").splitlines()) if r}
    return [by_id[i] for i in ids if i in by_id]


def tokens(row: dict[str, Any]) -> float:
    t = row.get("usage", {}).get("total", {})
    return t.get("prompt_tokens", 0) - t.get("cached_prompt_tokens", 0) + t.get("completion_tokens", 0)


def cell(run: Path, method: str, ids: list[str]) -> dict[str, Any] | None:
    rows = rows_of(run, method, ids)
    if not rows:
        return None
    recall = [r["recall"]["recall@5"] for r in rows if r.get("recall")]
    return {"n": len(rows), "em": 100 * statistics.mean(r["em"] for r in rows),
            "f1": 100 * statistics.mean(r["f1"] for r in rows),
            "r5": 100 * statistics.mean(recall) if recall else None,
            "tokens": statistics.mean(tokens(r) for r in rows),
            "seconds": statistics.median(r.get("seconds") or 0.0 for r in rows),
            "failed": sum(bool(r.get("error")) for r in rows)}


def index_cost(run: Path, method: str) -> str:
    if method in PEERS:
        path = run / "peers" / f"{method}-build.json"
        if not path.exists():
            return "–"
        b = json.loads(path.read_text("utf-8"))
        tok = b.get("prompt_tokens", 0) + b.get("completion_tokens", 0)
        unrecorded = b.get("summaries_without_cost", 0)  # made by an earlier, killed build that kept no cost
        return (f"{b['seconds']:,.0f} s" + (f", {tok:,} tok" if tok else "")
                + (f" (cost of {unrecorded} of its {b['calls']} summaries not recorded)" if unrecorded else ""))
    if method == "nor":
        return "none"
    builds = json.loads((run / "index.json").read_text("utf-8"))
    first = builds[0]  # the build; later records are resumed no-ops
    tok = sum(v for k, v in first["usage"]["total"].items() if k in ("prompt_tokens", "completion_tokens"))
    return f"{first['seconds']:,.0f} s (shared)" + (f", {tok:,} tok" if tok else "")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--first", type=int, default=30)
    a = p.parse_args()
    names, cells, costs = [], {}, {}
    for run in a.runs:
        meta = json.loads((run / "run.json").read_text("utf-8"))
        name = meta["dataset"]
        ids = [s.id for s in load_samples(name, meta["data_dir"], a.first)]
        names.append(name)
        for m in SYSTEMS:
            cells[m, name] = cell(run, m, ids)
            costs[m, name] = index_cost(run, m)

    def score(c: dict[str, Any] | None) -> str:
        if c is None:
            return "not run"
        short = f" (n {c['n']})" if c["n"] < a.first else ""
        return f"{c['em']:.1f} / {c['f1']:.1f}{short}"

    print(f"EM / F1, first {a.first} dev questions of each set\n")
    print("| system | " + " | ".join(names) + " | average |")
    print("|---|" + "---|" * (len(names) + 1))
    for m, label in SYSTEMS.items():
        row = [cells[m, n] for n in names]
        full = [c for c in row if c is not None and c["n"] == a.first]
        avg = (f"{statistics.mean(c['em'] for c in full):.1f} / {statistics.mean(c['f1'] for c in full):.1f}"
               if len(full) == len(names) else "–")
        print(f"| {label} | " + " | ".join(score(c) for c in row) + f" | {avg} |")
    print("\nR@5, tokens per question evaluated, median seconds per question, indexing cost\n")
    print("| system | " + " | ".join(f"{n}: R@5 · tok/q · s/q · index" for n in names) + " |")
    print("|---|" + "---|" * len(names))
    for m, label in SYSTEMS.items():
        parts = []
        for n in names:
            c = cells[m, n]
            if c is None:
                parts.append("not run")
                continue
            r5 = f"{c['r5']:.1f}" if c["r5"] is not None else "–"
            fail = f", {c['failed']} failed" if c["failed"] else ""
            parts.append(f"{r5} · {c['tokens']:,.0f} · {c['seconds']:.0f} · {costs[m, n]}{fail}")
        print(f"| {label} | " + " | ".join(parts) + " |")


if __name__ == "__main__":
    main()
