"""How often a round's facts repeat one fact, and what one fact per pair of entities changes: no LLM.

For each committed question whose plan ran, the first round's retrieval is replayed for the
plan's searchable triples (the committed decomposition, so no model is needed) twice: as today,
and with ``retrieve.distinct`` (a fact joining the same two entities as a better-ranked one is
passed over). Reported: facts per round that restate an earlier fact's pair, how many distinct
pairs the resolver sees, and whether the round's facts and passages reach a gold supporting
passage (the dataset's supporting titles).

    .venv/bin/python benchmarks/fact_diversity.py --dataset musique --data-dir ../shared/data \\
        --index results/indexes/musique-minilm-l6-v2-int8-local_default \\
        --predictions results/musique-local/predictions/t2rag.jsonl
"""

from __future__ import annotations

from statistics import mean
from typing import Any

from _replayed import arguments, first_round, open_run

from t2rag.eval.datasets import load_samples
from t2rag.query.retrieve import Evidence, pair_key


def measure(ev: Evidence, gold: set[str], titles: dict[str, str]) -> dict[str, Any]:
    pairs = [pair_key(p.triple) for p in ev.propositions]
    fact_titles = {titles.get(c, "") for p in ev.propositions for c in p.chunk_ids}
    return {"facts": len(pairs), "repeats": len(pairs) - len(set(pairs)),
            "gold_in_facts": bool(gold & fact_titles), "gold_in_passages": bool(gold & {c.title for c in ev.chunks})}


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--limit", type=int, default=None)
    a = ap.parse_args()
    samples = {s.id: s for s in load_samples(a.dataset, a.data_dir)}
    rag, rows = open_run(a.index, a.predictions)
    rows = rows[: a.limit]
    titles = {c.id: c.title for c in rag.iter_passages()}
    out: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    changed = 0
    for r in rows:
        d = r.get("decomposition") or {}
        if d.get("fallback") or d.get("problems") or r["termination"] == "plan_rejected":
            continue
        gold = set(samples[r["id"]].supporting_titles)
        rounds = {flag: first_round(rag, r["question"], d["triples"], {"retrieve.distinct": flag})
                  for flag in (False, True)}
        if not rounds[False][0]:
            continue
        evs = {flag: ev for flag, (_, ev) in rounds.items()}
        changed += [p.id for p in evs[False].propositions] != [p.id for p in evs[True].propositions]
        for flag, ev in evs.items():
            out[flag].append(measure(ev, gold, titles))
    n = len(out[False])
    print(f"{a.dataset}: {n} plans whose first round searched triples; facts changed by distinct: {changed}")
    for flag, ms in out.items():
        print(f"  distinct={flag}: facts/round {mean(m['facts'] for m in ms):.2f}, "
              f"repeated pairs/round {mean(m['repeats'] for m in ms):.2f} "
              f"(rounds with any: {sum(m['repeats'] > 0 for m in ms)}), "
              f"gold title among the facts' sources {sum(m['gold_in_facts'] for m in ms)}, "
              f"among the round's passages {sum(m['gold_in_passages'] for m in ms)}")


if __name__ == "__main__":
    main()
