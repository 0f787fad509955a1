"""Runs RAPTOR (parthsarthi03/raptor, unmodified) on a dataset's first N questions, one JSON line each.

Runs inside benchmarks/peers/.venv (see setup.sh), never in T2RAG's environment, from the working
copy of RAPTOR's source that setup.sh makes. RAPTOR's documented extension points carry the
models: our summarization, QA and embedding classes call the same OpenAI-compatible endpoints
as every other method (``t2rag endpoints``: llama.cpp for the model, MiniLM for the vectors).
Everything else -- splitting into 100-token chunks, UMAP + Gaussian-mixture clustering, one
summary per cluster, layer by layer, and the collapsed-tree retrieval of up to 3,500 tokens --
is RAPTOR's own code with its defaults.

The tree is built once per corpus and pickled (``WORK/tree.pkl``); the build's LLM calls and
tokens go to ``WORK/build.json``. Summaries are cached by their input (``--summaries``, by default
``WORK/summaries.jsonl``), so a killed build that is started again pays only for clusters it has
not summarized yet: RAPTOR leaves UMAP unseeded, so the driver seeds NumPy's global generator
and runs numba on one thread (UMAP's parallel optimizer is not reproducible), which makes a
rebuild cluster the same nodes the same way. Each question is answered on its own; a failure
costs that question only (the line carries the error). Resumable: questions already in --out
are skipped.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from run_peer import answer_each, driver_arguments, load_dataset

HERE = Path(__file__).resolve().parent
SUMMARY_PROMPT = ("Summarize the text below for a reader who will answer questions from your summary alone. "
                  "Keep every name, date, number and relation it states.\n\n{context}")
QA_PROMPT = ("Context:\n{context}\n\nAnswer the question from the context. Reply with the answer only: a name, "
             "a date, a number, a short phrase, or yes/no, never a sentence.\n\nQuestion: {question}")


def tiktoken_offline() -> None:
    """RAPTOR counts tokens with tiktoken's cl100k_base, which downloads on first use; a copy of
    the file ships inside litellm's package (the name tiktoken's cache gives that download)."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return
    import litellm  # noqa: F401 - only to find its package folder

    for path in Path(litellm.__file__).parent.rglob("9b5ad71b2ce5302211f9c61530b329a4922fc6a4"):
        os.environ["TIKTOKEN_CACHE_DIR"] = str(path.parent)
        return
    raise SystemExit("run_raptor: tiktoken's cl100k_base is not cached and cannot be downloaded here")


class Chat:
    """One OpenAI-compatible chat endpoint; counts each caller's calls and tokens."""

    def __init__(self, url: str, model: str) -> None:
        self.url, self.model = url.rstrip("/"), model
        self.client = httpx.Client(timeout=1800)
        self.lock = threading.Lock()
        self.usage = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}

    def __call__(self, prompt: str, max_tokens: int) -> str:
        return self.ask(prompt, max_tokens)[0]

    def ask(self, prompt: str, max_tokens: int) -> tuple[str, dict[str, float]]:
        """The reply and this call's cost (tokens, seconds)."""
        body = {"model": self.model, "messages": [{"role": "user", "content": prompt}], "temperature": 0,
                "max_tokens": max_tokens}
        t0 = time.perf_counter()
        r = self.client.post(self.url + "/chat/completions", json=body)
        r.raise_for_status()
        data = r.json()
        tokens = data.get("usage", {})
        cost: dict[str, float] = {k: int(tokens.get(k, 0)) for k in ("prompt_tokens", "completion_tokens")}
        cost["seconds"] = round(time.perf_counter() - t0, 2)
        with self.lock:
            self.usage["calls"] += 1
            for k in ("prompt_tokens", "completion_tokens"):
                self.usage[k] += int(cost[k])
        return str(data["choices"][0]["message"]["content"] or "").strip(), cost


COST = ("prompt_tokens", "completion_tokens", "seconds")


def model_classes(chat: Chat, emb_url: str, cache_path: Path, reused: Counter[str]) -> tuple[Any, Any, Any]:
    """RAPTOR's three model classes, subclassed as its README documents. A summary found in the
    cache adds the cost it was made at (recorded beside it) to ``reused``, so a resumed build
    reports the whole tree's cost; a summary cached without its cost counts as ``unrecorded``."""
    from raptor import BaseEmbeddingModel, BaseQAModel, BaseSummarizationModel

    cache: dict[str, dict[str, Any]] = {}
    if cache_path.exists():
        for line in cache_path.read_text("utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                cache[row["key"]] = row
    lock = threading.Lock()
    client = httpx.Client(timeout=600)

    class Summarizer(BaseSummarizationModel):
        def summarize(self, context: str, max_tokens: int = 150) -> str:
            key = hashlib.md5(f"{max_tokens}\n{context}".encode()).hexdigest()
            if key in cache:
                row = cache[key]
                with lock:
                    reused.update({"summaries": 1, **{k: row[k] for k in COST if k in row}})
                    reused["unrecorded"] += "seconds" not in row
                return str(row["summary"])
            summary, cost = chat.ask(SUMMARY_PROMPT.format(context=context), max_tokens)
            row = {"key": key, "summary": summary, **cost}
            with lock:
                cache[key] = row
                with cache_path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(row) + "\n")
            return summary

    class Reader(BaseQAModel):
        def answer_question(self, context: str, question: str) -> str:
            return chat(QA_PROMPT.format(context=context, question=question), 64)

    class Embedder(BaseEmbeddingModel):
        def create_embedding(self, text: str) -> list[float]:
            r = client.post(emb_url.rstrip("/") + "/embeddings", json={"model": "minilm", "input": [text]})
            r.raise_for_status()
            return r.json()["data"][0]["embedding"]

    return Summarizer(), Reader(), Embedder()


def build_record(seconds: float, usage: dict[str, int], reused: Counter[str]) -> dict[str, Any]:
    """The tree's cost: this run's (embedding, clustering and new summaries) plus the recorded
    cost of the summaries an earlier, killed build made; ``this_run`` keeps this run's alone."""
    return {"seconds": round(seconds + reused["seconds"], 1), "calls": usage["calls"] + reused["summaries"],
            "prompt_tokens": usage["prompt_tokens"] + reused["prompt_tokens"],
            "completion_tokens": usage["completion_tokens"] + reused["completion_tokens"],
            "this_run": {"seconds": round(seconds, 1), **usage},
            "summaries_reused": reused["summaries"], "summaries_without_cost": reused["unrecorded"]}


def source_passages(nodes: list[Any], passages: list[str]) -> list[str]:
    """The corpus passages RAPTOR's retrieved leaves came from, in retrieval order (a leaf is a
    100-token piece of the concatenated corpus; it is credited to the passage holding its start).
    Summary nodes stand for many passages and are left out."""
    found: list[str] = []
    for node in nodes:
        head = " ".join(node.text.split())[:60]
        for p in passages:
            if head and head in " ".join(p.split()) and p not in found:
                found.append(p)
                break
    return found


def main() -> int:
    p = driver_arguments(__doc__.splitlines()[0], "RAPTOR's working directory (its tree, the summary cache)")
    p.add_argument("--summaries", help="the summary cache (JSONL; default WORK/summaries.jsonl)")
    p.add_argument("--build-only", action="store_true", help="build (or finish) the tree, answer nothing")
    args = p.parse_args()
    os.environ["NUMBA_NUM_THREADS"] = "1"  # before umap imports numba: its parallel layout is not reproducible
    os.environ.setdefault("OPENAI_API_KEY", "sk-local")  # RAPTOR's default classes build clients at import
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    tiktoken_offline()
    sys.path.insert(0, str(HERE / "work" / "parthsarthi03-raptor"))
    import numpy as np
    from raptor import RetrievalAugmentation, RetrievalAugmentationConfig

    np.random.seed(224)  # UMAP draws from NumPy's global generator when RAPTOR gives it no seed

    out = Path(args.out).resolve()
    samples, corpus = load_dataset(args)
    passages = [f"{d['title']}\n{d['text']}" for d in corpus]
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    chat = Chat(args.llm_url, args.llm_name)
    cache = Path(args.summaries).resolve() if args.summaries else work / "summaries.jsonl"
    reused: Counter[str] = Counter()
    summarizer, reader, embedder = model_classes(chat, args.emb_url, cache, reused)
    config = RetrievalAugmentationConfig(summarization_model=summarizer, qa_model=reader, embedding_model=embedder)
    tree = work / "tree.pkl"
    if tree.exists():
        ra = RetrievalAugmentation(config=config, tree=str(tree))
    else:
        t0 = time.perf_counter()
        ra = RetrievalAugmentation(config=config)
        ra.add_documents("\n\n".join(passages))
        ra.save(str(tree))
        build = build_record(time.perf_counter() - t0, chat.usage, reused)
        build.update({"passages": len(passages), "nodes": len(ra.tree.all_nodes), "leaves": len(ra.tree.leaf_nodes),
                      "layers": ra.tree.num_layers})
        (work / "build.json").write_text(json.dumps(build, indent=1), encoding="utf-8")
        print(f"run_raptor: tree of {build['nodes']} nodes ({build['leaves']} leaves, {build['layers']} layers), "
              f"{build['calls']} summaries, {build['seconds']:.0f}s", flush=True)
    if args.build_only:
        return 0

    def one(question: str) -> tuple[str, list[str], dict]:
        before = dict(chat.usage)
        context, layers = ra.retrieve(question, top_k=10, max_tokens=3500, collapse_tree=True,
                                      return_layer_information=True)
        nodes = [ra.tree.all_nodes[x["node_index"]] for x in layers if x["layer_number"] == 0]
        answer = reader.answer_question(context, question)
        return answer, source_passages(nodes, passages)[:10], {"usage": {k: chat.usage[k] - before[k] for k in before}}

    answer_each(samples, out, one, "run_raptor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
