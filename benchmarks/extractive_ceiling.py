"""Could a hop's value be chosen from its facts instead of read from passages? The ceiling, no LLM.

Issue 25's lever 2 proposes an extractive last hop: candidate values taken from the top facts
that match the answer triple, the model choosing among them. Before spending the model on it,
this replays the committed runs' retrieval (from the committed, already-bound triples, so no
model is needed) and asks how often the right value is there to choose:

* answer hop -- for each chain that reached it (``last_hop``): is a gold answer among the
  candidates (``candidates`` below: a fact one of whose ends names the hop's known entity
  offers its other end), or at either end of any fact the hop retrieved (the loosest ceiling)?
  Against how many of these chains the free reading answered right.
* bridge (MuSiQue only, whose questions carry their gold intermediate answers) -- for each
  plan whose first round searched a bridge triple: is the gold first-hop answer among that
  round's candidates, and did the committed chain bind it (a resolved value naming it)?

    .venv/bin/python benchmarks/extractive_ceiling.py --dataset musique --data-dir ../shared/data \\
        --index results/indexes/musique-minilm-l6-v2-int8-local_default \\
        --predictions results/musique-local/predictions/t2rag.jsonl
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from _replayed import arguments, first_round, open_run

from t2rag.api import T2RAG
from t2rag.eval.datasets import load_samples
from t2rag.eval.metrics import best_em, best_f1
from t2rag.query.state import QueryTriple, is_placeholder
from t2rag.types import PropositionHit, near_text


def names(known: str, term: str) -> bool:
    """Whether fact term ``term`` names the entity ``known``: up to case, punctuation and
    articles, the shorter's words are a run of the longer's ("Ann Lee" and "Ann Lee Smith"); a
    one-word name counts only inside a name of at most three words."""
    a, b = near_text(known).split(), near_text(term).split()
    if not a or not b:
        return False
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return " ".join(short) in " ".join(long_) if len(short) > 1 else short[0] in long_ and len(long_) <= 3


def known_entity(triple: QueryTriple) -> str | None:
    """The entity an answer triple names (its one non-placeholder end), or None."""
    s, o = triple.subject, triple.object
    if is_placeholder(s) and not is_placeholder(o):
        return o
    if is_placeholder(o) and not is_placeholder(s):
        return s
    return None


def candidates(triples: Sequence[QueryTriple], facts: Iterable[PropositionHit]) -> list[str]:
    """Distinct values the facts (best first) give for the triples' unknown: a fact one of whose
    ends names a triple's known entity offers its other end, in either direction (a fact may
    state the relation the other way round). Values equal to the entity itself are left out."""
    entities = [e for t in triples if (e := known_entity(t))]
    seen: dict[str, str] = {}
    for fact in facts:
        s, o = fact.triple.subject, fact.triple.object
        for end, other in ((s, o), (o, s)):
            if any(names(e, end) for e in entities) and not any(names(e, other) for e in entities):
                seen.setdefault(near_text(other), other.strip())
    return list(seen.values())


def matches(value: str, gold: list[str]) -> bool:
    return best_em(value, gold) > 0 or best_f1(value, gold) >= 0.8


def answer_hop(rag: T2RAG, rows: list[dict[str, Any]], gold: dict[str, list[str]],
               bridges_gold: dict[str, list[str]]) -> Counter[str]:
    """Counts over the chains that reached their answer hop; with ``bridges_gold`` (a question's
    gold intermediate answers) also whether the hop's known entity is one of them."""
    out: Counter[str] = Counter()
    for r in rows:
        if r["termination"] != "last_hop" or not r.get("unresolved"):
            continue
        searched, ev = first_round(rag, r["question"], r["unresolved"])
        cands = candidates([t.current for t in searched], ev.propositions)
        ends = [x for p in ev.propositions for x in (p.triple.subject, p.triple.object)]
        g, right = gold[r["id"]], r["em"] > 0
        in_cands, in_ends = any(matches(c, g) for c in cands), any(matches(x, g) for x in ends)
        out.update({"chains": 1, "read_right": right, "gold_in_candidates": in_cands,
                    "gold_first_candidate": bool(cands) and matches(cands[0], g), "gold_at_a_fact_end": in_ends,
                    "right_without_gold_in_facts": right and not in_ends,
                    "wrong_with_gold_in_candidates": not right and in_cands,
                    "wrong_with_gold_in_facts": not right and in_ends})
        if r["id"] in bridges_gold:
            entity = any(names(g1, x) for g1 in bridges_gold[r["id"]] for t in searched
                         for x in (t.current.subject, t.current.object))
            out.update({"entity_right": entity, "entity_right_read_right": entity and right})
    return out


def bridges(rag: T2RAG, rows: list[dict[str, Any]], first_hop: dict[str, str]) -> Counter[str]:
    out: Counter[str] = Counter()
    for r in rows:
        d = r.get("decomposition") or {}
        if r["termination"] == "plan_rejected" or not d.get("triples") or r["id"] not in first_hop:
            continue
        searched, ev = first_round(rag, r["question"], d["triples"])
        bridge = [t.current for t in searched if "?answer" not in t.current.placeholders]
        if not bridge:
            continue
        known = [x for b in bridge for x in (b.subject, b.object)]
        bound = [x for t in r["resolved"] for x in (t[0], t[2]) if not any(names(k, x) for k in known)]
        g = first_hop[r["id"]]
        in_cands = any(names(g, c) for c in candidates(bridge, ev.propositions))
        right = any(names(g, x) for x in bound)
        out.update({"plans": 1, "bound_right": right, "gold_in_candidates": in_cands,
                    "wrong_with_gold_in_candidates": in_cands and not right,
                    **deeper(rag, r["question"], d["triples"], bridge, ev.propositions, g)})
    return out


def deeper(rag: T2RAG, question: str, plan: list[list[str]], bridge: list[QueryTriple],
           facts: Sequence[PropositionHit], gold: str) -> dict[str, bool]:
    """Would retrieving more facts, or facts about the bridge's entity first, reach the gold
    value? Whether it is at an end of the round's facts, of the best 60, and of 8 facts taken
    about the triple's known entity first (the rest by rank)."""
    pool = first_round(rag, question, plan, {"k_chunks": 60, "resolve.facts": 60})[1].propositions
    entities = [e for t in bridge if (e := known_entity(t))]

    def about(p: PropositionHit) -> bool:
        return any(names(e, p.triple.subject) or names(e, p.triple.object) for e in entities)

    def has(props: Iterable[PropositionHit]) -> bool:
        return any(names(gold, x) for p in props for x in (p.triple.subject, p.triple.object))

    entity_first = ([p for p in pool if about(p)] + [p for p in pool if not about(p)])[: len(facts)]
    return {"gold_in_facts": has(facts), "gold_in_best_60": has(pool), "gold_in_entity_first": has(entity_first)}


def main() -> None:
    a = arguments(__doc__).parse_args()
    gold = {s.id: s.answers for s in load_samples(a.dataset, a.data_dir)}
    rag, rows = open_run(a.index, a.predictions)
    raw = json.loads((Path(a.data_dir) / f"{a.dataset}.json").read_text("utf-8"))
    steps = {str(q["id"]): [h["answer"] for h in q["question_decomposition"]] for q in raw
             if q.get("question_decomposition")}
    result: dict[str, Any] = {"dataset": a.dataset, "answer_hop": dict(answer_hop(
        rag, rows, gold, {k: v[:-1] for k, v in steps.items()}))}
    if steps:
        result["bridge"] = dict(bridges(rag, rows, {k: v[0] for k, v in steps.items()}))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
