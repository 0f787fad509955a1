"""Helpers for the benchmarks that replay committed runs' retrieval without a model."""

from __future__ import annotations

import argparse
import json
from typing import Any

from t2rag.api import T2RAG
from t2rag.index import TripleIndex
from t2rag.query.config import QueryConfig
from t2rag.query.engine import search_plan
from t2rag.query.retrieve import Evidence
from t2rag.query.state import QueryTriple, TrackedTriple, initial_state


def arguments(doc: str) -> argparse.ArgumentParser:
    """The options every replay takes: the dataset, its folder, the index and the committed predictions."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--predictions", required=True)
    return ap


def open_run(index: str, predictions: str) -> tuple[T2RAG, list[dict[str, Any]]]:
    """The index, for retrieval only (no model), and the committed prediction rows."""
    rows = [json.loads(line) for line in open(predictions)]
    return T2RAG(TripleIndex.open(index), llm=None), rows  # type: ignore[arg-type]  # retrieval only


def first_round(
    rag: T2RAG, question: str, plan: list[list[str]], settings: dict[str, Any] | None = None,
) -> tuple[tuple[TrackedTriple, ...], Evidence]:
    """The triples a plan's first round searches and what that round retrieves, as the run did
    (``settings``: dotted query settings to change); nothing when the round would search with
    the question instead (no triple is searchable)."""
    mode, searched, queries = search_plan(initial_state([QueryTriple(*t) for t in plan]), question)
    if mode != "triples":
        return (), Evidence()
    c = QueryConfig.from_dict(settings or {})
    return searched, rag.retriever.search(queries, c.retrieve, k_chunks=c.k_chunks, max_facts=c.resolve.facts or None)
