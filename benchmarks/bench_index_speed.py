"""Indexing speed levers on the default local model: each alone, on the same passages, in one run.

Every lever extracts triples from the same first N passages of a corpus with no response cache
(a fresh model per lever, so no lever inherits another's prompt cache), and is reported against
``today`` (two-pass OpenIE, one decoding slot, no speculative decoding: what ``t2rag index``
does by default) measured in the same run: passages per minute and the ratio, prompt and
generated tokens per passage, triples per passage, failures, entity coverage against gpt-3.5's
extraction of the same passages (MuSiQue), and for speculative decoding the share of draft
tokens the model accepted. The machine's limit is measured first on the same model: prompt and
generation tokens per second of a bare request, and each lever's own rates beside it.

    .venv/bin/python benchmarks/bench_index_speed.py --chunks 30 --levers today,ngram,draft,single,slots2
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ThreadPoolExecutor
from itertools import repeat
from typing import Any

from _common import DATA, save

from t2rag import prompts
from t2rag.config import OpenIEConfig
from t2rag.errors import ParseError
from t2rag.index import load_corpus, load_openie
from t2rag.index.importer import clean_triples_counted
from t2rag.index.openie import MAX_CHARS, _entities, entity_schema, extract, item_bound
from t2rag.llm.base import LLM
from t2rag.llm.local import LocalLLM
from t2rag.llm.structured import ask_json
from t2rag.types import Chunk, OpenIERecord, Triple, Usage

# name: (OpenIE mode, decoding slots, speculative decoding)
LEVERS: dict[str, tuple[str, int, str]] = {
    "today": ("two_pass", 1, "none"),
    "ngram": ("two_pass", 1, "ngram"),
    "ngram-mod": ("two_pass", 1, "ngram-mod"),
    "draft": ("two_pass", 1, "draft:small"),
    "single": ("single", 1, "none"),
    "slots2": ("two_pass", 2, "none"),
    "single+slots2": ("single", 2, "none"),
    "single+ngram": ("single", 1, "ngram"),
    "grouped": ("grouped", 1, "none"),
    "grouped+slots2": ("grouped", 2, "none"),
}

# The terser reply shape (lever 2): the second pass names each subject once and lists its
# (predicate, object) pairs under it, so a subject with five facts is generated once, not five
# times. Measured here before it may enter the package (``t2rag.index.openie``).
GROUPED_PROMPT = [
    {"role": "system", "content": (
        "You turn a passage into facts. Group the facts by subject: each group is [subject, "
        "[[predicate, object], ...]]. Subjects and objects are entities from the passage (prefer the "
        "listed entities, written the same way); a predicate is a short verb phrase. Replace pronouns "
        "with the names they refer to. Every fact must make sense on its own. Reply with JSON only.")},
    {"role": "user", "content": (
        'Reply in this format: {"facts": [["subject", [["predicate", "object"]]]]}\n\n'
        "Example passage:\nLake Orvin\nLake Orvin is a reservoir in Talmora County, built in 1962 by "
        'engineer Hedda Brun.\nExample entities: ["Lake Orvin", "Talmora County", "1962", "Hedda Brun"]\n\n'
        'Example reply:\n{"facts": [["Lake Orvin", [["is a reservoir in", "Talmora County"], '
        '["was built in", "1962"], ["was built by", "Hedda Brun"]]], ["Hedda Brun", [["is", "engineer"]]]]}'
        "\n\nPassage:\n{passage}\nEntities: {entities}")},
]


def grouped_schema(max_items: int) -> dict[str, Any]:
    part = {"type": "string", "maxLength": MAX_CHARS}
    pair = {"type": "array", "items": part, "minItems": 2, "maxItems": 2}
    group = {"type": "array", "prefixItems": [part, {"type": "array", "items": pair, "maxItems": max_items}]}
    return {"type": "object", "properties": {"facts": {"type": "array", "items": group, "maxItems": max_items}},
            "required": ["facts"]}


def _grouped(data: Any) -> tuple[list[Triple], int]:
    groups = data["facts"] if isinstance(data, dict) else data
    if not isinstance(groups, list):
        raise ValueError("'facts' is not a list")
    flat = [[g[0], *pair] for g in groups if isinstance(g, list) and len(g) == 2 and isinstance(g[1], list)
            for pair in g[1] if isinstance(pair, list) and len(pair) == 2]
    return clean_triples_counted(flat)


def extract_grouped(llm: LLM, chunk: Chunk, cfg: OpenIEConfig, usage: Usage | None = None) -> OpenIERecord:
    """Two-pass OpenIE with the grouped second reply; parse failures recorded as ``extract`` does."""
    bound = item_bound(chunk)
    try:
        msgs = prompts.load("openie_entities").render(passage=chunk.passage)
        entities, _ = ask_json(llm, msgs, entity_schema(bound), _entities, stage="openie", usage=usage,
                               max_tokens=cfg.max_tokens, salvage=True)
        msgs = [{**m, "content": m["content"].replace("{passage}", chunk.passage).replace(
            "{entities}", json.dumps(entities))} for m in GROUPED_PROMPT]
        (triples, dropped), _ = ask_json(llm, msgs, grouped_schema(bound), _grouped, stage="openie",
                                         usage=usage, max_tokens=cfg.max_tokens, salvage=True)
    except ParseError as e:
        return OpenIERecord(chunk.id, f"llm:{llm.name}", e.raw, str(e), [], [])
    return OpenIERecord(chunk.id, f"llm:{llm.name}", "", None, entities, triples, dropped)


def coverage(ours: list[list[str]], entities: list[str]) -> float:
    """Share of gpt-3.5's entities that occur in a subject or object of ours (1.0: all)."""
    if not entities:
        return 1.0
    ends = " | ".join(x.lower() for t in ours for x in (t[0], t[2]))
    return sum(e.lower() in ends for e in entities) / len(entities)


def rates(t: dict[str, float]) -> dict[str, float | None]:
    return {"prompt_tok_s": round(1000 * t["prompt_n"] / t["prompt_ms"], 1) if t["prompt_ms"] else None,
            "gen_tok_s": round(1000 * t["predicted_n"] / t["predicted_ms"], 1) if t["predicted_ms"] else None}


def machine_limit(model: str, chunks: list[Chunk]) -> dict[str, Any]:
    """Prompt and generation rates of bare requests on one slot: a passage-sized prompt with one
    generated token, and a free reply of 128 tokens (the median of three each)."""
    llm = LocalLLM(model)
    text = "\n\n".join(c.passage for c in chunks[:3])
    prompt, gen = [], []
    for i in range(3):
        llm.timings = dict.fromkeys(llm.timings, 0.0)
        llm.complete([{"role": "user", "content": f"({i}) {text}\nSay OK."}], max_tokens=1)
        prompt.append(rates(llm.timings)["prompt_tok_s"])
        llm.timings = dict.fromkeys(llm.timings, 0.0)
        llm.complete([{"role": "user", "content": f"({i}) Write a long story about a harbour."}], max_tokens=128)
        gen.append(rates(llm.timings)["gen_tok_s"])
    return {"prompt_tok_s": sorted(prompt)[1], "gen_tok_s": sorted(gen)[1]}


def run_lever(name: str, model: str, chunks: list[Chunk], gold: dict[str, Any]) -> dict[str, Any]:
    mode, slots, spec = LEVERS[name]
    llm = LocalLLM(model, n_parallel=slots, speculative=spec)
    llm.load()
    usage = Usage()
    t0 = time.perf_counter()
    fn, cfg = (extract_grouped, OpenIEConfig()) if mode == "grouped" else (extract, OpenIEConfig(mode=mode))
    with ThreadPoolExecutor(slots) as pool:
        recs = list(pool.map(fn, repeat(llm), chunks, repeat(cfg), repeat(usage)))
    wall = time.perf_counter() - t0
    tot, n, t = usage.total(), len(chunks), llm.timings
    cov = [coverage([x.as_list() for x in r.triples], gold[c.passage].entities)
           for r, c in zip(recs, chunks) if c.passage in gold]
    return {
        "lever": name, "mode": mode, "slots": slots, "speculative": spec, "chunks": n,
        "seconds": round(wall, 1), "chunks_per_min": round(60 * n / wall, 2),
        "prompt_tokens_per_chunk": round(tot.prompt_tokens / n, 1),
        "completion_tokens_per_chunk": round(tot.completion_tokens / n, 1),
        "cached_prompt_tokens_per_chunk": round(tot.cached_prompt_tokens / n, 1),
        "triples_per_chunk": round(sum(len(r.triples) for r in recs) / n, 2),
        "failures": sum(r.error is not None for r in recs),
        "entity_coverage_vs_gpt35": round(sum(cov) / len(cov), 3) if cov else None,
        "draft_accepted": round(t["draft_n_accepted"] / t["draft_n"], 3) if t["draft_n"] else None,
        **rates(t),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levers", default="today,ngram,draft,single,slots2",
                    help=f"comma-separated, from: {', '.join(LEVERS)} (today is always run first)")
    ap.add_argument("--model", default="default")
    ap.add_argument("--chunks", type=int, default=30)
    ap.add_argument("--dataset", default="musique")
    ap.add_argument("--name", default="", help="result file: results/speed/index-speed-DATASET[-NAME].json")
    args = ap.parse_args()
    docs = load_corpus(DATA / f"{args.dataset}_corpus.json")[: args.chunks]
    gold_path = DATA / f"{args.dataset}_openie_gpt-3.5-turbo-1106.json"
    gold = load_openie(gold_path) if gold_path.exists() else {}
    chunks = [Chunk.make(d.title, d.text) for d in docs]
    limit = machine_limit(args.model, chunks)
    print("machine", limit, flush=True)
    rows = []
    for name in dict.fromkeys(["today", *args.levers.split(",")]):
        row = run_lever(name, args.model, chunks, gold)
        row["speedup"] = round(row["chunks_per_min"] / rows[0]["chunks_per_min"], 2) if rows else 1.0
        print(row, flush=True)
        rows.append(row)
    print("saved", save(f"index-speed-{args.dataset}" + (f"-{args.name}" if args.name else ""), {
        "command": "benchmarks/bench_index_speed.py " + " ".join(f"--{k} {v}" for k, v in vars(args).items()),
        "model": f"local:{args.model}", "machine_limit": limit, "rows": rows}))


if __name__ == "__main__":
    main()
