"""Structured decomposition: one LLM call turns a question into query triples with placeholders."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from t2rag.errors import ParseError
from t2rag.llm.base import LLM
from t2rag.llm.structured import ask_json
from t2rag.prompts import load
from t2rag.query.state import QueryTriple, canonical, is_placeholder
from t2rag.types import Usage

PROMPT = "decompose"
MAX_TRIPLES = 8  # a factoid question needs a handful; more is a runaway reply

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "triples": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_TRIPLES,
            "items": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3},
        }
    },
    "required": ["triples"],
}

ANSWER_PLACEHOLDER = "?answer"


@dataclass(frozen=True)
class Decomposition:
    """The query triples, and whether the question itself had to stand in as the query."""

    triples: tuple[QueryTriple, ...]
    fallback: bool = False
    error: str | None = None


def question_triple(question: str) -> QueryTriple:
    """The whole question as one searchable query: its text is the query proposition."""
    return QueryTriple(" ".join(question.split()), "", ANSWER_PLACEHOLDER)


def _parts(item: Any) -> list[str]:
    if isinstance(item, dict):  # tolerate {"subject": .., "predicate": .., "object": ..}
        item = [item.get("subject"), item.get("predicate"), item.get("object")]
    if not isinstance(item, list) or len(item) != 3:
        raise ValueError(f"a triple must have 3 parts, got {item!r}"[:120])
    if not all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in item):
        raise ValueError(f"triple parts must be text, got {item!r}"[:120])
    return [" ".join(str(x).split()) for x in item]


def parse_triples(data: Any) -> list[QueryTriple]:
    """Turn the model's JSON into query triples; raises ValueError on a shape worth re-asking."""
    items = data.get("triples") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise ValueError("expected a non-empty 'triples' list")
    triples = []
    for item in items[:MAX_TRIPLES]:
        s, p, o = _parts(item)
        if not (s or o):
            raise ValueError("a triple has neither subject nor object")
        triples.append(QueryTriple(s, p, o))
    # A small model may repeat a triple verbatim; one copy is searched and resolved once.
    return list(dict.fromkeys(name_placeholders(triples)))


def name_placeholders(triples: list[QueryTriple]) -> list[QueryTriple]:
    """Canonicalize placeholder names; give each bare ``?`` a fresh unique name."""
    taken = {canonical(t) for q in triples for t in q.terms() if is_placeholder(t)}
    counter = 0

    def fresh() -> str:
        nonlocal counter
        while True:
            counter += 1
            name = f"?unknown{counter}"
            if name not in taken:
                taken.add(name)
                return name

    def fix(term: str) -> str:
        if not is_placeholder(term):
            return term
        return fresh() if term.strip() == "?" else canonical(term)

    return [QueryTriple(fix(q.subject), fix(q.predicate), fix(q.object)) for q in triples]


def decompose(
    llm: LLM, question: str, *, usage: Usage | None = None, max_tokens: int = 512
) -> Decomposition:
    """Decompose ``question``; on unusable output (after one re-ask) fall back to the question.

    A decomposition without any unknown (a claim to verify) also gets the question as a
    query, so some evidence is retrieved before answering."""
    messages = load(PROMPT).render(question=question.strip())
    try:
        triples, _ = ask_json(
            llm, messages, SCHEMA, parse_triples, stage="decompose", usage=usage, max_tokens=max_tokens
        )
    except ParseError as e:
        return Decomposition((question_triple(question),), fallback=True, error=str(e))
    if not any(t.placeholders for t in triples):
        triples.append(question_triple(question))
    return Decomposition(tuple(triples))
