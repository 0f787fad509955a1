"""Local-model OpenIE: throughput and output against gpt-3.5's extraction of the same chunks.

For each model and mode, extracts triples from the first N MuSiQue chunks (no cache) and
reports chunks per minute, prompt/completion tokens per chunk, triples per chunk, failures,
and entity coverage: the share of gpt-3.5's extracted entities that appear as a subject or
object in our triples (a rough quality proxy: more is better, 1.0 = all of them).

    .venv/bin/python benchmarks/bench_openie.py --models small,default --modes two_pass,single --chunks 20
"""

from __future__ import annotations

import argparse
import time

from _common import DATA, save

from t2rag.config import OpenIEConfig
from t2rag.index import load_corpus, load_openie
from t2rag.index.openie import extract
from t2rag.llm import get_llm
from t2rag.types import Chunk, Usage


def coverage(ours: list[list[str]], entities: list[str]) -> float:
    if not entities:
        return 1.0
    ends = " | ".join(x.lower() for t in ours for x in (t[0], t[2]))
    return sum(e.lower() in ends for e in entities) / len(entities)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="small,default")
    ap.add_argument("--modes", default="two_pass,single")
    ap.add_argument("--chunks", type=int, default=20)
    args = ap.parse_args()
    docs = load_corpus(DATA / "musique_corpus.json")[: args.chunks]
    gold = load_openie(DATA / "musique_openie_gpt-3.5-turbo-1106.json")
    chunks = [Chunk.make(d.title, d.text) for d in docs]
    gpt_triples = sum(len(gold[c.passage].triples) for c in chunks) / len(chunks)
    rows = []
    for model in args.models.split(","):
        llm = get_llm(f"local:{model}")
        for mode in args.modes.split(","):
            usage = Usage()
            t0 = time.perf_counter()
            recs = [extract(llm, c, OpenIEConfig(mode=mode), usage) for c in chunks]
            wall = time.perf_counter() - t0
            tot = usage.total()
            cov = [coverage([t.as_list() for t in r.triples], gold[c.passage].entities) for r, c in zip(recs, chunks)]
            row = {
                "model": llm.name, "mode": mode, "chunks": len(chunks),
                "chunks_per_min": round(60 * len(chunks) / wall, 2),
                "prompt_tokens_per_chunk": round(tot.prompt_tokens / len(chunks), 1),
                "completion_tokens_per_chunk": round(tot.completion_tokens / len(chunks), 1),
                "triples_per_chunk": round(sum(len(r.triples) for r in recs) / len(chunks), 2),
                "gpt35_triples_per_chunk": round(gpt_triples, 2),
                "failures": sum(r.error is not None for r in recs),
                "entity_coverage_vs_gpt35": round(sum(cov) / len(cov), 3),
            }
            print(row, flush=True)
            rows.append(row)
        del llm
    print("saved", save("openie", {"command": "benchmarks/bench_openie.py " + " ".join(
        f"--{k} {v}" for k, v in vars(args).items()), "rows": rows}))


if __name__ == "__main__":
    main()
