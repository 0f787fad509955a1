"""Run a benchmark: build or reuse the index, answer every question with every method, resumably.

A run directory holds ``run.json`` (what was run), ``index.json`` (index build cost, apart
from the questions' cost), ``predictions/METHOD.jsonl`` (append-only, one fsynced line per
answered question, so a killed run continues where it stopped), ``metrics.json``,
``report.md`` and charts.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from t2rag.embed.base import Embedder
from t2rag.embed.registry import get_embedder
from t2rag.errors import ConfigError, ParseError, RequestRejected
from t2rag.eval.baselines import Method, Prediction
from t2rag.eval.datasets import Sample, load_dataset_corpus, load_samples
from t2rag.eval.methods import METHODS, build_index, make_methods, method_settings
from t2rag.eval.metrics import best_em, best_f1, recall_at_k
from t2rag.llm.base import LLM, parallelism
from t2rag.llm.cache import CachedLLM
from t2rag.llm.registry import get_llm, with_cache
from t2rag.outfile import append_line, jsonl_rows, open_jsonl_for_append, repair_torn_tail
from t2rag.types import Usage
from t2rag.version import VERSION

LLMLike = str | LLM
_CHECKED_KEYS = ("dataset", "llm", "embedder", "openie_from")
REPLIES = "replies.jsonl"  # every LLM reply the run's questions got, added to the response cache on resume


def parse_methods(methods: str | Iterable[str]) -> list[str]:
    names = [m.strip() for m in (methods.split(",") if isinstance(methods, str) else methods) if m.strip()]
    unknown = [m for m in names if m not in METHODS]
    if unknown or not names:
        raise ConfigError(f"unknown method(s) {', '.join(unknown) or '(none)'}; choose from: {', '.join(METHODS)}")
    return list(dict.fromkeys(names))


def settings_id(settings: dict[str, Any]) -> str:
    """A short id of a method's settings (config and prompt versions): rows that share it were
    produced the same way."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:12]


def source_commit() -> str:
    """The git commit of the code that runs (``+dirty`` with uncommitted changes), or "unknown"
    outside a checkout."""
    here = Path(__file__).resolve().parents[1]  # the package source
    try:
        sha = subprocess.run(["git", "-C", str(here), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                             text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no", "--", "."],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return sha + ("+dirty" if dirty else "")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


def _check_run_info(out_dir: Path, info: dict[str, Any]) -> None:
    """Refuse to mix predictions from a different dataset, model or embedder in one run dir."""
    path = out_dir / "run.json"
    if path.exists():
        old = json.loads(path.read_text("utf-8"))
        diff = [k for k in _CHECKED_KEYS if old.get(k) != info.get(k)]
        if diff:
            raise ConfigError(
                f"{out_dir} holds a run with a different {', '.join(diff)}; use another output directory"
            )
        info["methods"] = list(dict.fromkeys(old.get("methods", []) + info["methods"]))
        info["started"] = old.get("started", info["started"])
        info["settings"] = {**old.get("settings", {}), **info["settings"]}  # the latest of each method
        info["sessions"] = old.get("sessions", []) + info["sessions"]
    path.write_text(json.dumps(info, indent=2), encoding="utf-8")


def run_bench(
    dataset: str,
    data_dir: str | Path,
    methods: str | Iterable[str],
    llm_spec: LLMLike,
    embedder_spec: str | Embedder,
    openie_from: str | Path | None,
    limit: int | None,
    out_dir: str | Path,
    index_dir: str | Path | None = None,
    progress: bool = True,
    *,
    cache: bool = True,
    cache_path: str | Path | None = None,
) -> dict[str, Any]:
    """Benchmark ``methods`` on ``dataset`` and write the run directory ``out_dir``.

    The index is built at ``index_dir`` (default: ``OUT_DIR/../indexes/<dataset>-<embedder>-<llm>``)
    or reused; LLM replies are cached in ``cache_path`` (default ``OUT_DIR/../llm-cache.sqlite``),
    and the questions' replies are kept in ``OUT_DIR/replies.jsonl`` too, which seeds the cache
    when the run resumes, on this machine or another. Returns the metrics written to ``metrics.json``."""
    from t2rag.eval.report import compute_metrics, render_report

    out = Path(out_dir)
    (out / "predictions").mkdir(parents=True, exist_ok=True)
    names = parse_methods(methods)
    samples = load_samples(dataset, data_dir, limit)
    cache_file = Path(cache_path) if cache_path else out.parent / "llm-cache.sqlite"
    llm = (get_llm(llm_spec, cache=cache and cache_file) if isinstance(llm_spec, str)
           else with_cache(llm_spec, cache and cache_file))
    embedder = get_embedder(embedder_spec) if isinstance(embedder_spec, str) else embedder_spec
    stamp = {"commit": source_commit(), "slots": parallelism(llm)}
    settings = {name: method_settings(name) for name in names}
    _check_run_info(out, {
        "dataset": dataset, "data_dir": str(data_dir), "methods": names, "llm": llm.name,
        "embedder": embedder.name, "openie_from": str(openie_from) if openie_from else None,
        "limit": limit, "version": VERSION, "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "settings": {name: {**s, "id": settings_id(s)} for name, s in settings.items()},
        "sessions": [{**stamp, "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "methods": names, "limit": limit}],
    })
    ix_dir = None
    if any(n != "nor" for n in names):
        default = out.parent / "indexes" / _slug(f"{dataset}-{embedder.name}-{llm.name}")
        ix_dir = Path(index_dir) if index_dir else default
        _prepare_index(ix_dir, out, dataset, data_dir, names, llm, embedder, openie_from, progress)
    replies = llm if isinstance(llm, CachedLLM) else None
    if replies is not None:  # the questions' replies travel with the run: another machine replays it
        replies.keep_replies(out / REPLIES)
    try:
        with make_methods(names, llm=llm, embedder=embedder, index_dir=ix_dir) as runnable:
            for method in runnable:
                run_method(method, samples, out / "predictions" / f"{method.name}.jsonl", progress=progress,
                           concurrency=parallelism(llm),
                           stamp={**stamp, "settings": settings_id(settings[method.name])})
    finally:
        if replies is not None:
            replies.close_replies()
    render_report([out], out)  # writes metrics.json too
    return compute_metrics(out)


def _prepare_index(
    ix_dir: Path, out: Path, dataset: str, data_dir: str | Path, names: list[str],
    llm: LLM, embedder: Embedder, openie_from: str | Path | None, progress: bool,
) -> None:
    """Build or reuse the index; its cost goes to ``index.json``, apart from the questions'.

    An interrupted build (Ctrl-C) keeps every chunk it committed, and its cost so far is
    recorded as an ``interrupted`` entry, so a build spread over several runs is costed whole."""
    docs = load_dataset_corpus(dataset, data_dir)
    usage = Usage()
    t0 = time.perf_counter()
    try:
        build = build_index(ix_dir, docs, names, llm=llm, embedder=embedder, openie_from=openie_from,
                            progress=progress, usage=usage)
    except KeyboardInterrupt:
        _append_json_list(out / "index.json", {"index_dir": str(ix_dir), "interrupted": True,
                                               "seconds": round(time.perf_counter() - t0, 3), "usage": usage.to_dict()})
        raise
    _append_json_list(out / "index.json", {"index_dir": str(ix_dir), **build})


def _append_json_list(path: Path, item: dict[str, Any]) -> None:
    items = json.loads(path.read_text("utf-8")) if path.exists() else []
    items.append(item)
    path.write_text(json.dumps(items, indent=2), encoding="utf-8")


def answered_ids(path: Path) -> set[str]:
    """Ids already in a predictions file; a torn last line (a kill mid-write) is cut off."""
    repair_torn_tail(path)
    return {str(row["id"]) for row in jsonl_rows(path) if "id" in row}


def score(sample: Sample, pred: Prediction, seconds: float) -> dict[str, Any]:
    """One predictions line: what the method said and how it scores against gold."""
    row: dict[str, Any] = {
        "id": sample.id,
        "question": sample.question,
        "answer": pred.answer,
        "gold": sample.answers,
        "em": best_em(pred.answer, sample.answers),
        "f1": best_f1(pred.answer, sample.answers),
        "usage": pred.usage.to_dict(),
        "seconds": round(seconds, 4),
        "retrieved_titles": [c.title for c in pred.retrieved],
        "retrieved_ids": [c.id for c in pred.retrieved],
        "recall": recall_at_k(sample.supporting, [(c.title, c.text) for c in pred.retrieved])
        if pred.retrieves
        else {},
    }
    row.update(pred.extra)
    return row


def _predict(method: Method, question: str) -> Prediction:
    try:
        return method.predict(question)
    except (ParseError, RequestRejected) as e:
        # One unparseable reply or one refused request (a prompt over the context) costs one
        # question, not the run; a dead backend still stops it.
        return Prediction("", extra={"error": str(e).splitlines()[0]}, retrieves=False)


def run_method(
    method: Method, samples: list[Sample], path: Path, *, progress: bool = True, concurrency: int = 1,
    stamp: dict[str, Any] | None = None,
) -> int:
    """Answer the samples not yet in ``path``, ``concurrency`` at a time (local parallel slots or
    remote requests overlap); lines are written as answers finish, each with ``stamp`` as its
    ``run`` (the commit, the decoding slots and the method's settings id in run.json). Returns
    how many were answered."""
    from tqdm import tqdm

    done = answered_ids(path)
    todo = [s for s in samples if s.id not in done]
    bar = tqdm(total=len(samples), initial=len(samples) - len(todo), desc=method.name, unit="q",
               file=sys.stderr, disable=not progress, dynamic_ncols=True)

    def answer(sample: Sample) -> dict[str, Any]:
        t0 = time.perf_counter()
        pred = _predict(method, sample.question)
        row = score(sample, pred, time.perf_counter() - t0)
        return {**row, "run": stamp} if stamp else row

    with bar, open_jsonl_for_append(path) as f, ThreadPoolExecutor(max(1, concurrency)) as pool:
        for row in pool.map(answer, todo):
            append_line(f, row)
            bar.update(1)
    return len(todo)
