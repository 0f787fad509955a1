"""Index build throughput vs the raw embedder on the same propositions (issue: overhead <= 10%).

Builds the MuSiQue dev index from the imported gpt-3.5 OpenIE with the default embedder and,
in the same run, embeds the same proposition texts with the bare embedder; repeats alternate
the two and the median ratio is reported.

    .venv/bin/python benchmarks/bench_build.py [--repeats 3] [--embedder minilm]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from _common import DATA, median, save, timed

from t2rag.embed import get_embedder
from t2rag.index import TripleIndex, load_corpus, load_openie
from t2rag.types import Proposition


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--batch", type=int, default=256)
    args = ap.parse_args()

    docs = load_corpus(DATA / "musique_corpus.json")
    imported = load_openie(DATA / "musique_openie_gpt-3.5-turbo-1106.json")
    # the same distinct propositions the index will hold (it dedups by proposition id)
    by_id: dict[str, str] = {}
    for d in docs:
        for t in imported[f"{d.title}\n{d.text}"].triples:
            p = Proposition.from_triple(t)
            by_id.setdefault(p.id, p.text)
    texts = list(by_id.values())
    embedder = get_embedder(args.embedder)
    embedder.embed(texts[:64])  # warm up (session init, allocator)

    raw_s: list[float] = []
    build_s: list[float] = []
    n_props = 0
    for _ in range(args.repeats):
        t, _ = timed(lambda: [embedder.embed(texts[i : i + args.batch]) for i in range(0, len(texts), args.batch)])
        raw_s.append(t)
        tmp = Path(tempfile.mkdtemp(prefix="t2rag-bench-"))
        try:
            def build(tmp: Path = tmp) -> int:
                with TripleIndex.create(tmp / "ix", embedder=embedder) as ix:
                    ix.add(docs, imported=imported)
                    return ix.store.counts()["propositions"]
            t, n_props = timed(build)
            build_s.append(t)
        finally:
            shutil.rmtree(tmp)

    raw_rate = [len(texts) / t for t in raw_s]
    build_rate = [n_props / t for t in build_s]
    ratios = [b / r for b, r in zip(build_rate, raw_rate, strict=True)]
    result = {
        "command": "benchmarks/bench_build.py " + " ".join(f"--{k} {v}" for k, v in vars(args).items()),
        "embedder": embedder.name,
        "documents": len(docs),
        "propositions_raw": len(texts),
        "propositions_indexed": n_props,
        "raw_embed_s": raw_s,
        "build_s": build_s,
        "raw_props_per_s_median": round(median(raw_rate), 1),
        "build_props_per_s_median": round(median(build_rate), 1),
        "build_over_raw_ratio_median": round(median(ratios), 3),
        "ratios": [round(r, 3) for r in ratios],
    }
    print(result)
    print("saved", save("build", result))


if __name__ == "__main__":
    main()
