"""The query engine end to end on a tiny index, with a scripted LLM: hops, stops, fallbacks, ablations."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import ANSWER_PROMPT
from t2rag.api import T2RAG
from t2rag.embed.hashing import HashingEmbedder
from t2rag.errors import ConfigError
from t2rag.index.builder import TripleIndex
from t2rag.index.corpus import Document
from t2rag.index.importer import Extraction
from t2rag.llm.scripted import ScriptedLLM, Seq
from t2rag.query.config import PAPER
from t2rag.result import Answer
from t2rag.types import Message, Triple

CORPUS: list[tuple[str, str, list[tuple[str, str, str]]]] = [
    ("Inception", "Inception is a 2010 science fiction film directed by Christopher Nolan.",
     [("Inception", "directed by", "Christopher Nolan"), ("Inception", "released in", "2010")]),
    ("Christopher Nolan", "Christopher Nolan is a filmmaker who was born in London.",
     [("Christopher Nolan", "born in", "London")]),
    ("London", "London is the capital of England and lies on the River Thames.",
     [("London", "capital of", "England"), ("River Thames", "flows through", "London")]),
    ("Alien", "Alien is a 1979 horror film directed by Ridley Scott.", [("Alien", "directed by", "Ridley Scott")]),
    ("Ridley Scott", "Ridley Scott was born in South Shields.", [("Ridley Scott", "born in", "South Shields")]),
    ("Tyne", "The River Tyne flows through Newcastle.", [("River Tyne", "flows through", "Newcastle")]),
]

# retrieved fact -> (placeholder, value) the oracle resolver binds when that placeholder is open
FACTS = {
    "Inception directed by Christopher Nolan": ("?director", "Christopher Nolan"),
    "Christopher Nolan born in London": ("?city", "London"),
    "River Thames flows through London": ("?river", "River Thames"),
}

TWO_HOP = {"triples": [["Inception", "directed by", "?director"], ["?director", "born in", "?city"]]}
THREE_HOP = {"triples": [*TWO_HOP["triples"], ["?river", "flows through", "?city"]]}


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("query") / "idx"
    docs = [Document(t, x) for t, x, _ in CORPUS]
    imported = {f"{t}\n{x}": Extraction([], [Triple(*tr) for tr in trs]) for t, x, trs in CORPUS}
    with TripleIndex.create(d, embedder=HashingEmbedder()) as index:
        index.add(docs, imported=imported)
    return d


def oracle(messages: list[Message]) -> str:
    """Binds the placeholders of searchable open triples whose answering fact was retrieved."""
    text = messages[-1]["content"]
    open_part = text.split("Open triples:")[1].split("Placeholders to fill:")[0]
    searchable = "\n".join(line for line in open_part.splitlines() if "several unknowns" not in line)
    bindings = [
        {"placeholder": FACTS[fact][0], "value": FACTS[fact][1], "evidence": [int(n)]}
        for n, fact in re.findall(r"^\[(\d+)\] (.+)$", text, re.M)
        if fact in FACTS and FACTS[fact][0] in searchable
    ]
    return json.dumps({"bindings": bindings})


def scripted(decomposition: Any, resolver: Any = oracle, answer: Any = None, reask: Any = None) -> ScriptedLLM:
    rules: list[tuple[str, Any]] = [
        (r"Retrieved facts:", resolver),
        (ANSWER_PROMPT, answer if answer is not None else {"answer": "London"}),
        (r"could not be used", reask if reask is not None else "still not JSON"),
        (r"(?m)^Question:", decomposition),
    ]
    return ScriptedLLM(rules=rules)


def ask(index_dir: Path, llm: ScriptedLLM, question: str = "Q?", settings: dict[str, Any] | None = None,
        **config: Any) -> Answer:
    """The paper's algorithm (these tests pin its round mechanics) unless ``config`` or the dotted
    ``settings`` say otherwise."""
    with T2RAG.open(index_dir, llm=llm) as rag:
        return rag.ask(question, {**PAPER, **config, **(settings or {})})


def prompts(llm: ScriptedLLM, marker: str) -> list[str]:
    return [c["messages"][-1]["content"] for c in llm.calls if re.search(marker, c["messages"][-1]["content"])]


def test_two_hop_resolves_through_placeholder_binding(index_dir: Path) -> None:
    llm = scripted(TWO_HOP)
    a = ask(index_dir, llm, "Where was the director of Inception born?")
    assert a.termination == "complete" and a.answer == "London"
    r1, r2 = a.rounds
    assert r1.queries == ["Inception directed by"] and r1.mode == "triples"
    assert [(b.placeholder, b.value) for b in r1.bindings] == [("?director", "Christopher Nolan")]
    assert r1.after.searchable == [["Christopher Nolan", "born in", "?city"]] and r1.after.fuzzy == []
    assert r2.queries == ["Christopher Nolan born in"]  # became searchable by the binding
    assert [f.triple for f in a.resolved] == [
        ["Inception", "directed by", "Christopher Nolan"], ["Christopher Nolan", "born in", "London"]]
    last = a.resolved[1]
    assert last.origin == ["?director", "born in", "?city"] and last.round == 2
    assert [p.text for p in last.propositions] == [
        "Inception directed by Christopher Nolan", "Christopher Nolan born in London"]
    assert [c.title for c in last.chunks] == ["Inception", "Christopher Nolan"]
    assert a.unresolved == []
    # natural completion: synthesis sees only the resolved triples
    (synth,) = prompts(llm, ANSWER_PROMPT)
    assert "Christopher Nolan | born in | London" in synth and "Passages" not in synth
    resolve_schemas = [c["schema"] for c in llm.calls if "Retrieved facts:" in c["messages"][-1]["content"]]
    enums = [s["properties"]["bindings"]["items"]["properties"]["placeholder"]["enum"] for s in resolve_schemas]
    assert enums == [["?city", "?director"], ["?city"]]  # constrained decoding names open ones only
    assert {k: v["calls"] for k, v in a.usage.items()} == {"decompose": 1, "resolve": 2, "answer": 1, "total": 4}


def test_three_hop_chain(index_dir: Path) -> None:
    a = ask(index_dir, scripted(THREE_HOP), "Which river flows through the birthplace of Inception's director?")
    assert a.termination == "complete" and len(a.rounds) == 3
    assert [r.queries for r in a.rounds] == [["Inception directed by"], ["Christopher Nolan born in"],
                                             ["flows through London"]]
    assert a.rounds[1].after.fuzzy == [] and a.rounds[0].after.fuzzy == [["?river", "flows through", "?city"]]
    assert a.resolved[-1].triple == ["River Thames", "flows through", "London"]


def test_max_rounds_and_single_round_ablation(index_dir: Path) -> None:
    llm = scripted(THREE_HOP)
    a = ask(index_dir, llm, rounds=2)
    assert a.termination == "max_rounds" and len(a.rounds) == 2
    assert a.unresolved == [["?river", "flows through", "London"]]
    (synth,) = prompts(llm, ANSWER_PROMPT)
    assert "Still unresolved" in synth and "Passages:" in synth  # forced stop: more context
    one = ask(index_dir, scripted(TWO_HOP), rounds=1)
    assert one.termination == "max_rounds" and len(one.rounds) == 1
    assert one.unresolved == [["Christopher Nolan", "born in", "?city"]]


def test_question_query_option_adds_the_question_to_round_one_only(index_dir: Path) -> None:
    q = "Where was the director of Inception born?"
    a = ask(index_dir, scripted(TWO_HOP), q, {"retrieve.with_question": True})
    assert a.termination == "complete" and a.answer == "London"
    assert [r.queries for r in a.rounds] == [["Inception directed by", q], ["Christopher Nolan born in"]]
    assert a.config["retrieve"]["with_question"] is True
    assert ask(index_dir, scripted(TWO_HOP), q).rounds[0].queries == ["Inception directed by"]  # off by default


def test_early_stop_when_searched_triple_stays_unresolved(index_dir: Path) -> None:
    llm = scripted({"triples": [["Inception", "score composed by", "?composer"]]})
    a = ask(index_dir, llm, rounds=3)
    assert a.termination == "early_stop" and len(a.rounds) == 1
    assert a.unresolved == [["Inception", "score composed by", "?composer"]]
    (synth,) = prompts(llm, ANSWER_PROMPT)
    assert "?composer" in synth and "Passages:" in synth
    b = ask(index_dir, scripted({"triples": [["Inception", "score composed by", "?composer"]]}),
            settings={"answer.passages_after_stop": False})
    assert b.termination == "early_stop"


def test_fuzzy_only_falls_back_to_question_embedding(index_dir: Path) -> None:
    q = "Which film was directed by which director?"
    resolver = {"bindings": [{"placeholder": "?film", "value": "Alien", "evidence": [1]},
                             {"placeholder": "?director", "value": "Ridley Scott", "evidence": [1]}]}
    a = ask(index_dir, scripted({"triples": [["?film", "directed by", "?director"]]}, resolver), q)
    assert a.rounds[0].mode == "question" and a.rounds[0].queries == [q] and a.rounds[0].searched == []
    assert a.termination == "complete" and a.resolved[0].triple == ["Alien", "directed by", "Ridley Scott"]


def test_fallback_round_that_binds_nothing_stops_early(index_dir: Path) -> None:
    a = ask(index_dir, scripted({"triples": [["?film", "directed by", "?director"]]}), rounds=3)
    assert a.termination == "early_stop" and [r.mode for r in a.rounds] == ["question"]


def test_searchable_then_question_fallback_for_remaining_fuzzy(index_dir: Path) -> None:
    decomposition = {"triples": [["Inception", "score composed by", "?composer"], ["?x", "lives in", "?y"]]}
    a = ask(index_dir, scripted(decomposition))
    assert [r.mode for r in a.rounds] == ["triples", "question"] and a.termination == "early_stop"


def test_without_the_question_fallback_a_broken_chain_stops_and_reads(index_dir: Path) -> None:
    decomposition = {"triples": [["Inception", "score composed by", "?composer"], ["?x", "lives in", "?y"]]}
    llm = scripted(decomposition)
    a = ask(index_dir, llm, question_fallback=False,
            settings={"answer.passages": 5, "answer.passages_after_stop": True})
    assert [r.mode for r in a.rounds] == ["triples"] and a.termination == "early_stop"
    assert len(prompts(llm, "Retrieved facts:")) == 1 and a.answer_path == "facts+passages"
    fuzzy_only = ask(index_dir, scripted({"triples": [["?film", "directed by", "?director"]]}), question_fallback=False)
    assert fuzzy_only.rounds == [] and fuzzy_only.termination == "early_stop"


def test_malformed_decomposition_reasks_then_uses_the_question(index_dir: Path) -> None:
    llm = scripted("I think the triples are: none")
    a = ask(index_dir, llm, "Where was Christopher Nolan born?")
    assert a.decomposition.fallback and a.decomposition.error
    assert a.decomposition.triples == [["Where was Christopher Nolan born?", "", "?answer"]]
    assert a.usage["decompose"]["calls"] == 2  # one bounded re-ask
    assert a.rounds[0].queries == ["Where was Christopher Nolan born?"]
    assert any(e.startswith("decompose:") for e in a.errors)


def test_decomposition_reask_recovers(index_dir: Path) -> None:
    a = ask(index_dir, scripted("{triples: oops", reask=TWO_HOP))
    assert not a.decomposition.fallback and a.termination == "complete"


def test_empty_decomposition_and_no_placeholder_decomposition(index_dir: Path) -> None:
    a = ask(index_dir, scripted({"triples": []}), "Is London in England?")
    assert a.decomposition.fallback
    b = ask(index_dir, scripted({"triples": [["London", "capital of", "England"]]}), "Is London in England?")
    assert not b.decomposition.fallback and b.decomposition.triples[-1][2] == "?answer"
    assert b.resolved[0].triple == ["London", "capital of", "England"] and b.resolved[0].round == 0


def test_malformed_resolution_binds_nothing_and_is_recorded(index_dir: Path) -> None:
    a = ask(index_dir, scripted(TWO_HOP, resolver="sorry, no JSON here"))
    assert a.rounds[0].bindings == [] and a.rounds[0].errors and a.rounds[0].errors[0].startswith("resolve:")
    # each round re-asked once; the fuzzy triple left gets a question-fallback round, which stalls
    assert [r.mode for r in a.rounds] == ["triples", "question"] and a.usage["resolve"]["calls"] == 4
    assert a.termination == "early_stop" and a.answer == "London"


def test_invalid_bindings_are_dropped_and_counted(index_dir: Path) -> None:
    entries = [
        {"placeholder": "?nope", "value": "X", "evidence": [1]},
        {"placeholder": "?director", "value": "  ", "evidence": [1]},
        {"placeholder": "?director", "value": "?city", "evidence": [1]},
        {"placeholder": "?director", "value": "unknown", "evidence": []},
        "not an object",
        {"placeholder": "director", "value": "Christopher Nolan", "evidence": [1, 99]},
        {"placeholder": "?director", "value": "Ridley Scott", "evidence": [2]},
    ]
    a = ask(index_dir, scripted(TWO_HOP, resolver=Seq({"bindings": entries}, {"bindings": []})))
    r1 = a.rounds[0]
    assert [(b.placeholder, b.value) for b in r1.bindings] == [("?director", "Christopher Nolan")]
    assert len(r1.bindings[0].evidence) == 1  # the out-of-range number is ignored
    assert r1.dropped_invalid == 6 == len(r1.dropped)
    assert "bound twice" in r1.dropped[-1].reason


def test_lookback_ablation_hides_chunk_text(index_dir: Path) -> None:
    on = scripted(TWO_HOP)
    ask(index_dir, on)
    assert "science fiction film" in prompts(on, "Retrieved facts:")[0]  # Inception's chunk text
    off = scripted(TWO_HOP)
    a = ask(index_dir, off, settings={"resolve.lookback": False})
    resolve_prompts = prompts(off, "Retrieved facts:")
    assert resolve_prompts and not any("science fiction" in p or "Source passages" in p for p in resolve_prompts)
    assert a.termination == "complete"


def test_answer_parse_failure_falls_back_to_raw_line(index_dir: Path) -> None:
    a = ask(index_dir, scripted(TWO_HOP, answer='\n  "London"  \nbecause Nolan was born there'))
    assert a.answer == "London" and any(e.startswith("answer:") for e in a.errors)


def test_answer_json_round_trip(index_dir: Path) -> None:
    a = ask(index_dir, scripted(THREE_HOP, resolver=Seq({"bindings": ["junk"]}, oracle)), rounds=2)
    data = json.loads(json.dumps(a.to_dict()))
    assert Answer.from_dict(data) == a
    assert data["timing"]["total_s"] >= data["timing"]["llm_s"] >= 0
    assert data["config"]["rounds"] == 2
    assert data["model"] == "scripted"
    assert set(data["prompts"]) == {"decompose", "decompose_examples", "resolve", "answer", "answer_notes", "read"}


def test_unknown_config_key_is_a_config_error(index_dir: Path) -> None:
    with pytest.raises(ConfigError, match="unknown query setting"):
        ask(index_dir, scripted(TWO_HOP), roundz=2)


def test_ask_many_keeps_order_and_reports(index_dir: Path) -> None:
    seen: list[int] = []
    llm = scripted(TWO_HOP)
    with T2RAG.open(index_dir, llm=llm) as rag:
        answers = rag.ask_many(["q0", "q1", "q2"], {**PAPER, "rounds": 3}, concurrency=2,
                               on_answer=lambda i, _a: seen.append(i))
    assert [x.question for x in answers] == ["q0", "q1", "q2"] and sorted(seen) == [0, 1, 2]
    assert all(x.termination == "complete" for x in answers)


def test_open_with_cache(index_dir: Path, tmp_path: Path) -> None:
    make: Callable[[], ScriptedLLM] = lambda: scripted(TWO_HOP)  # noqa: E731
    with T2RAG.open(index_dir, llm=make(), cache=tmp_path / "c.sqlite") as rag:
        first = rag.ask("Where was the director of Inception born?")
    with T2RAG.open(index_dir, llm=ScriptedLLM(), cache=tmp_path / "c.sqlite") as rag:
        again = rag.ask("Where was the director of Inception born?")
    # decompose, one resolve, the answer (the second hop is read by the answer: read_last_hop)
    assert again.answer == first.answer and again.usage["total"]["cache_hits"] == 3
