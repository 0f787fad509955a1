"""Pure scoring functions: SQuAD-style exact match and token F1, and passage recall@k."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

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
