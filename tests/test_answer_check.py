"""The answer check: bridge echoes and wrong-kind answers are found and asked once more."""

from t2rag.query.answer_check import bridge_echo, expected_kind, fits_kind, problem
from t2rag.query.state import Binding, QueryTriple, apply_bindings, initial_state


def chain_state(value: str = "Hong Kong"):
    plan = [QueryTriple("Fist Power", "produced in", "?country"),
            QueryTriple("?country", "taken by British in", "?answer")]
    return apply_bindings(initial_state(plan), [Binding("?country", value)], 1)


def test_kinds_follow_the_question_words():
    assert expected_kind("When was the country taken?") == "date"
    assert expected_kind("In what year did it open?") == "date"
    assert expected_kind("Who was the first president of X?") == "name"
    assert expected_kind("How many stores are there?") == "number"
    assert expected_kind("What county borders X?") is None
    assert fits_kind("August 16, 1967", "date") and fits_kind("the 1840s", "date")
    assert not fits_kind("Hong Kong", "date")
    assert fits_kind("twelve", "number") and not fits_kind("Tulsa", "number")
    assert not fits_kind("no", "name") and fits_kind("G. Stanley Hall", "name")
    assert fits_kind("anything", None)


def test_bridge_echo_names_the_placeholder_but_not_the_answer():
    state = chain_state()
    assert bridge_echo("the Hong Kong", state) == "?country"
    assert bridge_echo("1842", state) is None
    done = apply_bindings(state, [Binding("?answer", "1842")], 2)
    assert bridge_echo("1842", done) is None


def test_problem_says_what_the_question_asks():
    state = chain_state()
    note = problem("What happened to the country that produced Fist Power?", "Hong Kong", state)
    assert note and "?country" in note and "[Hong Kong | taken by British in | ?answer]" in note
    assert "date" in problem("When was the country that produced Fist Power taken by the British?", "Hong Kong", state)
    assert problem("When was the country that produced Fist Power taken by the British?", "1842", state) is None
    # a choice between named options may answer with one of its bridges
    assert problem("Which is older, Hong Kong or Macau?", "Hong Kong", state) is None
    assert problem("What is it?", "", state) is None


def test_the_engine_asks_once_more_and_records_why(tmp_path):
    import json

    from conftest import ANSWER_PROMPT
    from t2rag.api import T2RAG
    from t2rag.embed.hashing import HashingEmbedder
    from t2rag.index.builder import TripleIndex
    from t2rag.index.corpus import Document
    from t2rag.index.importer import Extraction
    from t2rag.llm.scripted import ScriptedLLM
    from t2rag.types import Triple

    corpus = [("Kell Bridge", "The Kell Bridge was designed by Lena Ortiz.",
               ("Kell Bridge", "designed by", "Lena Ortiz")),
              ("Lena Ortiz", "Lena Ortiz was born in 1931 in Varn.", ("Lena Ortiz", "born in", "1931"))]
    with TripleIndex.create(tmp_path / "idx", embedder=HashingEmbedder()) as ix:
        ix.add([Document(t, x) for t, x, _ in corpus],
               imported={f"{t}\n{x}": Extraction([], [Triple(*tr)]) for t, x, tr in corpus})

    def answer(messages):  # echoes the bridge unless told it is one
        told = "a step on the way" in messages[-1]["content"]
        return json.dumps({"reasoning": "r", "answer": "1931" if told else "Lena Ortiz"})

    def llm():
        return ScriptedLLM(rules=[
            ("Placeholders to fill", json.dumps({"bindings": [{"placeholder": "?designer", "value": "Lena Ortiz",
                                                               "evidence": [1]}]})),
            (ANSWER_PROMPT, answer),
            ("Question:", {"triples": [["Kell Bridge", "designed by", "?designer"],
                                       ["?designer", "born in", "?answer"]]}),
        ])

    q = "What is the birth year of the designer of the Kell Bridge?"
    with T2RAG.open(tmp_path / "idx", llm=llm()) as rag:
        plain = rag.ask(q)
    assert plain.answer == "Lena Ortiz" and plain.answer_check == ""
    with T2RAG.open(tmp_path / "idx", llm=llm()) as rag:
        checked = rag.ask(q, config={"answer.check": True})
    assert checked.answer == "1931" and "?designer" in checked.answer_check
    assert checked.usage["answer"]["calls"] == 2
