"""The EM gap of one method over another, pooled over several benchmark runs (paired by question).

    .venv/bin/python benchmarks/pooled_gap.py results/musique-local results/hotpotqa-local results/medical-local

prints, for ``--method`` (default t2rag) against ``--baseline`` (default standard, dense RAG),
the questions both answered in each run and pooled, wins and losses, the two-sided sign test and
the 95 % paired bootstrap interval of the EM gap in points (the same statistics as the reports).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from t2rag.eval.stats import bootstrap_ci, sign_test_p


def em_by_id(run: Path, method: str) -> dict[str, float]:
    path = run / "predictions" / f"{method}.jsonl"
    return {r["id"]: float(r["em"]) for r in map(json.loads, path.read_text("utf-8").splitlines()) if r}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--method", default="t2rag")
    p.add_argument("--baseline", default="standard")
    a = p.parse_args()
    pooled: list[float] = []
    for run in a.runs:
        ours, theirs = em_by_id(run, a.method), em_by_id(run, a.baseline)
        diffs = [ours[i] - theirs[i] for i in ours if i in theirs]
        pooled += diffs
        print(f"{run}: n {len(diffs)}, gap {100 * sum(diffs) / max(len(diffs), 1):+.1f}")
    wins, losses = sum(d > 0 for d in pooled), sum(d < 0 for d in pooled)
    lo, hi = bootstrap_ci(pooled)
    gap = 100 * sum(pooled) / len(pooled)
    print(f"pooled: n {len(pooled)}, {a.method} − {a.baseline} EM gap {gap:+.1f} points, 95 % CI "
          f"[{100 * lo:+.1f}, {100 * hi:+.1f}], wins {wins} / losses {losses}, sign p {sign_test_p(wins, losses):.3f}")


if __name__ == "__main__":
    main()
