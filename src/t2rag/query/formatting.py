"""How the query prompts show triples and passages to the model (one place, so every prompt agrees)."""

from __future__ import annotations

from collections.abc import Sequence

from t2rag.query.state import TrackedTriple
from t2rag.types import Chunk


def format_triples(triples: Sequence[TrackedTriple], note_fuzzy: bool = False) -> str:
    lines = []
    for t in triples:
        extra = "  (several unknowns)" if note_fuzzy and t.current.kind == "fuzzy" else ""
        lines.append(f"- {t.current}{extra}")
    return "\n".join(lines) or "(none)"


def format_passages(chunks: Sequence[Chunk]) -> str:
    return "\n\n".join(f"(P{i}) {c.passage}" for i, c in enumerate(chunks, 1))

