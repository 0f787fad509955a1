"""Plan repair by rule: placeholders written as phrases, the unknown the question's wh-phrase
names, and triples that ask past the answer."""

from __future__ import annotations

import pytest

from t2rag.query.decompose import parse_triples
from t2rag.query.plan_rules import asked_unknown, mark_answer, prune
from t2rag.query.state import QueryTriple, canonical, is_placeholder

T = QueryTriple


@pytest.mark.parametrize("term", ["?x", "?", "?film", "?risk factor", "?college preparatory boys' school",
                                  "?singer-songwriter"])
def test_a_short_phrase_after_a_question_mark_is_a_placeholder(term: str) -> None:
    assert is_placeholder(term)


@pytest.mark.parametrize("term", ["Kell Bridge", "why? because", "?a b c d e f g", "what?"])
def test_names_and_long_text_are_not_placeholders(term: str) -> None:
    assert not is_placeholder(term)


def test_a_phrase_placeholder_is_one_unknown_however_it_is_spaced() -> None:
    assert canonical("?Risk  Factor") == canonical("?risk factor") == "?risk_factor"
    assert canonical("?boys' school") == "?boys_school"
    plan = parse_triples({"triples": [["Varn", "risk factor", "?risk factor"],
                                      ["?Risk Factor", "found in", "?answer"]]})
    assert plan[0].placeholders == plan[1].placeholders[:1] == ("?risk_factor",)


@pytest.mark.parametrize("question,unknowns,asked", [
    ("In what film did Ada Morn play a nurse?", ["?film", "?nurse_actor"], "?film"),
    ("The Oster Tigers were based in what state?", ["?team", "?state"], "?state"),
    ("What is the native language of the founder of Kell?", ["?founder", "?language"], "?language"),
    ("When was the architect of Kell Bridge born?", ["?architect", "?year"], "?year"),
    ("How many albums did the singer of Varn record?", ["?singer", "?albums"], "?albums"),
    ("Which treatment strategy targets the protein in Varn syndrome?", ["?strategy", "?protein"], "?strategy"),
])
def test_the_wh_phrase_names_the_answer(question: str, unknowns: list[str], asked: str) -> None:
    assert asked_unknown(question, unknowns) == asked


@pytest.mark.parametrize("question,unknowns", [
    ("What kind of school did the founder of Kell attend?", ["?founder", "?school"]),  # a kind, not the school
    ("What is the country where Varn lies named after?", ["?country", "?name"]),  # not the country
    ("Who led the country where the composer of Ilse was born?", ["?composer", "?country"]),  # relative clause
    ("Which city or town hosted both the Kell and the Varn games?", ["?city", "?town_city"]),  # two match
    ("Who designed Kell Bridge?", ["?designer", "?firm"]),
])
def test_no_unknown_is_named_when_the_question_does_not_say(question: str, unknowns: list[str]) -> None:
    assert asked_unknown(question, unknowns) is None


def test_the_named_unknown_wins_over_the_chains_last() -> None:
    q = "What language were the books of Haymo Vell translated into?"
    plan = [T("Haymo Vell", "books translated into", "?language"), T("?language", "during", "?era")]
    marked = mark_answer(q, plan, only_unknown=True)
    assert marked[0].object == "?answer"
    assert prune(marked) == marked[:1]  # [?answer, during, ?era] asks past the answer
    assert mark_answer(q, plan)[1].object == "?answer"  # without repair: the chain's last unknown


def test_a_triple_past_the_answer_stays_when_it_alone_holds_the_answer() -> None:
    plan = [T("Kell", "mayor", "?m"), T("?m", "born in", "?answer"), T("?answer", "twinned with", "?city")]
    assert prune(plan) == plan[:2]
    lone = [T("?answer", "twinned with", "?city")]
    assert prune(lone) == lone

