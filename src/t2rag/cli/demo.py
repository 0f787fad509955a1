"""The ``demo`` command: index the bundled demo corpus with the offline model and answer its questions."""

from __future__ import annotations

import argparse
import json
import time
from importlib import resources
from pathlib import Path
from typing import Any

from t2rag.cli import common as cli_common
from t2rag.cli.query import format_answer, query_args, query_settings


def cmd_demo(args: argparse.Namespace) -> int:
    from t2rag.api import T2RAG
    from t2rag.index import Document, TripleIndex
    from t2rag.paths import default_cache_dir

    demo = resources.files("t2rag").joinpath("demo")
    docs = [Document(d["title"], d["text"]) for d in json.loads(demo.joinpath("corpus.json").read_text("utf-8"))]
    questions = json.loads(demo.joinpath("questions.json").read_text("utf-8"))
    cli_common.settle_llm(args)
    index_dir = Path(args.index) if args.index else default_cache_dir() / ("demo-" + args.llm.replace(":", "-")
                                                                              .replace("/", "_"))
    t0 = time.perf_counter()
    llm = cli_common.llm_from_args(args)
    print(f"[1/3] loaded LLM {llm.name} in {time.perf_counter() - t0:.1f}s", flush=True)
    t1 = time.perf_counter()
    from t2rag.progress import BuildBar

    with TripleIndex.create(index_dir, embedder=args.embedder) as ix, BuildBar("indexing", leave=False) as bar:
        r = ix.add(docs, llm=llm, progress=bar)
        counts = ix.store.counts()
    u = r["usage"]["total"]
    print(f"[2/3] indexed {len(docs)} passages into {index_dir} in {time.perf_counter() - t1:.1f}s: "
          f"{counts['propositions']} propositions ({r['extracted']} chunks extracted now, {r['failed']} failed; "
          f"{u['calls']} LLM calls, {u['prompt_tokens']}+{u['completion_tokens']} tokens)", flush=True)
    print(f"[3/3] answering {len(questions)} questions\n", flush=True)
    right = 0
    with T2RAG(TripleIndex.open(index_dir, embedder=args.embedder), llm) as rag:
        for q in questions:
            a = rag.ask(q["question"], query_settings(args))
            ok = q["answer"].lower() in a.answer.lower()
            right += ok
            print(format_answer(a, trace=not args.brief))
            print(f"expected: {q['answer']} -> {'correct' if ok else 'wrong'}\n", flush=True)
    print(f"demo done in {time.perf_counter() - t0:.1f}s: {right}/{len(questions)} answers contain the expected one")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="index the bundled demo corpus with the offline model and answer its questions")
    p.add_argument("--index", metavar="DIR", help="where to keep the demo index (default: in the cache dir)")
    p.add_argument("--embedder", default="minilm", metavar="SPEC", help="embedder (minilm)")
    p.add_argument("--brief", action="store_true", help="answers and facts only, no round-by-round trace")
    cli_common.llm_args(p)
    query_args(p)
    p.set_defaults(func=cmd_demo)
