"""Classify a benchmark run's wrong answers from its committed predictions: decomposition,
retrieval miss, partial answer, or wrong reading.

Needs only the run's predictions and the dataset's corpus (no LLM, no index, no cache): a
chunk id is ``chunk-`` + md5 of the passage, so the passages a question retrieved are looked up
in the corpus. The rules, applied in order to each question answered wrongly (EM 0):

* decomposition -- T2RAG's plan was rejected by its checks or fell back to the question, or it
  has fewer query triples than the question has hops (MuSiQue ids say: 2hop, 3hop, 4hop;
  HotpotQA and 2WikiMultihopQA questions count as 2 hops); such a question is answered by
  reading the question's own passages, as dense RAG would;
* retrieval miss -- no gold answer (or alias) occurs in any passage the method retrieved;
* partial answer -- the answer overlaps a gold answer (F1 > 0) but is not it: wording, extra
  words, a date's form;
* wrong reading -- a gold answer was in the passages retrieved, and the answer shares no word
  with it: a wrong bridge value, or the reader picked another entity.

    .venv/bin/python benchmarks/failures.py results/musique-local --data-dir ../shared/data
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from t2rag.eval.metrics import normalize_answer
from t2rag.types import Chunk

TWO_HOP_SETS = {"hotpotqa": 2, "2wikimultihopqa": 2}
CLASSES = ("decomposition", "retrieval miss", "partial answer", "wrong reading")


def contains(text: str, golds: list[str]) -> bool:
    t = f" {normalize_answer(text)} "
    return any(g and f" {g} " in t for g in (normalize_answer(x) for x in golds))


def hops_of(row: dict, dataset: str) -> int | None:
    m = re.match(r"(\d)hop", str(row["id"]))
    return int(m.group(1)) if m else TWO_HOP_SETS.get(dataset)


def classify(row: dict, passages: list[str], hops: int | None) -> str:
    d = row.get("decomposition")
    if d and (d.get("fallback") or d.get("problems") or (hops and len(d.get("triples", [])) < hops)):
        return "decomposition"
    if not any(contains(p, row["gold"]) for p in passages):
        return "retrieval miss"
    return "partial answer" if row.get("f1", 0) > 0 else "wrong reading"


def corpus_passages(data_dir: Path, dataset: str) -> dict[str, str]:
    """Chunk id -> passage text for every passage of the corpus (passages are indexed whole)."""
    corpus = json.loads((data_dir / f"{dataset}_corpus.json").read_text("utf-8"))
    chunks = (Chunk.make(d["title"], d["text"]) for d in corpus)
    return {c.id: c.passage for c in chunks}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="a t2rag bench run directory")
    ap.add_argument("--data-dir", type=Path, required=True, help="folder with DATASET_corpus.json")
    ap.add_argument("--method", default="t2rag")
    ap.add_argument("--limit", type=int, default=0, help="only the run's first N questions (0: all)")
    args = ap.parse_args()
    dataset = json.loads((args.run / "run.json").read_text("utf-8"))["dataset"]
    path = args.run / "predictions" / f"{args.method}.jsonl"
    rows = [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]
    rows = rows[: args.limit] if args.limit else rows
    texts = corpus_passages(args.data_dir, dataset)
    cases = []
    for r in (r for r in rows if not r["em"]):
        passages = [texts[i] for i in r.get("retrieved_ids", []) if i in texts]
        kind = classify(r, passages, hops_of(r, dataset))
        cases.append({"id": r["id"], "class": kind, "answer": r["answer"], "gold": r["gold"][0],
                      "termination": r.get("termination")})
        print(f"{kind:15} {r['gold'][0][:30]:30} got {r['answer'][:40]!r}")
    counts = Counter(c["class"] for c in cases)
    print(f"{len(cases)} wrong of {len(rows)}:", ", ".join(f"{k} {counts[k]}" for k in CLASSES))
    out = args.run / f"failures-{args.method}.json"
    out.write_text(json.dumps({"questions": len(rows), "counts": {k: counts[k] for k in CLASSES},
                               "cases": cases}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
