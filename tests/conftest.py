"""Shared fixtures: a deterministic OpenIE script, tiny corpora, the shared data folder."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from t2rag.index.corpus import Document
from t2rag.llm.scripted import ScriptedLLM

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


# What marks T2RAG's answer prompt, in either form (facts first, or passages first with notes).
ANSWER_PROMPT = r"Write the answer|Notes from the search"


def passage_of(messages: list[dict[str, str]]) -> str:
    text = messages[-1]["content"]
    m = re.search(r"Passage:\n(.*?)(?:\nEntities:.*)?$", text, re.S)
    return m.group(1).strip() if m else ""


def fake_openie_reply(messages: list[dict[str, str]]) -> str:
    """Deterministic 'extraction': the first capitalised words become entities and triples."""
    passage = passage_of(messages)
    title, _, body = passage.partition("\n")
    words = re.findall(r"[A-Z][a-z]+|\d{4}", body)
    if "Entities:" not in messages[-1]["content"]:
        return json.dumps({"entities": [title, *words[:3]]})
    return json.dumps({"triples": [[title, "mentions", w] for w in words[:3]]})


def openie_llm() -> ScriptedLLM:
    return ScriptedLLM(default=fake_openie_reply)


@pytest.fixture
def docs() -> list[Document]:
    return [
        Document("Alpha", "Alpha is a town in Borduria. It was founded in 1820 by Casimir."),
        Document("Beta", "Beta is a river in Syldavia. It flows through Klow."),
        Document("Gamma", "Gamma is a painter from Klow. Gamma studied in Paris."),
    ]


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.skip("shared data folder not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real PostgreSQL with pgvector (the ``pgserver`` wheel), private to this test session."""
    pgserver = pytest.importorskip("pgserver", reason="pgserver not installed: bash scripts/setup.sh --dev")
    server = pgserver.get_server(tmp_path_factory.mktemp("pgdata"), cleanup_mode="stop")
    yield server
    server.cleanup()


_db_counter = iter(range(1_000_000))


@pytest.fixture
def pg_url(pg_server: Any) -> str:
    """A fresh, empty database on the session's server."""
    name = f"t2rag_test_{next(_db_counter)}"
    pg_server.psql(f"CREATE DATABASE {name};")
    return str(pg_server.get_uri(name))


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    """Where an index lives, once per store backend: a directory, and a PostgreSQL database."""
    if request.param == "sqlite":
        return tmp_path / "idx"
    return str(request.getfixturevalue("pg_url"))
