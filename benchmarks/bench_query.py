"""Per-query cost of T2RAG from a benchmark run: LLM calls and tokens per stage, wall time,
and the non-LLM share of wall time (goal: <= 2%), plus prompt tokens served from the local
runtime's prompt cache.

It reads the predictions that ``t2rag bench`` wrote, so the figures are those of real
questions answered once (not replayed from the response cache):

    t2rag bench --dataset musique --data-dir ../shared/data --methods t2rag --llm local:small \\
        --openie-from ../shared/data/musique_openie_gpt-3.5-turbo-1106.json --limit 20 --out results/musique-local-small
    .venv/bin/python benchmarks/bench_query.py results/musique-local-small/predictions/t2rag.jsonl --limit 20
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from _common import median, save

STAGES = ("decompose", "resolve", "answer")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("predictions", type=Path)
    ap.add_argument("--limit", type=int, default=20)
    args = ap.parse_args()
    rows = [json.loads(line) for line in args.predictions.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("timing") and not r.get("error")][: args.limit]
    if not rows:
        raise SystemExit(f"{args.predictions}: no T2RAG predictions with timing")
    hits = sum(r["usage"]["total"]["cache_hits"] for r in rows)
    per_stage = {}
    for st in STAGES:
        u = [r["usage"].get(st, {}) for r in rows]
        per_stage[st] = {
            "calls_per_query": round(sum(x.get("calls", 0) for x in u) / len(rows), 2),
            "prompt_tokens_per_query": round(sum(x.get("prompt_tokens", 0) for x in u) / len(rows), 1),
            "completion_tokens_per_query": round(sum(x.get("completion_tokens", 0) for x in u) / len(rows), 1),
            "cached_prompt_tokens_per_query": round(sum(x.get("cached_prompt_tokens", 0) for x in u) / len(rows), 1),
        }
    total = [r["timing"]["total_s"] for r in rows]
    other = [r["timing"]["other_s"] for r in rows]
    shares = [o / t for o, t in zip(other, total, strict=True) if t > 0]
    tot = [r["usage"]["total"] for r in rows]
    result = {
        "command": f"benchmarks/bench_query.py {args.predictions} --limit {args.limit}",
        "queries": len(rows),
        "response_cache_hits": hits,
        "llm_calls_per_query": round(sum(t["calls"] for t in tot) / len(rows), 2),
        "prompt_tokens_per_query": round(sum(t["prompt_tokens"] for t in tot) / len(rows), 1),
        "completion_tokens_per_query": round(sum(t["completion_tokens"] for t in tot) / len(rows), 1),
        "cached_prompt_tokens_per_query": round(sum(t.get("cached_prompt_tokens", 0) for t in tot) / len(rows), 1),
        "wall_s_median": round(median(total), 2),
        "non_llm_s_median": round(median(other), 4),
        "non_llm_share_median": round(median(shares), 4),
        "non_llm_share_overall": round(sum(other) / sum(total), 4),
        "stages": per_stage,
    }
    print(json.dumps(result, indent=2))
    print("saved", save("query", result))


if __name__ == "__main__":
    main()
