"""The online half: decompose a question into query triples, resolve them in rounds, answer."""

from __future__ import annotations

from t2rag.query.engine import answer_question, stop_reason
from t2rag.query.retrieve import Evidence, Retriever
from t2rag.query.state import QueryState, QueryTriple

__all__ = ["Evidence", "QueryState", "QueryTriple", "Retriever", "answer_question", "stop_reason"]
