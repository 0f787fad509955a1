"""What T2RAG adds to the paper's algorithm: hybrid evidence, checked decomposition, the
bindings it refuses, and the answer path that also reads passages."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import ANSWER_PROMPT
from t2rag.api import T2RAG
from t2rag.embed.hashing import HashingEmbedder
from t2rag.index.builder import TripleIndex
from t2rag.index.corpus import Document
from t2rag.index.importer import Extraction
from t2rag.index.lexical import LexicalIndex
from t2rag.llm.scripted import ScriptedLLM
from t2rag.query.config import AnswerConfig
from t2rag.query.decompose import examples, pick_examples
from t2rag.query.plan_rules import check, mark_answer, prune, question_shape
from t2rag.query.resolve import REPLY_TOKENS, validate
from t2rag.query.retrieve import Evidence, fuse
from t2rag.query.state import Binding, QueryTriple, apply_bindings, initial_state
from t2rag.query.synthesize import answer_chunks
from t2rag.types import Chunk, PropositionHit, Triple

CORPUS = [
    ("Kell Bridge", "The Kell Bridge was designed by Lena Ortiz.", [("Kell Bridge", "designed by", "Lena Ortiz")]),
    ("Lena Ortiz", "Lena Ortiz was born in 1931 in Varn.", [("Lena Ortiz", "born in", "1931")]),
    ("Varn", "Varn is a town on the Oster river.", [("Varn", "lies on", "Oster river")]),
]


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("additions") / "idx"
    imported = {f"{t}\n{x}": Extraction([], [Triple(*tr) for tr in trs]) for t, x, trs in CORPUS}
    with TripleIndex.create(d, embedder=HashingEmbedder()) as ix:
        ix.add([Document(t, x) for t, x, _ in CORPUS], imported=imported)
    return d


def test_rrf_puts_what_both_rankings_agree_on_first() -> None:
    fused = fuse([("a", 0.9), ("b", 0.8), ("c", 0.1)], [("b", 3.0)])
    assert [pid for pid, _ in fused] == ["b", "a", "c"]


def test_lexical_index_is_saved_with_the_index_and_found_by_name(index_dir: Path) -> None:
    with TripleIndex.open(index_dir) as ix:
        gen = ix.store.generation()
        saved = LexicalIndex.load_if_current(index_dir, gen)
        assert saved is not None and len(saved.ids) == 3
        assert LexicalIndex.load_if_current(index_dir, gen + 1) is None  # stale: rebuilt, not trusted
        hits = ix.store.search_lexical(["Ortiz born"], 3)[0]
        texts = ix.store.get_propositions([hits[0][0]])
        assert "Lena Ortiz born in 1931" in next(iter(texts.values())).text


def test_damaged_lexical_files_are_rebuilt_in_memory(tmp_path: Path) -> None:
    (tmp_path / "lexical").mkdir()
    (tmp_path / "lexical" / "ids.json").write_text("{not json")
    assert LexicalIndex.load_if_current(tmp_path, 1) is None


@pytest.mark.parametrize(("question", "shape"), [
    ("Who designed the Kell Bridge?", "open"),
    ("Is Varn older than Oster?", "yes/no"),
    ("Which is longer, the Oster or the Kell?", "comparison"),
    ("Which came first the founding of Dunmore Academy or the birth of Lena Ortiz?", "comparison"),
    ("Who built the bridge that stands in or near Varn in 1931?", "open"),  # "or" inside a phrase
    ("What is a red or dark brown patch with a raised edge a sign of?", "open"),
    ("Lena Ortiz won the Kell Prize. Did Tobias Fenn also win it?", "yes/no"),  # its last sentence asks
    ("What did E. B. Varn and Mara Quint write?", "open"),  # initials end no sentence
    ("Do Kell Nights, a 1999 film, is a remake of Varn, released in which year?", "open"),  # a title's "Do"
    ("Is Varn in what state, Oster or Kell?", "open"),
    ("Was Lena Ortiz born in the city in which Varn stands?", "yes/no"),  # a relative "in which"
])
def test_question_shapes(question: str, shape: str) -> None:
    assert question_shape(question) == shape


def test_check_names_each_problem() -> None:
    q = "When was the designer of the Kell Bridge born?"
    good = [QueryTriple("Kell Bridge", "designed by", "?designer"), QueryTriple("?designer", "born in", "?answer")]
    assert check(q, good) == []
    assert any("?answer" in p for p in check(q, [QueryTriple("Kell Bridge", "designed by", "?designer")][:0]
                                              + [QueryTriple("Kell Bridge", "designed by", "?x")]))
    unlinked = [QueryTriple("Kell Bridge", "designed by", "?designer"), QueryTriple("Varn", "founded", "?answer")]
    assert any("link every triple" in p for p in check(q, unlinked))
    copied = [QueryTriple("the designer of the Kell Bridge born", "when", "?answer")]
    assert any("copies the question" in p for p in check(q, copied))
    assert any("one triple per compared item" in p
               for p in check("Which is older, Varn or Kell?", [QueryTriple("Varn", "founded", "?y")]))


def test_the_unknown_the_chain_ends_in_becomes_the_answer() -> None:
    q = "When was the designer of the Kell Bridge born?"
    marked = mark_answer(q, [QueryTriple("Kell Bridge", "designed by", "?designer"),
                             QueryTriple("?designer", "born in", "?year")])
    assert marked[1] == QueryTriple("?designer", "born in", "?answer") and check(q, marked) == []


def test_circular_and_given_values_are_not_bindings() -> None:
    state = initial_state([QueryTriple("Kell Bridge", "designed by", "?designer"),
                           QueryTriple("?designer", "married to", "?answer")])
    ev = Evidence(propositions=(PropositionHit("p", "Lena Ortiz designed the Kell Bridge.", Triple("a", "b", "c"),
                                               ("c1",)),))
    r = validate([{"placeholder": "?designer", "value": "Kell Bridge", "evidence": [1]}], state, ev, 1)
    assert r.bindings == () and "question already gives" in r.dropped[0].reason
    state = apply_bindings(state, [Binding("?designer", "Lena Ortiz")], 1)
    r = validate([{"placeholder": "?answer", "value": "lena ortiz", "evidence": [1]}], state, ev, 2)
    assert r.bindings == () and "repeats a term" in r.dropped[0].reason


def scripted(bind_answer: bool = True) -> ScriptedLLM:
    bindings = [{"placeholder": "?designer", "value": "Lena Ortiz", "evidence": [1]}]
    bindings += [{"placeholder": "?answer", "value": "1931", "evidence": [1]}] if bind_answer else []
    return ScriptedLLM(rules=[
        ("Placeholders to fill", lambda m: json.dumps({"bindings": bindings})),
        (ANSWER_PROMPT, {"reasoning": "r", "answer": "1931"}),
        ("Question:", {"triples": [["Kell Bridge", "designed by", "?designer"], ["?designer", "born in", "?year"]]}),
    ])


def test_default_answer_reads_facts_and_passages_and_says_so(index_dir: Path) -> None:
    llm = scripted()
    with T2RAG.open(index_dir, llm=llm) as rag:
        a = rag.ask("When was the designer of the Kell Bridge born?")
    assert a.answer == "1931" and a.answer_path == "facts+passages" and a.decomposition.problems == []
    assert a.decomposition.triples[1] == ["?designer", "born in", "?answer"]
    answer_prompt = [c["messages"][-1]["content"] for c in llm.calls
                     if re.search(ANSWER_PROMPT, c["messages"][-1]["content"])][0]
    assert answer_prompt.index("Passages:\n[1] ") < answer_prompt.index("Notes from the search:")
    assert 1 <= len(a.answer_chunks) <= 5 and a.grounding  # the question's own retrieval is recorded


def resolve_calls(llm: ScriptedLLM) -> list[dict[str, Any]]:
    return [c for c in llm.calls if "Placeholders to fill" in c["messages"][-1]["content"]]


def offered(call: dict[str, Any]) -> list[str]:
    return call["schema"]["properties"]["bindings"]["items"]["properties"]["placeholder"]["enum"]


def test_a_resolve_call_may_fill_only_the_unknown_its_round_searched(index_dir: Path) -> None:
    from t2rag.query.config import AnswerConfig, QueryConfig

    q = "When was the designer of the Kell Bridge born?"
    llm = scripted()  # every resolve reply fills ?designer and ?answer
    with T2RAG.open(index_dir, llm=llm) as rag:
        a = rag.ask(q, config=QueryConfig(answer=AnswerConfig(read_last_hop=False)))
    first, second = resolve_calls(llm)
    assert offered(first) == ["?designer"] and "Placeholders to fill: ?designer\n" in first["messages"][-1]["content"]
    assert [b.placeholder for b in a.rounds[0].bindings] == ["?designer"]
    assert a.rounds[0].dropped[0].reason == "?answer is not a placeholder to fill now"
    assert offered(second) == ["?answer"] and a.termination == "complete" and a.answer == "1931"
    assert first["max_tokens"] == REPLY_TOKENS  # a looping reply stops early, not at the general budget
    llm = scripted()
    with T2RAG.open(index_dir, llm=llm) as rag:  # any open placeholder: the chain binds in one call
        a = rag.ask(q, config={"resolve.one_hop": False, "answer.read_last_hop": False})
    assert offered(resolve_calls(llm)[0]) == ["?answer", "?designer"] and len(resolve_calls(llm)) == 1
    assert a.termination == "complete" and len(a.rounds[0].bindings) == 2


def test_the_question_fallback_never_fills_the_answer() -> None:
    from t2rag.query.resolve import targets

    state = initial_state([QueryTriple("?designer", "designed", "?bridge"),
                           QueryTriple("?designer", "born in", "?answer")])
    assert not state.searchable and targets(state, in_order=False) == {"?designer", "?bridge"}
    assert targets(state, in_order=False, one_hop=False) == {"?designer", "?bridge", "?answer"}


def test_read_last_hop_skips_the_resolve_call_for_the_answer_triple(index_dir: Path) -> None:
    llm = scripted(bind_answer=False)
    with T2RAG.open(index_dir, llm=llm) as rag:
        a = rag.ask("When was the designer of the Kell Bridge born?", config={"answer.read_last_hop": True})
    calls = resolve_calls(llm)
    assert len(calls) == 1 and "?answer" in calls[0]["messages"][-1]["content"]
    # round 1 resolves the bridge; round 2 only retrieves for the answer triple, which is then
    # shown to the answer step as still unresolved beside the passages of both rounds
    assert a.termination == "last_hop" and [r.mode for r in a.rounds] == ["triples", "read"]
    assert a.rounds[1].searched == [["Lena Ortiz", "born in", "?answer"]] and a.rounds[1].bindings == []
    answer_prompt = llm.calls[-1]["messages"][-1]["content"]
    assert "Still unresolved:\n- [Lena Ortiz | born in | ?answer]" in answer_prompt
    assert "Lena Ortiz was born in 1931" in answer_prompt and a.answer == "1931"
    assert a.usage["resolve"]["calls"] == 1


def test_a_single_triple_question_reads_without_any_resolve_call(index_dir: Path) -> None:
    llm = ScriptedLLM(rules=[(ANSWER_PROMPT, {"reasoning": "r", "answer": "Lena Ortiz"}),
                             ("Question:", {"triples": [["Kell Bridge", "designed by", "?answer"]]})])
    with T2RAG.open(index_dir, llm=llm) as rag:
        a = rag.ask("Who designed the Kell Bridge?", config={"answer.read_last_hop": True})
    assert a.termination == "last_hop" and "resolve" not in a.usage and a.answer == "Lena Ortiz"


def test_facts_as_notes_puts_the_passages_first_and_the_question_last() -> None:
    from t2rag.query.synthesize import render

    state = apply_bindings(initial_state([QueryTriple("Kell Bridge", "designed by", "?answer")]),
                           [Binding("?answer", "Lena Ortiz")], 1)
    chunks = [Chunk.make("Kell Bridge", "The Kell Bridge was designed by Lena Ortiz.")]
    user = render("Who designed the Kell Bridge?", state, natural=True, chunks=chunks, notes=True)[-1]["content"]
    assert user.index("[1] Kell Bridge") < user.index("Lena Ortiz]") < user.index("Question: Who designed")
    assert user.rstrip().endswith("Who designed the Kell Bridge?")


def test_grounded_decomposition_shows_facts_before_the_question(index_dir: Path) -> None:
    llm = scripted()
    with T2RAG.open(index_dir, llm=llm) as rag:
        rag.ask("When was the designer of the Kell Bridge born?",
                {"decompose.grounded": True, "decompose.ground_facts": 2})
    first: Any = llm.calls[0]["messages"][-1]["content"]
    assert first.startswith("Facts from the collection") and first.count("\n- ") == 2


def test_extraction_hygiene_drops_junk_and_near_duplicates_and_counts_them() -> None:
    from t2rag.index.importer import clean_triples_counted

    raw = [["Mirela Castell", "is a novelist", "true"], ["Ostrand", "is a coastal province", "yes"],
           ["Kell Bridge", "designed by", "Lena Ortiz"], ["the Kell Bridge", "Designed by", "Lena Ortiz."],
           ["Kell", "-", "x"], ["Ann", "was seen by Bo with a sheet over her head convincing him that she", "x"],
           ["Trinidad dollar", "abbreviated as", "$"], ["Leonie", "Op.", "2"], "not a triple"]
    kept, dropped = clean_triples_counted(raw)
    assert [t.as_list() for t in kept] == [["Kell Bridge", "designed by", "Lena Ortiz"],
                                           ["Trinidad dollar", "abbreviated as", "$"], ["Leonie", "Op.", "2"]]
    assert dropped == 6


def test_dropped_triples_are_counted_in_the_index(tmp_path: Path) -> None:
    doc = Document("Kell", "The Kell Bridge was designed by Lena Ortiz.")
    llm = ScriptedLLM(rules=[("named entities|entities", {"entities": ["Kell Bridge"]})],
                      default={"triples": [["Kell Bridge", "designed by", "Lena Ortiz"], ["Kell Bridge", "is", "yes"]]})
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        report = ix.add([doc], llm=llm)
        assert report["triples"] == 1 and report["triples_dropped"] == 1
        assert ix.store.counts()["triples_dropped"] == 1


def test_events_arrive_in_order_and_serialize(index_dir: Path) -> None:
    from t2rag.query.events import describe

    events: list[Any] = []
    with T2RAG.open(index_dir, llm=scripted()) as rag:
        a = rag.ask("When was the designer of the Kell Bridge born?", on_event=events.append)
    kinds = [e.kind for e in events]
    assert kinds[0] == "decomposition" and kinds[-1] == "answer"
    assert kinds[1:-1] == ["round", "evidence", "bindings"] * len(a.rounds)
    assert events[-1].data["answer"] == a.answer == "1931"
    for e in events:
        assert json.loads(json.dumps(e.to_dict()))["kind"] == e.kind and "\n" not in describe(e)


def test_lexical_index_of_stopwords_only_searches_to_nothing(tmp_path: Path) -> None:
    lx = LexicalIndex.build([("p1", "A is B"), ("p2", "it is")], generation=3)
    assert lx.search(["A is B"], 5) == [[]]
    lx.save(tmp_path)
    again = LexicalIndex.load_if_current(tmp_path, 3)
    assert again is not None and again.ids == ["p1", "p2"] and again.search(["is"], 5) == [[]]


def test_a_long_name_from_the_question_is_not_a_copy() -> None:
    q = "The manuscript for Flute Sonata in C major, BWV 1033 is in the hand of whose godson?"
    t = [QueryTriple("Flute Sonata in C major, BWV 1033", "manuscript in the hand of", "?writer"),
         QueryTriple("?writer", "godson of", "?answer")]
    assert check(q, t) == []


def test_failed_checks_are_reasked_only_when_asked_to(index_dir: Path) -> None:
    from t2rag.llm.scripted import Seq

    bad = {"triples": [["Kell Bridge", "designed by", "?designer"], ["Varn", "lies on", "?answer"]]}
    good = {"triples": [["Kell Bridge", "designed by", "?designer"], ["?designer", "born in", "?answer"]]}
    q = "When was the designer of the Kell Bridge born?"
    for reask, calls, problems in ((False, 1, 1), (True, 2, 0)):
        llm = ScriptedLLM(rules=[("Placeholders to fill", {"bindings": []}),
                                 (ANSWER_PROMPT, {"reasoning": "", "answer": "x"}),
                                 ("could not be used", good), ("Question:", Seq(bad, bad))])
        with T2RAG.open(index_dir, llm=llm) as rag:
            a = rag.ask(q, {"decompose.reask": reask, "decompose.form": False, "decompose.repair": False})
        assert a.usage["decompose"]["calls"] == calls and len(a.decomposition.problems) == problems
        if reask:
            reasked = llm.calls[1]["messages"][-1]["content"]
            assert "link every triple to ?answer" in reasked


def test_a_plan_that_fails_its_checks_is_not_run_the_passages_are_read(index_dir: Path) -> None:
    # Two triples that share no placeholder: the plan cannot link its facts to the answer.
    llm = ScriptedLLM(rules=[
        ("Placeholders to fill", {"bindings": []}),
        (ANSWER_PROMPT, {"reasoning": "r", "answer": "unknown"}),
        ("Passages:\n", {"reasoning": "passage 1", "answer": "Lena Ortiz"}),
        ("Question:", {"triples": [["Kell Bridge", "designed by", "?designer"], ["Varn", "lies on", "?river"]]}),
    ])
    with T2RAG.open(index_dir, llm=llm) as rag:
        free = {"decompose.form": False, "decompose.repair": False}
        a = rag.ask("Who designed the Kell Bridge?", free)
        kept = rag.ask("Who designed the Kell Bridge?", {"decompose.reject_failed": False, **free})
    assert a.decomposition.problems and a.termination == "plan_rejected" and a.rounds == []
    assert a.answer == "Lena Ortiz" and a.answer_path == "passages"
    assert a.answer_chunks[0].title == "Kell Bridge"  # the question's own best passage first
    assert set(a.usage) == {"decompose", "read", "total"}
    assert kept.termination != "plan_rejected" and kept.rounds  # the ablation runs the plan anyway


def test_index_embeds_chunks_and_the_answer_reads_the_fused_ranking(index_dir: Path) -> None:
    with TripleIndex.open(index_dir) as ix:
        assert ix.store.chunks_without_vectors() == []  # embedded by the build itself
        hits = ix.store.search_chunks(ix.embedder.embed(["Varn Oster river town"]), 3)[0]
    assert len(hits) == 3
    llm = scripted()
    with T2RAG.open(index_dir, llm=llm) as rag:
        a = rag.ask("When was the designer of the Kell Bridge born?", {"answer.passages": 2})
    assert len(a.answer_chunks) == 2 and a.rounds
    first_round = a.rounds[0].chunks[0] if a.rounds[0].chunks else None
    assert a.answer_chunks[0].title == "Kell Bridge"  # the question's best passage, then round 1's best
    assert first_round is None or first_round.id in {c.id for c in a.answer_chunks}


def test_a_value_the_evidence_does_not_contain_is_no_binding() -> None:
    state = initial_state([QueryTriple("Atwater Church", "located in", "?state"),
                           QueryTriple("?state", "area code", "?answer")])
    ev = Evidence(propositions=(PropositionHit("p", "Atwater Church is in Atwater, Ohio.", Triple("a", "b", "c"),
                                               ("c1",)),),
                  chunks=(Chunk.make("Atwater", "The church stands in Portage County."),))
    r = validate([{"placeholder": "?state", "value": "Texas", "evidence": [1]}], state, ev, 1)
    assert r.bindings == () and "not found in the evidence" in r.dropped[0].reason
    for value in ("Ohio", "the state of Ohio", "Portage County"):  # words from a fact or a passage
        r = validate([{"placeholder": "?state", "value": value, "evidence": [1]}], state, ev, 1)
        assert [b.value for b in r.bindings] == [value]


def test_the_decomposition_is_shown_the_worked_examples_of_its_questions_shape(index_dir: Path) -> None:
    embed = HashingEmbedder().embed
    pool = examples()
    comparison = pick_examples("Which opened first, Kell Bridge or Varn Station?", 3, embed)
    assert len(comparison) == 3 and sum(question_shape(e.question) == "comparison" for e in comparison) == 2
    q = "When was the designer of the Kell Bridge born?"
    chain = pick_examples(q, 3, embed)
    assert len(chain) == 3 and all(question_shape(e.question) == "open" for e in chain)
    assert [pool.index(e) for e in chain] == sorted(pool.index(e) for e in chain)  # in pool order
    assert pick_examples(q, 0, embed) == pool and pick_examples(q, 3, None) == pool
    for k, shown in ((3, 3), (0, len(pool))):
        llm = scripted()
        with T2RAG.open(index_dir, llm=llm) as rag:
            rag.ask(q, {"decompose.examples": k})
        system = llm.calls[0]["messages"][0]["content"]
        assert system.count("\nQuestion: ") == shown and system.count('{"triples": [[') == shown + 1


def test_the_answer_reads_fewer_passages_only_when_the_chain_reached_its_answer_hop(index_dir: Path) -> None:
    cfg = {"answer.passages": 1, "k_chunks": 3}
    with T2RAG.open(index_dir, llm=scripted()) as rag:
        a = rag.ask("When was the designer of the Kell Bridge born?", cfg)
    assert a.termination in ("last_hop", "complete") and len(a.answer_chunks) == 1
    broken = {"steps": [], "answer": ["?someone", "designed", "?answer"]}  # nothing named to start from
    llm = ScriptedLLM(rules=[("Passages:\n", {"reasoning": "", "answer": "Lena Ortiz"}), ("Question:", broken)])
    with T2RAG.open(index_dir, llm=llm) as rag:
        b = rag.ask("Who designed the Kell Bridge?", cfg)
    assert b.termination == "plan_rejected" and len(b.answer_chunks) == 3  # as many as chunk RAG reads


def test_plain_read_answers_a_chain_that_bound_nothing_as_chunk_rag_reads(index_dir: Path) -> None:
    """With ``answer.plain_read`` a one-triple plan (its first round is its answer hop) is read
    with chunk RAG's prompt over k_chunks passages; a chain that bound a bridge keeps its notes."""
    one = {"triples": [["Kell Bridge", "designed by", "?answer"]]}
    llm = ScriptedLLM(rules=[("Passages:\n", {"reasoning": "", "answer": "Lena Ortiz"}), ("Question:", one)])
    with T2RAG.open(index_dir, llm=llm) as rag:
        a = rag.ask("Who designed the Kell Bridge?", {"answer.plain_read": True, "k_chunks": 3})
    assert a.termination == "last_hop" and a.answer_path == "passages" and len(a.answer_chunks) == 3
    assert a.answer == "Lena Ortiz" and "Notes from the search" not in llm.calls[-1]["messages"][-1]["content"]
    with T2RAG.open(index_dir, llm=scripted()) as rag:
        b = rag.ask("When was the designer of the Kell Bridge born?", {"answer.plain_read": True})
    assert b.resolved and b.answer_path == "facts+passages"


def test_an_open_plan_is_constrained_to_end_in_its_answer_triple(index_dir: Path) -> None:
    from t2rag.query.decompose import COMPARE_PLAN, OPEN_PLAN

    q = "When was the designer of the Kell Bridge born?"
    plan = {"steps": [["Kell Bridge", "designed by", "?designer"], ["Varn", "lies on", "?river"]],
            "answer": ["?designer", "born in", "?answer"]}
    llm = ScriptedLLM(rules=[("Placeholders to fill", {"bindings": []}),
                             (ANSWER_PROMPT, {"reasoning": "", "answer": "x"}), ("Question:", plan)])
    with T2RAG.open(index_dir, llm=llm) as rag:
        a = rag.ask(q, {"decompose.form": True})
        rag.ask("Which is older, Kell Bridge or Varn?", {"decompose.form": True})
    assert llm.calls[0]["schema"] == OPEN_PLAN and any(c["schema"] == COMPARE_PLAN for c in llm.calls)
    assert OPEN_PLAN["properties"]["answer"]["prefixItems"][2] == {"const": "?answer"}
    # the unlinked step is dropped, not a reason to reject the plan
    assert a.decomposition.triples == [plan["steps"][0], plan["answer"]] and not a.decomposition.problems
    assert a.termination != "plan_rejected"


def test_plan_form_checks_givens_and_a_starting_triple() -> None:
    q = "If Gallu is a demon, what is Lilu?"
    given = [QueryTriple("Gallu", "is", "a demon"), QueryTriple("Lilu", "is", "?answer")]
    assert check(q, given, givens=True) == [] and check(q, given)  # a stated fact needs no link
    floating = prune([QueryTriple("?x", "type of", "?answer")])
    assert any("start from a name" in p for p in check(q, floating, givens=True))
    chain = [QueryTriple("Varn", "founded by", "?f"), QueryTriple("Oster", "mayor", "?m"),
             QueryTriple("?f", "born in", "?answer"), QueryTriple("Kell", "is", "old")]
    assert prune(chain) == [chain[0], chain[2], chain[3]]
    one = [QueryTriple("Never Cry Wolf", "released by", "?label"), QueryTriple("Big Hero 6", "released by", "?label")]
    q2 = "Both Never Cry Wolf and Big Hero 6 were released by what label?"
    assert mark_answer(q2, one) == one and mark_answer(q2, one, only_unknown=True)[1].object == "?answer"
    vacuous = [QueryTriple("Lilu", "is", "?answer"), QueryTriple("?answer", "is", "?Answer")]
    assert prune(vacuous) == vacuous[:1]


def test_a_binding_is_credited_only_to_read_passages_that_state_it(tmp_path: Path) -> None:
    same = [("Anselm Brecht", "spouse", "Ines Marlow")]
    corpus = [("Anselm Brecht", "Anselm Brecht married Ines Marlow in Varn.", same),
              ("The Glass Orchard", "The Glass Orchard is a novel set in Varn.", same)]  # a bad extraction
    imported = {f"{t}\n{x}": Extraction([], [Triple(*tr) for tr in trs]) for t, x, trs in corpus}
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        ix.add([Document(t, x) for t, x, _ in corpus], imported=imported)
    llm = ScriptedLLM(rules=[
        ("Placeholders to fill", {"bindings": [{"placeholder": "?spouse", "value": "Ines Marlow", "evidence": [1]}]}),
        (ANSWER_PROMPT, {"reasoning": "r", "answer": "Ines Marlow"}),
        ("Question:", {"triples": [["Anselm Brecht", "spouse", "?spouse"], ["?spouse", "born in", "?answer"]]}),
    ])
    with T2RAG.open(tmp_path / "ix", llm=llm) as rag:
        a = rag.ask("Where was the spouse of Anselm Brecht born?")
    fact = next(f for f in a.resolved if f.triple == ["Anselm Brecht", "spouse", "Ines Marlow"])
    assert [c.title for c in fact.chunks] == ["Anselm Brecht"]


def test_the_answer_hops_passages_come_first_only_when_asked_and_reached() -> None:
    q, r1, r2 = ([Chunk.make(f"{name}{i}", "text") for i in range(3)] for name in ("q", "hop1-", "hop2-"))
    first = AnswerConfig(passages=2, answer_hop_first=True)
    titles = lambda cs: [c.title for c in cs]  # noqa: E731
    assert titles(answer_chunks(first, 5, q, [r1, r2], natural=False, reached=True)) == ["hop2-0", "q0"]
    usual = answer_chunks(AnswerConfig(passages=2), 5, q, [r1, r2], natural=False, reached=True)
    assert titles(usual) == ["q0", "hop1-0"]
    short = answer_chunks(first, 5, q, [r1, r2], natural=False, reached=False)  # a broken chain reads as before
    assert titles(short)[:3] == ["q0", "hop1-0", "hop2-0"] and len(short) == 5
