"""The benchmark harness: datasets, metrics, baselines, runner and report (calls the public API only)."""

from __future__ import annotations

from typing import Any

# Kept here, import-light, so the CLI can list methods without loading the index stack.
# The paper's algorithm, with none of the additions QueryConfig turns on by default.
PAPER: dict[str, Any] = {"hybrid": False, "grounded": False, "check_decomposition": False, "resolve_facts": 0,
                         "lookback_passages": 5, "answer_passages": 0, "passages_when_complete": False,
                         "reject_failed_plans": False, "facts_as_notes": False,
                         "read_last_hop": False, "one_hop": False, "decompose_examples": 0,
                         "question_fallback": True, "plan_repair": False}
T2RAG_CONFIGS: dict[str, dict[str, Any]] = {
    "t2rag": {},
    "t2rag_single": {"rounds": 1},
    "t2rag_nolookback": {"lookback": False},
    "t2rag_question": {"question_query": True},  # not in the paper: see QueryConfig.question_query
    "t2rag_paper": PAPER,
    # each addition switched off on its own (the per-change ablation table)
    "t2rag_dense": {"hybrid": False},
    "t2rag_grounded": {"grounded": True},
    "t2rag_unchecked": {"check_decomposition": False},
    "t2rag_reask": {"reask_decomposition": True},
    "t2rag_fullresolve": {"resolve_facts": 0, "lookback_passages": 5},
    "t2rag_propresolve": {"lookback_passages": 0},
    "t2rag_factsonly": {"answer_passages": 0, "passages_when_complete": False},  # the paper's answer step
    "t2rag_paperanswer": {"passages_when_complete": False},  # passages only after a stop
    "t2rag_nofacts": {"answer_facts": False},  # the answer reads T2RAG's passages without its facts
    "t2rag_allplans": {"reject_failed_plans": False},  # run plans that fail their checks too
    "t2rag_factsfirst": {"facts_as_notes": False},  # the answer reads the facts first, passages as support
    "t2rag_nolasthop": {"read_last_hop": False},  # ?answer is resolved by a call of its own, then answered
    "t2rag_anyhop": {"one_hop": False},  # a resolve call may fill any open placeholder, ?answer too
    "t2rag_3passages": {"answer_passages": 3},  # the answer reads 3 passages, not 4 (a cost measurement)
    "t2rag_fallback": {"question_fallback": True},  # the paper's question round when the chain breaks
    "t2rag_allexamples": {"decompose_examples": 0},  # the decomposition sees every worked example
    "t2rag_planform": {"plan_form": True},  # the reply constrained to its shape's plan form
    "t2rag_norepair": {"plan_repair": False},  # a plan that fails its checks is rejected, not repaired
    "t2rag_answercheck": {"answer_check": True},  # a bridge-echo or wrong-kind answer asked again
}
METHODS: tuple[str, ...] = ("nor", "bm25", "standard", "ircot", *T2RAG_CONFIGS)

__all__ = ["METHODS", "T2RAG_CONFIGS"]
