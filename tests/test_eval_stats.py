"""Paired statistics: the exact sign test and the bootstrap interval."""

from __future__ import annotations

import pytest

from t2rag.eval.stats import bootstrap_ci, sign_test_p


def test_sign_test_matches_hand_computed_values() -> None:
    assert sign_test_p(0, 0) == 1.0
    assert sign_test_p(5, 0) == pytest.approx(2 / 32)
    assert sign_test_p(10, 3) == pytest.approx(2 * sum(__import__("math").comb(13, i) for i in range(4)) / 2**13)
    assert sign_test_p(3, 10) == sign_test_p(10, 3) and sign_test_p(4, 4) == 1.0


def test_bootstrap_interval_brackets_the_mean_and_is_reproducible() -> None:
    diffs = [100.0] * 10 + [-100.0] * 3 + [0.0] * 57
    lo, hi = bootstrap_ci(diffs)
    assert lo < sum(diffs) / len(diffs) < hi and lo > -15 and hi < 25
    assert bootstrap_ci(diffs) == (lo, hi)
    assert bootstrap_ci([0.0] * 30) == (0.0, 0.0)
