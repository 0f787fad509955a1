"""Runs one peer system on a dataset's first N questions and writes one JSON line per question.

Runs inside benchmarks/peers/.venv (see setup.sh), never in T2RAG's environment: it imports the
peer, not t2rag. The LLM and the embedder are OpenAI-compatible endpoints (``t2rag endpoints``).
Peers: ``hipporag2`` (the ``hipporag`` package) and ``t2rag_authors`` (the authors' source, run
from the working copy setup.sh makes). Each question is answered on its own, so a peer that
breaks on one question (its parser on a small model's output) loses that question only; the
line then carries the error and an empty answer. Resumable: questions already in --out are skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent


def sample_id(s: dict, i: int) -> str:
    return str(s.get("id") or s.get("_id") or i)


def driver_arguments(description: str, work_help: str) -> argparse.ArgumentParser:
    """The arguments every peer driver takes: the dataset, the two endpoints, where it works and
    where its answers go."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--dataset", required=True, help="name, e.g. musique")
    p.add_argument("--data-dir", required=True, help="folder with NAME.json and NAME_corpus.json")
    p.add_argument("--llm-url", required=True)
    p.add_argument("--llm-name", default="local")
    p.add_argument("--emb-url", required=True)
    p.add_argument("--limit", type=int, default=30)
    p.add_argument("--work", required=True, help=work_help)
    p.add_argument("--out", required=True, help="JSONL of {id, question, answer, docs, seconds, error, ...}")
    return p


def load_dataset(args: argparse.Namespace) -> tuple[list[dict], list[dict]]:
    """The first --limit questions of the dataset and its whole corpus."""
    data = Path(args.data_dir)
    samples = json.loads((data / f"{args.dataset}.json").read_text("utf-8"))[: args.limit]
    return samples, json.loads((data / f"{args.dataset}_corpus.json").read_text("utf-8"))


def answer_each(samples: list[dict], out: Path, answer: Callable[[str], tuple[str, list[str], dict]],
                name: str) -> None:
    """Answer each sample not yet in ``out`` (resumable), one JSON line each: a peer's failure
    on a question is that question's (an empty answer and the error), counted as wrong.
    ``answer`` returns the answer, the passages read and any extra fields for the line."""
    out = out.resolve()
    done = {json.loads(line)["id"] for line in out.read_text("utf-8").splitlines() if line.strip()} \
        if out.exists() else set()
    with out.open("a", encoding="utf-8") as f:
        for i, s in enumerate(samples):
            if sample_id(s, i) in done:
                continue
            t = time.perf_counter()
            text, docs, extra, error = "", [], {}, None
            try:
                text, docs, extra = answer(s["question"])
            except Exception as e:  # noqa: BLE001 - a peer failure is that question's, counted as wrong
                error = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
            f.write(json.dumps({"id": sample_id(s, i), "question": s["question"], "answer": text, "docs": docs,
                                "seconds": round(time.perf_counter() - t, 2), **extra, "error": error}) + "\n")
            f.flush()
            print(f"{name}: {i + 1}/{len(samples)} {text[:60]!r}" + (f" ERROR {error}" if error else ""), flush=True)


def environment(args: argparse.Namespace) -> None:
    os.environ.setdefault("OPENAI_API_KEY", "sk-local")  # the local servers check no key
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # else litellm fetches a price list at import
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    os.environ["OPENAI_BASE_URL"] = args.emb_url  # the authors' embedder reads its URL from here
    sys.path.insert(0, str(HERE / "stubs"))  # vllm stand-in


def build(args: argparse.Namespace, work: Path):  # noqa: ANN201 - the peer's own class
    """The peer object, with our OpenIE placed where the peer looks for its own (no extraction)."""
    openie_name = f"openie_results_ner_{args.llm_name.replace('/', '_')}.json"
    common = dict(llm_base_url=args.llm_url, llm_name=args.llm_name, embedding_model_name="text-embedding-minilm",
                  openie_mode="online", max_new_tokens=None, qa_top_k=5, linking_top_k=5)
    if args.peer == "hipporag2":
        from hipporag import HippoRAG
        from hipporag.utils.config_utils import BaseConfig

        if args.openie:
            shutil.copy(args.openie, work / openie_name)
        cfg = BaseConfig(save_dir=str(work), embedding_base_url=args.emb_url, retrieval_top_k=200, **common)
        return HippoRAG(global_config=cfg)
    src = HERE / "work" / "rockcor-T2RAG"
    sys.path.insert(0, str(src))
    os.chdir(src)  # it reads prompt files relative to its source tree
    from src.TRAG import TRAG  # type: ignore[import-not-found]
    from src.utils.config_utils import BaseConfig as AuthorsConfig  # type: ignore[import-not-found]

    shared = work / "univ"
    shared.mkdir(exist_ok=True)
    if args.openie:
        shutil.copy(args.openie, shared / "openie_results_ner.json")  # the name it reads, without the model
    # as the authors' main.py configures it
    cfg = AuthorsConfig(save_dir=str(work), dataset=args.dataset + "_univ", max_qa_steps=3, recall_eval_top_k=200,
                        rerank_dspy_file_path="src/prompts/dspy_prompts/filter_llama3.3-70B-Instruct.json",
                        graph_type="facts_and_sim_passage_node_unidirectional", embedding_batch_size=8,
                        corpus_len=args.corpus_len, **common)
    cfg.exclude_llm_from_paths = True
    cfg.embedding_base_dir = str(shared)
    cfg.llm_cache_dir = str(work / "llm_cache")
    return TRAG(global_config=cfg)


def main() -> int:
    p = driver_arguments(__doc__.splitlines()[0], "the peer's working directory (its index, caches)")
    p.add_argument("--peer", choices=["hipporag2", "t2rag_authors"], required=True)
    p.add_argument("--openie", help="OpenIE in HippoRAG's format for this corpus (skips the peer's extraction)")
    args = p.parse_args()
    samples, corpus = load_dataset(args)
    args.corpus_len = len(corpus)
    out = Path(args.out).resolve()  # before build(): the authors' code runs from its own folder
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    environment(args)
    rag = build(args, work)
    t0 = time.perf_counter()
    rag.index([f"{d['title']}\n{d['text']}" for d in corpus])
    seconds = time.perf_counter() - t0
    print(f"run_peer: {args.peer} indexed {len(corpus)} passages in {seconds:.0f}s", flush=True)
    build_file = work / "build.json"
    if not build_file.exists():  # the first build's cost (a resumed run finds the peer's index on disk)
        build_file.write_text(json.dumps({"passages": len(corpus), "seconds": round(seconds, 1)}), encoding="utf-8")

    def one(question: str) -> tuple[str, list[str], dict]:
        solution = rag.rag_qa([question])[0][0]
        return str(solution.answer or ""), list(solution.docs[:10]), {}

    answer_each(samples, out, one, args.peer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
