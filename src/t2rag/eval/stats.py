"""Paired statistics for two methods answering the same questions: the sign test and a
bootstrap confidence interval of the exact-match gap."""

from __future__ import annotations

import random
from math import comb


def sign_test_p(wins: int, losses: int) -> float:
    """Two-sided exact sign test over the questions where the methods differ (ties dropped):
    the chance of a split at least this lopsided if either method were as likely to win."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    tail = sum(comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def bootstrap_ci(diffs: list[float], *, repeats: int = 10_000, level: float = 0.95,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of paired differences (resampling questions),
    with a fixed seed so a report is the same every time it is rendered."""
    if not diffs:
        return (0.0, 0.0)
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(repeats))
    lo = means[int((1 - level) / 2 * repeats)]
    hi = means[min(repeats - 1, int((1 + level) / 2 * repeats))]
    return (lo, hi)
