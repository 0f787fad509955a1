"""Run the peer systems against the same local model, embedder and questions as ``t2rag bench``.

Starts ``t2rag endpoints`` (llama.cpp's server for the model, MiniLM as /v1/embeddings), runs each
peer in its own environment (benchmarks/peers/.venv, made by setup.sh) through run_peer.py, and
writes its answers as predictions of the benchmark run directory, scored with T2RAG's own EM, F1
and recall code, so they appear in the same report. Tokens are read from the llama.cpp server's
counters around each peer's run: tokens it evaluated (a prompt prefix reused from its cache is not
counted), to compare with the report's "tokens not served from the prompt cache". RAPTOR
(run_raptor.py) counts its own QA call per question instead, and its tree build, once per corpus,
is its indexing cost (``peers/raptor-build.json``).

  .venv/bin/python benchmarks/peers/bench_peers.py --dataset musique --data-dir ../shared/data \\
      --openie ../shared/data/musique_openie_gpt-3.5-turbo-1106.json --limit 30 --out results/musique-local
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from t2rag.eval.datasets import load_samples
from t2rag.eval.metrics import best_em, best_f1, recall_at_k
from t2rag.eval.report import render_report
from t2rag.llm.endpoints import LocalEndpoints
from t2rag.types import md5_hex

HERE = Path(__file__).resolve().parent
PEERS = ("hipporag2", "t2rag_authors", "raptor")
_COUNTER = re.compile(r"^llamacpp:(prompt_tokens_total|tokens_predicted_total)\s+([0-9.e+]+)$", re.M)


def server_tokens(llm_url: str) -> dict[str, float]:
    text = httpx.get(llm_url.removesuffix("/v1") + "/metrics", timeout=10).text
    return {k: float(v) for k, v in _COUNTER.findall(text)}


def add_tokens(path: Path, tokens: tuple[float, float], answered: int) -> dict[str, float]:
    """Server-side token totals of a peer over all its runs (a resumed run adds to them)."""
    total = json.loads(path.read_text("utf-8")) if path.exists() else {"prompt": 0, "completion": 0, "questions": 0}
    total = {"prompt": total["prompt"] + tokens[0], "completion": total["completion"] + tokens[1],
             "questions": total["questions"] + answered}
    path.write_text(json.dumps(total), encoding="utf-8")
    return total


def to_prediction(line: dict[str, Any], sample: Any, tokens: dict[str, float]) -> dict[str, Any]:
    docs = [d.split("\n", 1) + [""] for d in line.get("docs", [])]
    retrieved = [(d[0], d[1]) for d in docs]
    prompt, completion = (round(tokens[k] / max(tokens["questions"], 1)) for k in ("prompt", "completion"))
    if "usage" in line:  # counted per question by the driver (RAPTOR: its QA call; the tree is indexing)
        prompt, completion = line["usage"]["prompt_tokens"], line["usage"]["completion_tokens"]
    row = {"id": sample.id, "question": sample.question, "answer": line["answer"], "gold": sample.answers,
           "em": best_em(line["answer"], sample.answers), "f1": best_f1(line["answer"], sample.answers),
           # per question: the run's server-side totals spread evenly (the peers batch their calls)
           "usage": {"total": {"calls": 0, "prompt_tokens": prompt, "completion_tokens": completion,
                               "cache_hits": 0, "cached_prompt_tokens": 0, "wall_s": line["seconds"]}},
           "seconds": line["seconds"], "retrieved_titles": [t for t, _ in retrieved],
           "recall": recall_at_k(sample.supporting, retrieved) if retrieved else {}}
    if line.get("error"):
        row["error"] = line["error"]
    return row


def peer_openie(src: Path, dst: Path, passages: list[str]) -> Path:
    """The OpenIE file as the peers read it: HippoRAG's format, one record per corpus passage
    with its ``idx`` (``chunk-`` + md5 of the passage, the id both peers and T2RAG give a chunk).

    The peers index whole passages; where our index split a long passage into chunks (each
    starting with the passage's title line), the chunks' entities and triples are merged into
    one record for the whole passage, so no peer extracts anything itself."""
    docs = json.loads(src.read_text("utf-8"))["docs"]
    whole = set(passages)
    by_title = {p.split("\n", 1)[0]: p for p in passages}
    merged: dict[str, dict[str, Any]] = {}
    for doc in docs:
        passage = doc["passage"]
        if passage not in whole and passage.split("\n", 1)[0] in by_title:
            passage = by_title[passage.split("\n", 1)[0]]
        rec = merged.setdefault(passage, {"idx": "chunk-" + md5_hex(passage), "passage": passage,
                                          "extracted_entities": [], "extracted_triples": []})
        for key in ("extracted_entities", "extracted_triples"):
            rec[key] += [x for x in doc.get(key, []) if x not in rec[key]]
    dst.write_text(json.dumps({"docs": list(merged.values())}), encoding="utf-8")
    return dst


def run_peer(peer: str, args: argparse.Namespace, ep: Any, raw: Path) -> tuple[float, float]:
    before = server_tokens(ep.llm_url)
    work = (HERE / "work" / f"{peer}-{args.dataset}").resolve()
    driver = ["run_raptor.py"] if peer == "raptor" else ["run_peer.py", "--peer", peer]
    cmd = [str(HERE / ".venv" / "bin" / "python"), str(HERE / driver[0]), *driver[1:],
           "--dataset", args.dataset, "--data-dir", str(Path(args.data_dir).resolve()),
           "--llm-url", ep.llm_url, "--emb-url", ep.embeddings_url, "--limit", str(args.limit),
           "--work", str(work), "--out", str(raw.resolve())]
    if peer == "raptor":  # its summaries are the build's checkpoint: kept with the run, committed
        cmd += ["--summaries", str((raw.parent / "raptor-summaries.jsonl").resolve())]
    if args.openie and peer != "raptor":  # RAPTOR reads the passages, no triples
        cmd += ["--openie", str(args.openie.resolve())]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    after = server_tokens(ep.llm_url)
    if (work / "build.json").exists():  # RAPTOR's tree: its indexing cost, kept with the run
        (raw.parent / f"{peer}-build.json").write_text((work / "build.json").read_text("utf-8"), encoding="utf-8")
    print(f"bench_peers: {peer} done in {time.perf_counter() - t0:.0f}s", flush=True)
    return (after.get("prompt_tokens_total", 0) - before.get("prompt_tokens_total", 0),
            after.get("tokens_predicted_total", 0) - before.get("tokens_predicted_total", 0))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", required=True)
    p.add_argument("--data-dir", required=True)
    p.add_argument("--openie", help="HippoRAG-format OpenIE for the corpus (as t2rag bench --openie-from)")
    p.add_argument("--peers", default=",".join(PEERS))
    p.add_argument("--limit", type=int, default=30)
    p.add_argument("--out", required=True, help="the t2rag bench run directory to add predictions to")
    p.add_argument("--model", default="default", help="bundled model: default (1.5B) or small")
    p.add_argument("--parallel", type=int, default=2)
    args = p.parse_args()
    if not (HERE / ".venv" / "bin" / "python").exists():
        sys.exit("bench_peers: run benchmarks/peers/setup.sh first")
    samples = load_samples(args.dataset, args.data_dir, args.limit)
    out = Path(args.out)
    (out / "peers").mkdir(parents=True, exist_ok=True)
    (out / "predictions").mkdir(exist_ok=True)
    if args.openie:
        corpus = json.loads((Path(args.data_dir) / f"{args.dataset}_corpus.json").read_text("utf-8"))
        passages = [f"{d['title']}\n{d['text']}" for d in corpus]  # as run_peer.py indexes them
        args.openie = peer_openie(Path(args.openie), out / "peers" / "openie_results_ner.json", passages)
    with LocalEndpoints(llm=f"local:{args.model}", embedder="minilm", n_parallel=args.parallel) as ep:
        for peer in args.peers.split(","):
            raw = out / "peers" / f"{peer}.jsonl"
            before = len(raw.read_text("utf-8").splitlines()) if raw.exists() else 0
            counted = run_peer(peer, args, ep, raw)
            lines = {r["id"]: r for r in map(json.loads, raw.read_text("utf-8").splitlines())}
            tokens = add_tokens(out / "peers" / f"{peer}-tokens.json", counted, len(lines) - before)
            rows = [to_prediction(lines[s.id], s, tokens) for s in samples if s.id in lines]
            (out / "predictions" / f"{peer}.jsonl").write_text(
                "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
            errors = sum(1 for r in rows if r.get("error"))
            print(f"bench_peers: {peer}: {len(rows)} answers, {errors} failed (counted wrong)", flush=True)
    render_report([out], out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
