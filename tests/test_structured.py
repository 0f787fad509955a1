"""The parse point: tolerant JSON parsing and the bounded re-ask."""

from __future__ import annotations

import pytest

from t2rag.errors import ParseError
from t2rag.llm import ScriptedLLM, ask_json, parse_json_lenient
from t2rag.llm.structured import salvage_truncated
from t2rag.types import Usage

GOOD = {"triples": [["a", "b", "c"]]}


@pytest.mark.parametrize(
    "text",
    [
        '{"triples": [["a", "b", "c"]]}',
        '```json\n{"triples": [["a", "b", "c"]]}\n```',
        'Sure! Here it is: {"triples": [["a", "b", "c"]]} Hope that helps.',
        '{"triples": [["a", "b", "c"],]}',
        '```\n{"triples": [["a", "b", "c"]],}\n```',
        'noise {not json} then {"triples": [["a", "b", "c"]]}',
        'He said "here it is: {"triples": [["a", "b", "c"]]}',
    ],
)
def test_lenient_parser_recovers_json(text: str) -> None:
    assert parse_json_lenient(text) == GOOD


@pytest.mark.parametrize("text", ["", "no json here", "{'triples': [('a','b','c')]}", '{"triples": [', "[1, 2"])
def test_lenient_parser_rejects_garbage_with_raw_text(text: str) -> None:
    with pytest.raises(ParseError) as e:
        parse_json_lenient(text)
    assert e.value.raw == text


def test_model_output_is_never_evaluated() -> None:
    with pytest.raises(ParseError):
        parse_json_lenient("__import__('os').system('echo pwned')")


def _convert(d: object) -> list[list[str]]:
    assert isinstance(d, dict)
    return d["triples"]


def test_reask_once_then_succeed_and_account_usage() -> None:
    llm = ScriptedLLM(replies=["garbage", GOOD])
    usage = Usage()
    value, completions = ask_json(llm, [{"role": "user", "content": "x"}], {}, _convert, stage="openie", usage=usage)
    assert value == [["a", "b", "c"]]
    assert len(completions) == 2 and usage.stages["openie"].calls == 2
    assert "could not be used" in llm.calls[1]["messages"][-1]["content"]


def test_second_failure_raises_with_last_raw() -> None:
    llm = ScriptedLLM(replies=["garbage", '{"wrong": 1}'])
    with pytest.raises(ParseError) as e:
        ask_json(llm, [{"role": "user", "content": "x"}], {}, _convert, stage="s")
    assert e.value.raw == '{"wrong": 1}'
    assert len(llm.calls) == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"triples": [["a", "b", "c"], ["d", "e', {"triples": [["a", "b", "c"], ["d"]]}),
        ('{"triples": [["a", "b", "c"], [', {"triples": [["a", "b", "c"]]}),
        ('{"entities": ["x", "y\\"z", "w', {"entities": ["x", 'y"z']}),
        ('Here: {"entities": ["x", "y"]} and more', {"entities": ["x", "y"]}),
        ('{"entities": ["a ] b", "c { d", "e', {"entities": ["a ] b", "c { d"]}),
    ],
)
def test_salvage_keeps_the_finished_items_of_cut_off_json(text: str, expected: object) -> None:
    assert salvage_truncated(text) == expected


@pytest.mark.parametrize("text", ["", "no json", '{"triples": [', '{"a": 1, "b": 2'])
def test_salvage_refuses_when_nothing_finished(text: str) -> None:
    with pytest.raises(ParseError):
        salvage_truncated(text)


def test_salvage_replaces_the_reask_when_asked_for() -> None:
    looping = '{"triples": [["a", "b", "c"], ["a", "b", "c"], ["a", "b'
    llm = ScriptedLLM(replies=[looping, GOOD])
    value, completions = ask_json(llm, [{"role": "user", "content": "x"}], {}, _convert, stage="s", salvage=True)
    assert value[0] == ["a", "b", "c"] and len(value) == 3 and len(completions) == 1
    # Without salvage the same reply is re-asked.
    llm = ScriptedLLM(replies=[looping, GOOD])
    value, completions = ask_json(llm, [{"role": "user", "content": "x"}], {}, _convert, stage="s")
    assert value == [["a", "b", "c"]] and len(completions) == 2
