"""The query-triple state machine: classification, substitution, queue movement, provenance."""

from __future__ import annotations

from t2rag.query.decompose import name_placeholders, parse_triples, question_triple
from t2rag.query.engine import search_plan, stop_reason
from t2rag.query.state import (
    Binding,
    QueryTriple,
    Support,
    apply_bindings,
    initial_state,
    is_placeholder,
)

Q = QueryTriple


def test_placeholders_and_kinds() -> None:
    assert is_placeholder("?x") and is_placeholder(" ?film ") and is_placeholder("?")
    assert not is_placeholder("Who?") and not is_placeholder("x") and not is_placeholder("? x")
    assert Q("Paris", "capital of", "France").kind == "resolved"
    assert Q("Inception", "directed by", "?d").kind == "searchable"
    assert Q("?d", "born in", "?c").kind == "fuzzy"
    # the same name twice is one unknown; names compare case-insensitively
    assert Q("?x", "knows", "?X").placeholders == ("?x",)
    assert Q("?x", "knows", "?X").kind == "searchable"


def test_query_text_drops_placeholders_and_verbalizes_like_the_index() -> None:
    assert Q("Inception", "directed  by", "?d").query_text() == "Inception directed by"
    assert Q("?d", "born in", "London").query_text() == "born in London"
    assert question_triple("Who  directed Inception?").query_text() == "Who directed Inception?"


def test_bare_question_marks_get_fresh_distinct_names() -> None:
    ts = name_placeholders([Q("?", "directed", "?Film"), Q("?film", "won", "?"), Q("?unknown1", "x", "y")])
    assert ts[0].subject not in ("?", ts[1].object)
    assert ts[0].object == ts[1].subject == "?film"
    assert len({ts[0].subject, ts[1].object, "?unknown1"}) == 3


def test_parse_triples_accepts_lists_and_objects() -> None:
    ts = parse_triples({"triples": [["A", "b", "?c"], {"subject": "?c", "predicate": "d", "object": "?e"}]})
    assert [t.kind for t in ts] == ["searchable", "fuzzy"]


def test_parse_triples_drops_repeats_after_naming_placeholders() -> None:
    reply = [["A", "b", "?C"], ["B", "c", "D"], ["A", "b", "?c"], ["B", "c", "D"], ["E", "f", "?"]]
    ts = parse_triples({"triples": reply})
    assert ts == [Q("A", "b", "?c"), Q("B", "c", "D"), Q("E", "f", "?unknown1")]


def test_initial_state_classifies_and_searches_every_searchable() -> None:
    s = initial_state([Q("A", "r", "B"), Q("A", "r", "?x"), Q("?x", "s", "?y")])
    assert [t.current for t in s.resolved] == [Q("A", "r", "B")]
    assert [t.current for t in s.searchable] == [Q("A", "r", "?x")]
    assert [t.current for t in s.fuzzy] == [Q("?x", "s", "?y")]
    assert s.to_search == s.searchable
    assert s.open_placeholders() == {"?x", "?y"}


def test_binding_upgrades_fuzzy_and_resolves_searchable_at_once() -> None:
    s0 = initial_state([Q("Inception", "directed by", "?d"), Q("?d", "born in", "?c")])
    sup = Support(("p1",), ("c1", "c2"))
    s1 = apply_bindings(s0, [Binding("?d", "Christopher Nolan", sup, 1)], 1)
    assert [t.current for t in s1.resolved] == [Q("Inception", "directed by", "Christopher Nolan")]
    assert [t.current for t in s1.searchable] == [Q("Christopher Nolan", "born in", "?c")]
    assert s1.fuzzy == ()
    assert s1.to_search == s1.searchable  # became searchable this round -> searched next
    # provenance: both triples that used ?d carry its support, the origin is kept
    assert s1.resolved[0].support == sup and s1.searchable[0].support == sup
    assert s1.resolved[0].origin == Q("Inception", "directed by", "?d")
    assert s1.resolved[0].round == 1

    s2 = apply_bindings(s1, [Binding("?c", "London", Support(("p2",), ("c3",)), 2)], 2)
    assert s2.complete
    last = s2.resolved[-1]
    assert last.current == Q("Christopher Nolan", "born in", "London")
    assert last.support == Support(("p1", "p2"), ("c1", "c2", "c3"))
    assert s2.values() == {"?d": "Christopher Nolan", "?c": "London"}


def test_searched_triples_are_not_searched_again_and_resolved_set_only_grows() -> None:
    s0 = initial_state([Q("A", "r", "?x"), Q("B", "r", "?y"), Q("?x", "s", "?z")])
    s1 = apply_bindings(s0, [Binding("?y", "Y")], 1)
    assert [t.current for t in s1.searchable] == [Q("A", "r", "?x")]
    assert s1.to_search == ()  # ?x's triple was searched in round 1 already
    assert len(s1.resolved) == 1
    s2 = apply_bindings(s1, [], 2)
    assert s2.resolved == s1.resolved and s2.searchable == s1.searchable


def test_fuzzy_with_three_unknowns_stays_fuzzy_after_one_binding() -> None:
    s0 = initial_state([Q("?a", "?r", "?b")])
    s1 = apply_bindings(s0, [Binding("?r", "likes")], 1)
    assert [t.current for t in s1.fuzzy] == [Q("?a", "likes", "?b")] and s1.to_search == ()


def test_bindings_of_unknown_placeholders_ignored_first_wins() -> None:
    s0 = initial_state([Q("A", "r", "?x")])
    s1 = apply_bindings(s0, [Binding("?nope", "N"), Binding("?x", "X1"), Binding("?x", "X2")], 1)
    assert [b.value for b in s1.bindings] == ["X1"]
    assert s1.resolved[0].current.object == "X1"


def test_stop_reasons() -> None:
    done = initial_state([Q("A", "r", "B")])
    assert stop_reason(done, 0, 3) == "complete"
    fresh = initial_state([Q("A", "r", "?x"), Q("?x", "s", "?y")])
    assert stop_reason(fresh, 0, 3) is None
    assert stop_reason(fresh, 3, 3) == "max_rounds"
    # searched, unresolved, nothing new, no fuzzy: no progress possible
    stuck = apply_bindings(initial_state([Q("A", "r", "?x")]), [], 1)
    assert stop_reason(stuck, 1, 3) == "early_stop"
    assert stop_reason(stuck, 3, 3) == "early_stop"  # the evidence ended it, not the budget
    # fuzzy left, nothing new to search: go on (question fallback) unless that stalled
    fuzzy_only = apply_bindings(fresh, [], 1)
    assert stop_reason(fuzzy_only, 1, 3) is None
    assert stop_reason(fuzzy_only, 1, 3, stalled=True) == "early_stop"
    # without the question fallback a broken chain ends at once
    assert stop_reason(fuzzy_only, 1, 3, fallback=False) == "early_stop"
    assert stop_reason(fresh, 0, 3, fallback=False) is None


def test_search_plan_triples_or_question_fallback() -> None:
    s0 = initial_state([Q("A", "r", "?x"), Q("?x", "s", "?y")])
    mode, searched, queries = search_plan(s0, "What?")
    assert (mode, queries) == ("triples", ["A r"]) and searched == s0.to_search
    s1 = apply_bindings(s0, [], 1)
    assert search_plan(s1, "  What   is it? ") == ("question", (), ["What is it?"])
    assert search_plan(s0, " What? ", with_question=True)[2] == ["A r", "What?"]
    assert search_plan(s1, "What?", with_question=True) == ("question", (), ["What?"])  # not twice
