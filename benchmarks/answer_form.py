"""Would a rule about an answer's form turn wrong answers right? Three rules, measured on the committed runs, no LLM.

Issue 25 asks for a reading the 1.5B model gets right. Some wrong answers look like slips of
form rather than of reading: a name mis-copied from the passage ("Hodkin lymphoma"), an
abbreviation where the passage spells the name out ("SCC"), a phrase of the question given
back as its answer. Each rule below would be applied after the answer call, so the committed
predictions tell exactly what it would change, for every method, before any code is written:

* ``snap``  -- an answer that is not in the passages read is replaced by the passage span of
  about its length most like it (character similarity at least ``--similarity``).
* ``acronym`` -- an answer that is an abbreviation (2+ capitals, one word): how many are right
  as they are (spelling them out would lose these), how many golds spell out the abbreviation
  (at most these could be won).
* ``echo`` -- an open question's answer that is a phrase of the question itself: how many such
  answers are right (a rule that rejected them would lose these).

"Passages read" is the method's first five retrieved passages (dense RAG reads exactly these;
T2RAG's answer reads four, taken in turn from them and each hop's).

    .venv/bin/python benchmarks/answer_form.py --dataset medical \\
        --index results/indexes/medical-minilm-l6-v2-int8-local_default --run results/medical-local
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
from pathlib import Path
from typing import Any

from t2rag.eval.metrics import best_em, normalize_answer
from t2rag.index import TripleIndex
from t2rag.query.plan_rules import question_shape

ABBREVIATION = re.compile(r"^[A-Z][A-Za-z0-9/-]{1,9}$")


def nearest_span(answer: str, text: str) -> tuple[float, str]:
    """The run of ``text``'s words, one word shorter to one longer than ``answer``, most like it."""
    words, n = text.split(), len(answer.split())
    best = (0.0, "")
    for size in (n - 1, n, n + 1):
        for i in range(max(0, len(words) - size + 1) if size > 0 else 0):
            span = " ".join(words[i : i + size])
            score = difflib.SequenceMatcher(None, answer, span).ratio()
            if score > best[0]:
                best = (score, span)
    return best


def is_abbreviation(answer: str) -> bool:
    a = answer.strip()
    return bool(ABBREVIATION.match(a)) and sum(c.isupper() for c in a) >= 2


def spells_out(abbreviation: str, gold: str) -> bool:
    """Whether ``gold``'s words (split at spaces and hyphens, a part in brackets left out) begin
    with the abbreviation's letters in turn: "Whole-brain radiation therapy" spells out WBRT."""
    words = re.split(r"[\s-]+", re.sub(r"\(.*?\)", " ", gold).strip())
    letters = [c.lower() for c in abbreviation if c.isalpha()]
    return len(words) == len(letters) and all(w[:1].lower() == c for w, c in zip(words, letters))


def measure(rows: list[dict[str, Any]], passages: dict[str, str], similarity: float) -> dict[str, Any]:
    snap = {"not in passages": 0, "snapped": 0, "wrong to right": 0, "right to wrong": 0}
    acronym = {"answers": 0, "right": 0, "gold spells it out": 0}
    echo = {"answers": 0, "right": 0}
    for r in rows:
        answer = normalize_answer(r["answer"])
        if not answer or answer in ("yes", "no"):
            continue
        text = normalize_answer(" ".join(passages.get(i, "") for i in r["retrieved_ids"][:5]))
        if f" {answer} " not in f" {text} ":
            snap["not in passages"] += 1
            score, span = nearest_span(answer, text)
            if score >= similarity:
                snap["snapped"] += 1
                after = best_em(span, r["gold"])
                snap["wrong to right"] += after > r["em"]
                snap["right to wrong"] += after < r["em"]
        if is_abbreviation(r["answer"]):
            acronym["answers"] += 1
            acronym["right"] += int(r["em"])
            acronym["gold spells it out"] += any(spells_out(r["answer"], g) for g in r["gold"])
        if question_shape(r["question"]) == "open" and f" {answer} " in f" {normalize_answer(r['question'])} ":
            echo["answers"] += 1
            echo["right"] += int(r["em"])
    return {"questions": len(rows), "snap": snap, "acronym": acronym, "echo": echo}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--run", required=True, help="a bench run directory (its predictions/*.jsonl)")
    ap.add_argument("--methods", default="t2rag,standard")
    ap.add_argument("--similarity", type=float, default=0.8)
    args = ap.parse_args()
    ix = TripleIndex.open(args.index)
    try:
        for method in args.methods.split(","):
            rows = [json.loads(line) for line in open(Path(args.run) / "predictions" / f"{method}.jsonl")]
            ids = {i for r in rows for i in r["retrieved_ids"][:5]}
            passages = {i: c.passage for i, c in ix.store.get_chunks(ids).items()}
            print(json.dumps({"dataset": args.dataset, "method": method,
                              **measure(rows, passages, args.similarity)}))
    finally:
        ix.close()


if __name__ == "__main__":
    main()
