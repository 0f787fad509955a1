"""Pure scoring functions: SQuAD-style exact match and token F1, and passage recall@k."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from typing import Any

from t2rag.eval.datasets import GoldPassage

RECALL_KS: tuple[int, ...] = (1, 2, 5, 10)

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation, drop articles a/an/the, collapse whitespace (SQuAD)."""
    text = text.lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_f1(prediction: str, gold: str) -> float:
    pred = normalize_answer(prediction).split()
    ref = normalize_answer(gold).split()
    if not pred or not ref:
        return float(pred == ref)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision = same / len(pred)
    recall = same / len(ref)
    return 2 * precision * recall / (precision + recall)


def best_em(prediction: str, golds: Sequence[str]) -> float:
    """Exact match against the best of the gold answer and its aliases (0 when none)."""
    return max((exact_match(prediction, g) for g in golds), default=0.0)


def best_f1(prediction: str, golds: Sequence[str]) -> float:
    return max((token_f1(prediction, g) for g in golds), default=0.0)


def _squash(text: str) -> str:
    # Sets join sentences with "" or " "; comparing without whitespace makes both agree.
    return "".join(text.split())


def passage_matches(gold: GoldPassage, title: str, text: str) -> bool:
    """A retrieved chunk supports ``gold`` when the titles agree and, where the gold text is
    known (titles can repeat), one text contains the other (chunks are pieces of passages)."""
    if title.strip() != gold.title.strip():
        return False
    if gold.text is None:
        return True
    a, b = _squash(gold.text), _squash(text)
    return bool(a and b) and (b in a or a in b)


def recall_at_k(
    gold: Sequence[GoldPassage], retrieved: Sequence[tuple[str, str]], ks: Sequence[int] = RECALL_KS
) -> dict[str, float]:
    """Share of gold passages found in the first k retrieved (title, text) chunks, per k."""
    gold = list(dict.fromkeys(gold))
    if not gold:
        return {}
    first_hit: list[int] = []
    for g in gold:
        rank = next((i for i, (t, x) in enumerate(retrieved) if passage_matches(g, t, x)), None)
        if rank is not None:
            first_hit.append(rank)
    return {f"recall@{k}": sum(r < k for r in first_hit) / len(gold) for k in ks}


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _usage_total(row: dict[str, Any]) -> dict[str, Any]:
    return (row.get("usage") or {}).get("total") or {}


def _split(rows: Sequence[dict[str, Any]], prefix: str) -> dict[str, Any]:
    return {
        f"n_{prefix}": len(rows),
        f"em_{prefix}": _mean([r["em"] for r in rows]),
        f"f1_{prefix}": _mean([r["f1"] for r in rows]),
    }


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate one method's prediction rows: EM/F1, recall@k, per-question cost, and,
    where rows carry a T2RAG ``termination``, the share fully resolved and EM/F1 by it."""
    n = len(rows)
    out: dict[str, Any] = {"n": n, "em": _mean([r["em"] for r in rows]), "f1": _mean([r["f1"] for r in rows])}
    with_recall = [r["recall"] for r in rows if r.get("recall")]
    for k in RECALL_KS:
        out[f"recall@{k}"] = _mean([rec[f"recall@{k}"] for rec in with_recall]) if with_recall else None
    totals = [_usage_total(r) for r in rows]
    for key, field_name in (("llm_calls", "calls"), ("prompt_tokens", "prompt_tokens"),
                            ("completion_tokens", "completion_tokens"), ("llm_s", "wall_s")):
        out[f"{key}_per_q"] = _mean([float(t.get(field_name, 0)) for t in totals])
    out["cache_hits"] = sum(int(t.get("cache_hits", 0)) for t in totals)
    out["seconds_per_q"] = _mean([float(r.get("seconds", 0.0)) for r in rows])
    out["errors"] = sum(1 for r in rows if r.get("error"))
    if n and all("termination" in r for r in rows):
        complete = [r for r in rows if r["termination"] == "complete"]
        other = [r for r in rows if r["termination"] != "complete"]
        out["complete_share"] = len(complete) / n
        out.update(_split(complete, "complete"))
        out.update(_split(other, "incomplete"))
    return out
