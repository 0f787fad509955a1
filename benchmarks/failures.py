"""Classify T2RAG's wrong answers in a benchmark run: decomposition, retrieval miss,
resolution, or synthesis.

Each failed question is asked again through the same response cache (so no new LLM work and
the same replies), which gives the full trace. The rules, applied in order:

* decomposition -- the question fell back to itself, or the decomposition has fewer query
  triples than the question has hops (MuSiQue ids say: 2hop, 3hop, 4hop; HotpotQA and
  2WikiMultihopQA questions count as 2 hops);
* retrieval miss -- no gold answer (or alias) occurs in any retrieved proposition or chunk;
* resolution -- the gold answer was retrieved but is in no binding the model made;
* synthesis -- a binding held the gold answer but the final answer is wrong.

    .venv/bin/python benchmarks/failures.py results/musique-local-small --limit 20
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from t2rag.api import T2RAG
from t2rag.eval import T2RAG_CONFIGS
from t2rag.eval.metrics import normalize_answer
from t2rag.llm import get_llm

TWO_HOP_SETS = {"hotpotqa": 2, "2wikimultihopqa": 2}


def contains(text: str, golds: list[str]) -> bool:
    t = f" {normalize_answer(text)} "
    return any(g and f" {g} " in t for g in (normalize_answer(x) for x in golds))


def classify(answer: dict, golds: list[str], hops: int | None) -> str:
    d = answer["decomposition"]
    if d["fallback"] or (hops and len(d["triples"]) < hops):
        return "decomposition"
    evidence = [p["text"] for r in answer["rounds"] for p in r["propositions"]]
    chunks = [c for r in answer["rounds"] for c in r["chunk_texts"]]
    if not any(contains(x, golds) for x in evidence + chunks):
        return "retrieval miss"
    if not any(contains(b["value"], golds) for r in answer["rounds"] for b in r["bindings"]):
        return "resolution"
    return "synthesis"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("run", type=Path)
    ap.add_argument("--method", default="t2rag", choices=sorted(T2RAG_CONFIGS))
    ap.add_argument("--limit", type=int, default=20)
    args = ap.parse_args()
    info = json.loads((args.run / "run.json").read_text())
    rows = [json.loads(x) for x in (args.run / "predictions" / f"{args.method}.jsonl").read_text().splitlines()]
    failed = [r for r in rows if not r["em"]][: args.limit]
    index = next(args.run.parent.glob(f"indexes/{info['dataset']}-*"))
    llm = get_llm(info["llm"], cache=True)
    config = T2RAG_CONFIGS[args.method]
    out = []
    with T2RAG.open(index, llm=llm) as rag:
        for r in failed:
            a = rag.ask(r["question"], config).to_dict()
            for rd in a["rounds"]:
                found = rag.index.store.get_chunks([c["id"] for c in rd["chunks"]])
                rd["chunk_texts"] = [found[c["id"]].passage for c in rd["chunks"] if c["id"] in found]
            m = re.match(r"(\d)hop", str(r["id"]))
            hops = int(m.group(1)) if m else TWO_HOP_SETS.get(info["dataset"])
            kind = classify(a, r["gold"], hops)
            hits = a["usage"]["total"]["cache_hits"]
            out.append({"id": r["id"], "class": kind, "answer": a["answer"], "gold": r["gold"][0],
                        "decomposition": a["decomposition"]["triples"], "replayed_from_cache": hits})
            print(f"{kind:15} {r['gold'][0][:30]:30} got {a['answer'][:30]!r}", flush=True)
    counts = Counter(o["class"] for o in out)
    print(dict(counts))
    (args.run / f"failures-{args.method}.json").write_text(json.dumps({"counts": counts, "cases": out}, indent=2))


if __name__ == "__main__":
    main()
