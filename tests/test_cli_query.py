"""The ask command: readable answers with sources, --trace, --json, resumable batch answering."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import t2rag.cli.common
from conftest import ANSWER_PROMPT
from t2rag.cli import main
from t2rag.embed.hashing import HashingEmbedder
from t2rag.index import Document, TripleIndex
from t2rag.index.importer import Extraction
from t2rag.llm.scripted import ScriptedLLM
from t2rag.types import Triple


def scripted() -> ScriptedLLM:
    return ScriptedLLM(
        rules=[
            ("Placeholders to fill", {"bindings": [{"placeholder": "?answer", "value": "Alpha", "evidence": [1]}]}),
            (ANSWER_PROMPT, {"answer": "Alpha"}),
        ],
        default={"triples": [["?answer", "is in", "Borduria"]]},
    )


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    docs = [Document("Alpha", "Alpha is a town in Borduria."), Document("Beta", "Beta is a river.")]
    imported = {"Alpha\nAlpha is a town in Borduria.": Extraction([], [Triple("Alpha", "is a town in", "Borduria")]),
                "Beta\nBeta is a river.": Extraction([], [Triple("Beta", "is a", "river")])}
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        ix.add(docs, imported=imported)
    llm = scripted()
    monkeypatch.setattr(t2rag.cli.common, "llm_from_args", lambda args, manifest=None: llm)
    return tmp_path / "ix"


# The one-triple plan of these tests would be a last-hop read; they show a resolve call's output.
RESOLVE = ["--set", "answer.read_last_hop=false"]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_ask_prints_answer_facts_and_sources(index: Path, capsys: Any) -> None:
    code, out, _ = run(["ask", str(index), "Which town is in Borduria?", *RESOLVE], capsys)
    assert code == 0
    assert "A: Alpha" in out and "(Alpha | is in | Borduria)  [Alpha]" in out and "[complete;" in out


def test_ask_trace_and_json(index: Path, capsys: Any) -> None:
    code, out, _ = run(["ask", str(index), "Which town is in Borduria?", "--trace", *RESOLVE], capsys)
    assert code == 0 and "Round 1" in out and "bound ?answer = Alpha" in out and "query: is in Borduria" in out
    code, out, _ = run(["ask", str(index), "Which town is in Borduria?", "--json", *RESOLVE], capsys)
    d = json.loads(out)
    assert d["answer"] == "Alpha" and d["termination"] == "complete" and d["usage"]["total"]["calls"] == 3


def test_ask_questions_file_is_resumable(index: Path, tmp_path: Path, capsys: Any) -> None:
    qfile = tmp_path / "q.json"
    qfile.write_text(json.dumps([{"_id": "a", "question": "Which town?"}, "Which river?"]))
    out_file = tmp_path / "answers.jsonl"
    code, out, _ = run(["ask", str(index), "--questions", str(qfile), "--out", str(out_file), "-q"], capsys)
    assert code == 0 and "answered 2 questions" in out
    with out_file.open("a") as f:
        f.write('{"id": "torn')  # a line cut short by a kill
    code, out, _ = run(["ask", str(index), "--questions", str(qfile), "--out", str(out_file), "-q"], capsys)
    assert code == 0 and "answered 0 questions (2 already" in out
    # a disk that filled mid-line: the second answer is half written; the rerun repairs the tail
    lines = out_file.read_text().splitlines()
    out_file.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2])
    code, out, _ = run(["ask", str(index), "--questions", str(qfile), "--out", str(out_file), "-q"], capsys)
    assert code == 0 and "answered 1 questions (1 already" in out
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]  # every line parses
    assert sorted(r["id"] for r in rows) == ["1", "a"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [([], "give either a QUESTION or --questions"), (["--questions", "x.json"], "--questions needs --out")],
)
def test_ask_argument_errors(index: Path, capsys: Any, extra: list[str], message: str) -> None:
    code, _, err = run(["ask", str(index), *extra], capsys)
    assert code == 2 and message in err  # usage errors exit 2, as argparse does


def test_ask_missing_index(tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(t2rag.cli.common, "llm_from_args", lambda args, manifest=None: scripted())
    code, _, err = run(["ask", str(tmp_path / "nope"), "q"], capsys)
    assert code == 1 and "no T2RAG index" in err


def test_ask_set_overrides_any_query_config_field(index: Path, capsys: Any) -> None:
    code, out, _ = run(["ask", str(index), "Which town is in Borduria?", "--json", "--set", "retrieve.hybrid=false",
                        "--set", "answer.passages=2"], capsys)
    d = json.loads(out)
    assert code == 0 and d["config"]["retrieve"]["hybrid"] is False and d["config"]["answer"]["passages"] == 2
    code, _, err = run(["ask", str(index), "Which town is in Borduria?", "--set", "hybird=false"], capsys)
    assert code != 0 and "unknown query setting(s): hybird" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(["ask", str(index), "Which town is in Borduria?", "--set", "hybrid=false"], capsys)
    assert code != 0 and "'hybrid' is now 'retrieve.hybrid'" in err  # version 0.1's flat key names its successor
    code, _, err = run(["ask", str(index), "Which town is in Borduria?", "--set", "rounds"], capsys)
    assert code == 2 and "--set expects KEY=VALUE" in err


def test_ask_reports_each_step_on_stderr_unless_quiet(index: Path, capsys: Any) -> None:
    code, out, err = run(["ask", str(index), "Which town is in Borduria?", *RESOLVE], capsys)
    lines = err.strip().splitlines()
    assert code == 0 and lines[0].startswith("decomposed into 1 triple(s)") and "round 1: searching" in lines[1]
    assert "?answer = Alpha" in err and lines[-1].startswith("answer (complete") and "A: Alpha" in out
    code, _, err = run(["ask", str(index), "Which town is in Borduria?", "-q"], capsys)
    assert code == 0 and err == ""


def test_a_bad_question_in_a_batch_is_recorded_and_the_rest_answered(index: Path, tmp_path: Path, capsys: Any) -> None:
    qfile = tmp_path / "q.jsonl"
    rows = [{"id": "a", "question": "Which town?"}, {"id": "b", "question": "  "},
            {"id": "c", "question": "Which town\u2028is in Borduria?"}]  # a raw U+2028 inside a string
    qfile.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    out_file = tmp_path / "answers.jsonl"
    code, out, _ = run(["ask", str(index), "--questions", str(qfile), "--out", str(out_file), "-q"], capsys)
    assert code == 0 and "answered 2 questions" in out and "1 refused" in out
    got = {r["id"]: r for r in map(json.loads, out_file.read_text().splitlines())}
    assert set(got) == {"a", "b", "c"} and "empty" in got["b"]["error"] and got["c"]["answer"]


def test_a_huge_integer_in_a_questions_file_is_one_line(index: Path, tmp_path: Path, capsys: Any) -> None:
    qfile = tmp_path / "q.json"
    qfile.write_text('[{"question": "Which town?", "n": ' + "9" * 5000 + "}]")
    code, _, err = run(["ask", str(index), "--questions", str(qfile), "--out", str(tmp_path / "o.jsonl")], capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1 and "out of range" in err
