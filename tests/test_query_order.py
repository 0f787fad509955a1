"""Bindings must follow the triple order: a placeholder is bound only as a triple's sole unknown."""

from __future__ import annotations

from t2rag.query.resolve import validate
from t2rag.query.retrieve import Evidence
from t2rag.query.state import QueryTriple, initial_state
from t2rag.types import PropositionHit, Triple

STATE = initial_state([
    QueryTriple("Saltmarsh Fever", "recorded at", "?studio"),
    QueryTriple("?studio", "owned by", "?owner"),
])


EVIDENCE = Evidence(propositions=(
    PropositionHit("p1", "Saltmarsh Fever recorded at Fenhollow", Triple("Saltmarsh Fever", "recorded at", "Fenhollow"),
                   ("c1",)),
    PropositionHit("p2", "Fenhollow owned by Dalia", Triple("Fenhollow", "owned by", "Dalia"), ("c2",)),
))


def _names(entries: list[dict[str, object]], in_order: bool = True) -> list[str]:
    return [b.placeholder for b in validate(entries, STATE, EVIDENCE, 1, in_order=in_order).bindings]


def test_chain_in_one_reply_is_accepted_in_any_order() -> None:
    entries = [{"placeholder": "?owner", "value": "Dalia", "evidence": [2]},
               {"placeholder": "?studio", "value": "Fenhollow", "evidence": [1]}]
    assert sorted(_names(entries)) == ["?owner", "?studio"]


def test_skipping_a_hop_is_dropped_and_counted() -> None:
    entries = [{"placeholder": "?owner", "value": "Fenhollow Studios", "evidence": [1]}]
    r = validate(entries, STATE, EVIDENCE, 1)
    assert r.bindings == () and len(r.dropped) == 1 and "only unknown" in r.dropped[0].reason


def test_question_fallback_round_has_no_order() -> None:
    entries = [{"placeholder": "?owner", "value": "Dalia", "evidence": [2]}]
    assert _names(entries, in_order=False) == ["?owner"]


def test_a_binding_needs_a_real_evidence_number() -> None:
    for refs in ([], [0], [3], ["1"], None):
        r = validate([{"placeholder": "?studio", "value": "Fenhollow", "evidence": refs}], STATE, EVIDENCE, 1)
        assert r.bindings == () and r.dropped[0].reason == "no valid evidence number", refs
