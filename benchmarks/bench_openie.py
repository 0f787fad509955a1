"""Local-model OpenIE: throughput and output against gpt-3.5's extraction of the same chunks.

For each model and mode, extracts triples from the first N passages of a dataset's corpus
(no cache; ``--parallel`` decoding slots, that many chunks in flight) and reports chunks per
minute, prompt/completion tokens per chunk, triples per chunk, failures, and -- for MuSiQue,
which has gpt-3.5's extraction -- entity coverage: the share of gpt-3.5's extracted entities
that appear as a subject or object in our triples (a rough quality proxy: 1.0 = all of them).

    .venv/bin/python benchmarks/bench_openie.py --models small,default --modes two_pass,single --chunks 20
    .venv/bin/python benchmarks/bench_openie.py --dataset hotpotqa --models small --modes two_pass --parallel 2
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor
from itertools import repeat

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
    ap.add_argument("--dataset", default="musique", help="corpus DATA/NAME_corpus.json (musique, hotpotqa, ...)")
    ap.add_argument("--parallel", type=int, default=1, help="decoding slots, and chunks in flight")
    args = ap.parse_args()
    docs = load_corpus(DATA / f"{args.dataset}_corpus.json")[: args.chunks]
    gold_path = DATA / f"{args.dataset}_openie_gpt-3.5-turbo-1106.json"
    gold = load_openie(gold_path) if gold_path.exists() else {}
    chunks = [Chunk.make(d.title, d.text) for d in docs]
    gpt_triples = sum(len(gold[c.passage].triples) for c in chunks) / len(chunks) if gold else None
    rows = []
    for model in args.models.split(","):
        llm = get_llm(f"local:{model}", n_parallel=args.parallel)
        for mode in args.modes.split(","):
            usage = Usage()
            t0 = time.perf_counter()
            with ThreadPoolExecutor(args.parallel) as pool:
                recs = list(pool.map(extract, repeat(llm), chunks, repeat(OpenIEConfig(mode=mode)), repeat(usage)))
            wall = time.perf_counter() - t0
            tot = usage.total()
            cov = [coverage([t.as_list() for t in r.triples], gold[c.passage].entities)
                   for r, c in zip(recs, chunks) if gold]
            row = {
                "dataset": args.dataset, "parallel": args.parallel, "model": llm.name, "mode": mode,
                "chunks": len(chunks),
                "chunks_per_min": round(60 * len(chunks) / wall, 2),
                "prompt_tokens_per_chunk": round(tot.prompt_tokens / len(chunks), 1),
                "completion_tokens_per_chunk": round(tot.completion_tokens / len(chunks), 1),
                "triples_per_chunk": round(sum(len(r.triples) for r in recs) / len(chunks), 2),
                "gpt35_triples_per_chunk": round(gpt_triples, 2) if gpt_triples is not None else None,
                "failures": sum(r.error is not None for r in recs),
                "entity_coverage_vs_gpt35": round(sum(cov) / len(cov), 3) if cov else None,
            }
            print(row, flush=True)
            rows.append(row)
        del llm
    name = "openie" if args.dataset == "musique" else f"openie-{args.dataset}"
    print("saved", save(name, {"command": "benchmarks/bench_openie.py " + " ".join(
        f"--{k} {v}" for k, v in vars(args).items()), "rows": rows}))


if __name__ == "__main__":
    main()
