"""The benchmark runner end to end: resumable runs, the report's files and columns, the CLI."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import fake_openie_reply
from t2rag.cli.bench import add_bench_arguments, bench_main
from t2rag.eval.report import COST_CHART, EM_CHART, TABLE_COLUMNS, render_report
from t2rag.eval.runner import answered_ids, run_bench
from t2rag.llm.scripted import ScriptedLLM

FIXTURES = Path(__file__).parent / "fixtures"
GOLD = {"Blue Door": "Oslo", "Red Hill": "Lisbon", "Green Lake": "Syldavia"}


def _gold_for(text: str) -> str:
    """The gold answer of the question in a prompt (its "Question:" line), else "unknown"."""
    m = re.search(r"Question: (.*)", text)
    question = m.group(1) if m else ""
    return next((a for key, a in GOLD.items() if key in question), "unknown")


def bench_reply(messages: list[dict[str, str]]) -> str:
    """A deterministic stand-in for every prompt the benchmark sends."""
    text = messages[-1]["content"]
    if "Passage:\n" in text:  # OpenIE while indexing
        return fake_openie_reply(messages)
    if "Next sentence:" in text:  # IRCoT step
        return f"So the answer is: {_gold_for(text)}."
    if "Passages:" in text:  # the shared reading prompt
        closed_book = "(no passages" in text
        return json.dumps({"reasoning": "", "answer": "unknown" if closed_book else _gold_for(text)})
    if "Placeholders to fill:" in text:  # T2RAG resolve
        names = sorted(set(re.findall(r"\?\w+", text.split("Retrieved facts:")[0])))
        return json.dumps({"bindings": [{"placeholder": n, "value": _gold_for(text), "evidence": [1]} for n in names]})
    if "Write the answer" in text or "Notes from the search" in text:  # T2RAG synthesis
        return json.dumps({"answer": _gold_for(text)})
    q = text.split("Question:")[-1].strip()  # T2RAG decomposition
    return json.dumps({"triples": [[q.rstrip("?"), "has answer", "?answer"]]})


def scripted() -> ScriptedLLM:
    return ScriptedLLM(default=bench_reply)


def _run(out: Path, llm: ScriptedLLM, methods: str, limit: int | None, **kw: Any) -> dict[str, Any]:
    return run_bench("musique_tiny", FIXTURES, methods, llm, "hashing", None, limit, out, progress=False, **kw)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_resume_answers_only_new_questions(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = scripted()
    _run(out, first, "nor", 2, cache=False)
    assert len(first.calls) == 2
    second = scripted()
    metrics = _run(out, second, "nor", 3, cache=False)
    assert len(second.calls) == 1  # only the third question was asked
    assert [r["id"] for r in _lines(out / "predictions" / "nor.jsonl")] == ["2hop__1", "2hop__2", "2hop__3"]
    assert metrics["methods"]["nor"]["n"] == 3


def test_resume_after_kill_mid_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    asked: list[str] = []

    def dies_on_second(messages: list[dict[str, str]]) -> str:
        asked.append(messages[-1]["content"])
        if len(asked) == 2:
            raise KeyboardInterrupt  # the process is killed while answering question 2
        return bench_reply(messages)

    with pytest.raises(KeyboardInterrupt):
        _run(out, ScriptedLLM(default=dies_on_second), "nor", None, cache=False)
    pred = out / "predictions" / "nor.jsonl"
    assert [r["id"] for r in _lines(pred)] == ["2hop__1"]
    with pred.open("a") as f:
        f.write('{"id": "2hop__2", "answ')  # a torn line, as a kill during write leaves it
    assert answered_ids(pred) == {"2hop__1"}
    again = scripted()
    _run(out, again, "nor", None, cache=False)
    assert len(again.calls) == 2
    assert [r["id"] for r in _lines(pred)] == ["2hop__1", "2hop__2", "2hop__3"]


def test_interrupted_index_build_keeps_its_cost_and_resumes(tmp_path: Path) -> None:
    from t2rag.eval.report import index_cost

    out = tmp_path / "run"
    calls: list[int] = []

    def dies_in_openie(messages: list[dict[str, str]]) -> str:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # stopped while extracting the second chunk
        return bench_reply(messages)

    with pytest.raises(KeyboardInterrupt):
        _run(out, ScriptedLLM(default=dies_in_openie), "t2rag", 1, cache=False)
    (entry,) = json.loads((out / "index.json").read_text())
    assert entry["interrupted"] is True and entry["usage"]["openie"]["calls"] == 2
    again = scripted()
    _run(out, again, "t2rag", 1, cache=False)
    first, second = json.loads((out / "index.json").read_text())
    assert "interrupted" not in second and second["extracted"] == second["counts"]["chunks"] - 1  # the rest only
    cost = index_cost(out)
    assert cost["llm_calls"] == 2 + second["usage"]["openie"]["calls"] and cost["counts"] == second["counts"]
    assert "2 build(s) (1 interrupted, then resumed)" in (out / "report.md").read_text()


def test_llm_cache_serves_a_rerun(tmp_path: Path) -> None:
    _run(tmp_path / "a", scripted(), "nor", 2)
    rerun = scripted()
    metrics = _run(tmp_path / "b", rerun, "nor", 2)  # a new run dir next to the first shares its cache
    assert rerun.calls == [] and metrics["methods"]["nor"]["cache_hits"] == 2


def test_a_run_carries_its_replies_and_replays_on_a_fresh_cache(tmp_path: Path) -> None:
    """The questions' replies are kept in the run directory, each once; a copy of the run on a
    machine without the response cache replays them and asks the model nothing."""
    first, index = tmp_path / "one" / "run", tmp_path / "index"  # the index is shared, as results/indexes is
    _run(first, scripted(), "nor,t2rag", 2, index_dir=index)
    rows = _lines(first / "replies.jsonl")
    assert rows and len({r["key"] for r in rows}) == len(rows)
    _run(first, scripted(), "nor,t2rag", 2, index_dir=index)  # a resume served from the cache adds nothing
    assert _lines(first / "replies.jsonl") == rows
    moved = tmp_path / "two" / "run"  # another machine: the run's replies, no cache, no predictions
    moved.mkdir(parents=True)
    (moved / "replies.jsonl").write_bytes((first / "replies.jsonl").read_bytes())
    with open(moved / "replies.jsonl", "a") as f:
        f.write('{"key": "torn')  # a killed writer's last line is skipped, not fatal
    silent = ScriptedLLM()  # no replies: any request reaching it fails the question
    metrics = _run(moved, silent, "nor,t2rag", 2, index_dir=index)
    assert silent.calls == [] and metrics["methods"]["t2rag"]["errors"] == 0
    ours = {m: _lines(first / "predictions" / f"{m}.jsonl") for m in ("nor", "t2rag")}
    theirs = {m: _lines(moved / "predictions" / f"{m}.jsonl") for m in ("nor", "t2rag")}
    assert {m: [r["answer"] for r in rs] for m, rs in ours.items()} == \
        {m: [r["answer"] for r in rs] for m, rs in theirs.items()}


def test_all_methods_rows_and_metrics(tmp_path: Path) -> None:
    out = tmp_path / "run"
    metrics = _run(out, scripted(), "nor,bm25,standard,ircot,t2rag,t2rag_single,t2rag_nolookback", None)
    m = metrics["methods"]
    assert list(m) == ["nor", "bm25", "standard", "ircot", "t2rag", "t2rag_single", "t2rag_nolookback"]
    assert m["nor"]["em"] == 0.0 and m["nor"]["recall@5"] is None
    for name in ("bm25", "standard", "ircot"):
        assert m[name]["em"] == 1.0, name
        assert m[name]["recall@10"] is not None
    assert m["ircot"]["llm_calls_per_q"] == 2.0  # one step ("So the answer is") + the read
    assert "complete_share" in m["t2rag"] and m["t2rag"]["n"] == 3
    assert metrics["index"]["llm_calls"] > 0  # OpenIE, counted apart from the questions
    row = _lines(out / "predictions" / "t2rag.jsonl")[0]
    for key in ("id", "question", "answer", "gold", "em", "f1", "usage", "termination", "retrieved_titles", "recall"):
        assert key in row
    info = json.loads((out / "run.json").read_text())  # every row names how it was made
    t2 = info["settings"]["t2rag"]
    assert t2["id"] == row["run"]["settings"] and t2["config"]["answer"]["passages"] == 4
    assert "decompose" in t2["prompts"]
    assert row["run"]["commit"] and row["run"]["slots"] >= 1 and info["sessions"][0]["commit"] == row["run"]["commit"]
    assert info["answered"]["t2rag"] == 3 and info["methods"] == list(m)
    std = _lines(out / "predictions" / "standard.jsonl")[0]
    assert std["gold"] == ["Oslo", "Oslo, Norway"] and "total" in std["usage"]
    assert set(std["recall"]) == {"recall@1", "recall@2", "recall@5", "recall@10"}
    report = (out / "report.md").read_text()  # each variant paired against the defaults, labelled by its settings
    assert "## T2RAG ablations" in report and "| t2rag_nolookback (resolve.lookback=False) | 3 | 0 | 0 |" in report


def test_report_files_and_columns(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    _run(a, scripted(), "nor,standard", 3)
    _run(b, scripted(), "nor,bm25", 2)
    for d in (a, b):
        for name in ("report.md", "metrics.json", EM_CHART, COST_CHART, "run.json", "index.json"):
            assert (d / name).is_file(), name
        assert (d / EM_CHART).read_bytes()[:4] == b"\x89PNG"
    header = next(line for line in (a / "report.md").read_text().splitlines() if line.startswith("| method"))
    assert [c.strip() for c in header.strip("|").split("|")] == list(TABLE_COLUMNS)
    text = render_report([a, b], None)
    assert (tmp_path / "compare" / "report.md").read_text() == text
    assert (tmp_path / "compare" / EM_CHART).is_file()
    assert "| run | method |" in text and "bm25" in text and "standard" in text


def _args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_bench_arguments(parser)
    return parser.parse_args(argv)


def test_cli_bench_two_methods(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli-run"
    args = _args(["--dataset", "musique_tiny", "--data-dir", str(FIXTURES), "--methods", "nor,standard",
                  "--llm", "scripted", "--embedder", "hashing", "--limit", "3", "--out", str(out), "-q"])
    args.llm = scripted()
    assert bench_main(args) == 0
    printed = capsys.readouterr().out
    assert "| method |" in printed and "standard" in printed
    assert len(_lines(out / "predictions" / "standard.jsonl")) == 3
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["run"]["methods"] == ["nor", "standard"]
    assert bench_main(_args(["report", str(out)])) == 0
    assert "report.md" not in capsys.readouterr().err


def test_cli_rejects_unknown_method_and_missing_dataset(tmp_path: Path) -> None:
    from t2rag.errors import ConfigError

    with pytest.raises(ConfigError):
        bench_main(_args(["--data-dir", str(FIXTURES)]))
    args = _args(["--dataset", "musique_tiny", "--data-dir", str(FIXTURES), "--methods", "nor,magic",
                  "--out", str(tmp_path / "x"), "-q"])
    args.llm = scripted()
    with pytest.raises(ConfigError, match="magic"):
        bench_main(args)


def test_run_dir_refuses_a_different_model(tmp_path: Path) -> None:
    from t2rag.errors import ConfigError

    _run(tmp_path / "run", scripted(), "nor", 1, cache=False)
    with pytest.raises(ConfigError, match="llm"):
        _run(tmp_path / "run", ScriptedLLM(default=bench_reply, name="other"), "nor", 1, cache=False)


def test_wired_cli_renders_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from t2rag.cli import main

    a, b = tmp_path / "a", tmp_path / "b"
    _run(a, scripted(), "nor", 2)
    _run(b, scripted(), "nor", 2)
    assert main(["bench", "report", str(a), str(b), "--out", str(tmp_path / "cmp")]) == 0
    assert "| run | method |" in capsys.readouterr().out
    assert (tmp_path / "cmp" / COST_CHART).is_file()
    assert main(["bench", "report", str(tmp_path / "missing")]) == 1  # one-line error, not a traceback


def test_a_refused_request_costs_one_question_not_the_run(tmp_path: Path) -> None:
    from t2rag.errors import BackendError, RequestRejected
    from t2rag.eval.baselines import Prediction
    from t2rag.eval.datasets import Sample
    from t2rag.eval.runner import run_method

    class Flaky:
        name = "flaky"

        def predict(self, question: str) -> Prediction:
            if question == "long":
                raise RequestRejected("local:default: request (4628 tokens) exceeds the available context size")
            if question == "dead":
                raise BackendError("connection refused")
            return Prediction("a")

    samples = [Sample(str(i), q, ["a"], []) for i, q in enumerate(["ok", "long", "ok2"])]
    path = tmp_path / "p.jsonl"
    assert run_method(Flaky(), samples, path, progress=False) == 3
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [bool(r.get("error")) for r in rows] == [False, True, False] and "context size" in rows[1]["error"]
    with pytest.raises(BackendError):
        run_method(Flaky(), [Sample("9", "dead", ["a"], [])], tmp_path / "q.jsonl", progress=False)
