"""Turn run directories into metrics, a markdown report and PNG charts, for one run or several."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from t2rag.errors import InputError
from t2rag.eval import T2RAG_CONFIGS
from t2rag.eval.metrics import RECALL_KS, summarize
from t2rag.eval.stats import bootstrap_ci, sign_test_p
from t2rag.jsontext import jsonl_lines
from t2rag.outfile import write_text

TABLE_COLUMNS = ("method", "n", "EM", "F1", "R@5", "LLM calls/q", "prompt tok/q", "completion tok/q", "s/q",
                 "errors")
EM_CHART = "em_per_method.png"
COST_CHART = "em_vs_tokens.png"


def load_predictions(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Every method's prediction rows, in the order the run lists its methods."""
    pred_dir = run_dir / "predictions"
    if not pred_dir.is_dir():
        raise InputError(f"{run_dir} is not a benchmark run directory (no predictions/)")
    run = _read(run_dir / "run.json") or {}
    files = {p.stem: p for p in sorted(pred_dir.glob("*.jsonl"))}
    order = [m for m in run.get("methods", []) if m in files] + [m for m in files if m not in run.get("methods", [])]
    out: dict[str, list[dict[str, Any]]] = {}
    for name in order:
        lines = jsonl_lines(files[name].read_text("utf-8"))
        rows: list[dict[str, Any]] = []
        for line in lines:
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue  # a torn last line from a killed run
        out[name] = rows
    return out


def _read(path: Path) -> Any:
    return json.loads(path.read_text("utf-8")) if path.exists() else None


def index_cost(run_dir: Path) -> dict[str, Any]:
    """The index builds this run did (summed): seconds and LLM usage, apart from questions."""
    builds = _read(run_dir / "index.json") or []
    total = {"builds": len(builds), "interrupted": sum(bool(b.get("interrupted")) for b in builds),
             "seconds": 0.0, "llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    for b in builds:
        t = (b.get("usage") or {}).get("total") or {}
        total["seconds"] += float(b.get("seconds", 0.0))
        total["llm_calls"] += int(t.get("calls", 0))
        total["prompt_tokens"] += int(t.get("prompt_tokens", 0))
        total["completion_tokens"] += int(t.get("completion_tokens", 0))
    finished = [b for b in builds if "counts" in b]
    if finished:
        total["counts"] = finished[-1]["counts"]
    return total


def compute_metrics(run_dir: Path) -> dict[str, Any]:
    run_dir = Path(run_dir)
    return {
        "run": _read(run_dir / "run.json") or {},
        "index": index_cost(run_dir),
        "methods": {name: summarize(rows) for name, rows in load_predictions(run_dir).items()},
    }


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _num(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{x:,.{digits}f}"


def _label(run_dir: Path, metrics: dict[str, Any]) -> str:
    run = metrics.get("run", {})
    return f"{run_dir.name} ({run.get('dataset', '?')}, {run.get('llm', '?')})"


def main_table(runs: list[tuple[str, dict[str, Any]]]) -> str:
    multi = len(runs) > 1
    head = (("run",) if multi else ()) + TABLE_COLUMNS
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, m in runs:
        for name, s in m["methods"].items():
            cells = [name, str(s["n"]), _pct(s["em"]), _pct(s["f1"]), _pct(s["recall@5"]),
                     _num(s["llm_calls_per_q"], 2), _num(s["prompt_tokens_per_q"], 0),
                     _num(s["completion_tokens_per_q"], 0), _num(s["seconds_per_q"], 2), str(s.get("errors", 0))]
            lines.append("| " + " | ".join(([label] if multi else []) + cells) + " |")
    return "\n".join(lines)


def recall_table(runs: list[tuple[str, dict[str, Any]]]) -> str:
    head = ["run", "method", *(f"R@{k}" for k in RECALL_KS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, m in runs:
        for name, s in m["methods"].items():
            if s.get("recall@1") is not None:
                lines.append("| " + " | ".join([label, name, *(_pct(s[f"recall@{k}"]) for k in RECALL_KS)]) + " |")
    return "\n".join(lines) if len(lines) > 2 else "(no method retrieved passages with gold labels)"


def t2rag_table(runs: list[tuple[str, dict[str, Any]]]) -> str | None:
    head = ["run", "method", "complete %", "EM complete", "F1 complete", "EM other", "F1 other"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, m in runs:
        for name, s in m["methods"].items():
            if "complete_share" in s:
                cells = [_pct(s["complete_share"]), _pct(s["em_complete"]), _pct(s["f1_complete"]),
                         _pct(s["em_incomplete"]), _pct(s["f1_incomplete"])]
                lines.append("| " + " | ".join([label, name, *cells]) + " |")
    return "\n".join(lines) if len(lines) > 2 else None


def _by_id(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(r["id"]): r for r in rows}


def _tokens(row: dict[str, Any]) -> int:
    t = (row.get("usage") or {}).get("total") or {}
    return int(t.get("prompt_tokens", 0)) + int(t.get("completion_tokens", 0))


def paired_table(preds: dict[str, list[dict[str, Any]]], baseline: str = "standard",
                 labels: dict[str, str] | None = None) -> str | None:
    """Each method against ``baseline`` on the questions both answered: exact-match wins and
    losses, the sign test's two-sided p, both EMs, a 95 % paired-bootstrap interval of the EM
    gap (points), and the token ratio (prompt + completion) on those questions."""
    if baseline not in preds:
        return None
    base = _by_id(preds[baseline])
    head = ["method", "paired n", "wins", "losses", "sign p", "EM", f"EM {baseline}", "gap 95% CI",
            "tokens / " + baseline]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, rows in preds.items():
        pairs = [(r, base[str(r["id"])]) for r in rows if name != baseline and str(r["id"]) in base]
        if not pairs:
            continue
        wins = sum(r["em"] > b["em"] for r, b in pairs)
        losses = sum(r["em"] < b["em"] for r, b in pairs)
        em = sum(r["em"] for r, _ in pairs) / len(pairs)
        em_b = sum(b["em"] for _, b in pairs) / len(pairs)
        ratio = sum(_tokens(r) for r, _ in pairs) / max(1, sum(_tokens(b) for _, b in pairs))
        lo, hi = bootstrap_ci([100 * (r["em"] - b["em"]) for r, b in pairs])
        cells = [(labels or {}).get(name, name), str(len(pairs)), str(wins), str(losses),
                 f"{sign_test_p(wins, losses):.2f}", _pct(em), _pct(em_b), f"[{lo:+.1f}, {hi:+.1f}]"]
        lines.append("| " + " | ".join([*cells, f"{ratio:.2f}"]) + " |")
    return "\n".join(lines) if len(lines) > 2 else None


def ablation_table(preds: dict[str, list[dict[str, Any]]]) -> str | None:
    """Every T2RAG variant against ``t2rag`` (the defaults) on the questions both answered,
    each labelled with the settings it changes."""
    variants = {name: rows for name, rows in preds.items() if name == "t2rag" or name in T2RAG_CONFIGS}
    labels = {name: f"{name} ({', '.join(f'{k}={v}' for k, v in T2RAG_CONFIGS[name].items())})"
              for name in variants if name != "t2rag" and len(T2RAG_CONFIGS[name]) <= 2}
    return paired_table(variants, baseline="t2rag", labels=labels)


def stage_table(preds: dict[str, list[dict[str, Any]]]) -> str:
    """Mean tokens per question by stage (prompt + completion; prompt tokens llama.cpp reused
    from its prompt cache in brackets), and for T2RAG methods which answer path was taken."""
    head = ["method", "tokens/q by stage (cached prompt tokens)", "answer paths", "decompositions passing checks"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, rows in preds.items():
        if not rows:
            continue
        stages: dict[str, list[float]] = {}
        for r in rows:
            for stage, u in (r.get("usage") or {}).items():
                if stage != "total" and isinstance(u, dict):
                    acc = stages.setdefault(stage, [0.0, 0.0])
                    acc[0] += int(u.get("prompt_tokens", 0)) + int(u.get("completion_tokens", 0))
                    acc[1] += int(u.get("cached_prompt_tokens", 0))
        n = len(rows)
        by_stage = ", ".join(f"{k} {v[0] / n:,.0f} ({v[1] / n:,.0f})" for k, v in stages.items())
        paths: dict[str, int] = {}
        for r in rows:
            if r.get("answer_path"):
                paths[r["answer_path"]] = paths.get(r["answer_path"], 0) + 1
        decs = [r["decomposition"] for r in rows if isinstance(r.get("decomposition"), dict)]
        valid = sum(not d.get("fallback") and not d.get("problems") for d in decs)
        lines.append("| " + " | ".join([
            name, by_stage or "–", ", ".join(f"{k} {v}" for k, v in sorted(paths.items())) or "–",
            f"{valid}/{len(decs)}" if decs else "–"]) + " |")
    return "\n".join(lines)


def cache_note(runs: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Cached replies keep their token counts but take no time, so seconds understate cost."""
    hits = [f"{name} {s['cache_hits']}" for _, m in runs for name, s in m["methods"].items() if s["cache_hits"]]
    if not hits:
        return []
    return ["", "LLM replies served from the response cache (tokens counted, seconds not): " + ", ".join(hits)]


def consistency_notes(runs: list[tuple[str, dict[str, Any]]],
                      preds: dict[str, list[dict[str, Any]]] | None) -> list[str]:
    """Say so when the table mixes question counts, or a method's rows were made by different
    code or settings (each row's ``run`` stamp: commit, decoding slots, settings id)."""
    notes = []
    ns = sorted({s["n"] for _, m in runs for s in m["methods"].values()})
    if len(ns) > 1:
        notes.append(f"The methods answered different numbers of questions (n = {', '.join(map(str, ns))}): "
                     "compare them in the paired tables, which use only the questions both answered.")
    for name, rows in (preds or {}).items():
        stamps = [r.get("run") or {} for r in rows]
        settings = {st.get("settings") for st in stamps}
        commits = {st.get("commit") for st in stamps}
        if len(settings) > 1 or len(commits) > 1:
            unstamped = sum(not st for st in stamps)
            notes.append(f"{name}: rows from {len(commits - {None})} commit(s) and {len(settings - {None})} "
                         f"settings id(s) (run.json names them)" + (f"; {unstamped} rows predate the stamps"
                                                                    if unstamped else ""))
    return [""] + [f"Note: {n}" for n in notes] if notes else []


def index_lines(runs: list[tuple[str, dict[str, Any]]]) -> str:
    out = []
    for label, m in runs:
        ix = m["index"]
        counts = ix.get("counts", {})
        out.append(
            f"- {label}: {ix['builds']} build(s)"
            + (f" ({ix['interrupted']} interrupted, then resumed)" if ix.get("interrupted") else "")
            + f", {ix['seconds']:.1f} s, {ix['llm_calls']} LLM calls, "
            f"{ix['prompt_tokens']:,} prompt + {ix['completion_tokens']:,} completion tokens; "
            f"{counts.get('chunks', 0):,} chunks, {counts.get('propositions', 0):,} propositions"
        )
    return "\n".join(out)


def render_markdown(runs: list[tuple[str, dict[str, Any]]], charts: list[str],
                    preds: dict[str, list[dict[str, Any]]] | None = None) -> str:
    parts = [
        "# T2RAG benchmark report",
        "",
        "Runs: " + "; ".join(label for label, _ in runs),
        "",
        "EM, F1 and recall are percentages; costs are per question (index build cost below, apart).",
        "",
        main_table(runs),
        *consistency_notes(runs, preds),
        *cache_note(runs),
        "",
        "## Retrieval recall of gold supporting passages",
        "",
        recall_table(runs),
    ]
    if preds:
        for baseline, what in (("standard", "standard dense RAG"), ("ircot", "IRCoT")):
            paired = paired_table(preds, baseline)
            if paired:
                parts += ["", f"## Paired against {what} (same questions)", "",
                          "Sign p: two-sided exact sign test over the questions the two answer differently; "
                          "gap: EM of the method minus the baseline's, in points, with a 95 % paired "
                          "bootstrap interval over questions.", "", paired]
        ablations = ablation_table(preds)
        if ablations:
            parts += ["", "## T2RAG ablations: each variant against the defaults (same questions)", "", ablations]
        parts += ["", "## Cost by stage", "", stage_table(preds)]
    t2 = t2rag_table(runs)
    if t2:
        parts += ["", "## T2RAG: questions whose placeholders were all resolved", "", t2]
    parts += ["", "## Index build cost", "", index_lines(runs)]
    if charts:
        parts += ["", "## Charts", "", *(f"![{c}]({c})" for c in charts)]
    return "\n".join(parts) + "\n"


def sync_run_info(run_dir: Path, metrics: dict[str, Any]) -> None:
    """run.json lists the methods that have predictions and how many questions each answered
    (``methods`` keeps those of every invocation otherwise, removed ones too)."""
    info = _read(run_dir / "run.json")
    if not isinstance(info, dict):
        return
    answered = {name: s["n"] for name, s in metrics["methods"].items()}
    info["methods"] = [m for m in info.get("methods", []) if m in answered] + [
        m for m in answered if m not in info.get("methods", [])]
    info["answered"] = answered
    write_text(run_dir / "run.json", json.dumps(info, indent=2))


def render_report(run_dirs: list[Path], out: Path | None = None) -> str:
    """Recompute metrics from the runs' predictions and write ``report.md`` + charts to ``out``.

    ``out`` defaults to the run directory for one run and to ``<first run>/../compare`` for
    several. Returns the markdown."""
    from t2rag.eval.charts import plot_em, plot_em_vs_tokens

    dirs = [Path(d) for d in run_dirs]
    if not dirs:
        raise InputError("no run directories given")
    metrics = [compute_metrics(d) for d in dirs]
    for d, m in zip(dirs, metrics):  # each run's metrics.json and run.json stay true to its predictions
        write_text(d / "metrics.json", json.dumps(m, indent=2))
        sync_run_info(d, m)
    runs = [(_label(d, m), m) for d, m in zip(dirs, metrics)]
    target = Path(out) if out else (dirs[0] if len(dirs) == 1 else dirs[0].parent / "compare")
    target.mkdir(parents=True, exist_ok=True)
    plot_em(runs, target / EM_CHART)
    plot_em_vs_tokens(runs, target / COST_CHART)
    text = render_markdown(runs, [EM_CHART, COST_CHART], load_predictions(dirs[0]) if len(dirs) == 1 else None)
    write_text(target / "report.md", text)
    return text
