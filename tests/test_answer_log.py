"""The log of answers: every door records, `t2rag logs` and /v1/history read it back, on both stores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from t2rag.answer_log import AnswerLog
from t2rag.api import T2RAG
from t2rag.service.served import Service
from test_service import index, replies, serving  # noqa: F401 - shared fixture and helpers


def test_answers_are_logged_and_listed_by_the_cli(index: Path, capsys: Any) -> None:  # noqa: F811
    from t2rag.cli import main

    with T2RAG.open(index, llm=replies()) as rag:
        first = rag.ask("Which town is in Borduria?")
        rag.ask_many(["Which river is in Syldavia?"], via="cli")
    assert main(["logs", str(index)]) == 0
    out = capsys.readouterr().out
    assert out.index("#2") < out.index("#1") and "Q: Which town is in Borduria?" in out and "A: Alpha" in out
    assert " api " in out and " cli " in out
    assert main(["logs", str(index), "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(first.to_dict()))  # the whole Answer
    assert main(["logs", str(index), "1", "--trace"]) == 0 and "Round 1" in capsys.readouterr().out
    assert main(["logs", str(index), "-q", "river", "--json"]) == 0
    assert [e["id"] for e in json.loads(capsys.readouterr().out)] == [2]
    assert main(["logs", str(index), "9"]) == 1 and "no entry 9" in capsys.readouterr().err


def test_logging_can_be_turned_off(index: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    with T2RAG.open(index, llm=replies(), log=False) as rag:
        rag.ask("Which town is in Borduria?")
    monkeypatch.setenv("T2RAG_NO_LOG", "1")
    with T2RAG.open(index, llm=replies()) as rag:
        assert rag.log is None
        rag.ask("Which town is in Borduria?")
    log = AnswerLog(index)
    assert log.entries() == []
    log.close()


def test_rest_history_lists_and_shows_past_answers(index: Path) -> None:  # noqa: F811
    with serving(Service(index, replies())) as url:
        asked = httpx.post(f"{url}/v1/ask", json={"question": "Which town is in Borduria?"}, timeout=30).json()
        history = httpx.get(f"{url}/v1/history").json()
        assert history["logging"] and [e["via"] for e in history["entries"]] == ["rest"]
        entry = httpx.get(f"{url}/v1/history/{history['entries'][0]['id']}").json()
        assert entry["answer"] == asked["answer"] == "Alpha" and entry["rounds"] == asked["rounds"]
        assert httpx.get(f"{url}/v1/history/99").status_code == 404
        assert httpx.get(f"{url}/v1/history", params={"limit": 0}).status_code == 422


def test_the_log_lives_in_the_database_of_a_postgresql_index(pg_url: str) -> None:
    from t2rag.embed.hashing import HashingEmbedder
    from t2rag.index import Document, TripleIndex
    from t2rag.index.importer import Extraction
    from t2rag.types import Triple

    text = "Alpha is a town in Borduria."
    with TripleIndex.create(pg_url, embedder=HashingEmbedder()) as ix:
        ix.add([Document("Alpha", text)],
               imported={f"Alpha\n{text}": Extraction([], [Triple("Alpha", "is a town in", "Borduria")])})
    with T2RAG.open(pg_url, llm=replies()) as rag:
        rag.ask("Which town is in Borduria?", via="mcp")
    log = AnswerLog(pg_url)
    (entry,) = log.entries()
    assert (entry.via, entry.answer) == ("mcp", "Alpha") and log.answer(entry.id).answer == "Alpha"
    log.close()
