"""OpenIE: the LLM extracts (subject, predicate, object) triples from one chunk."""

from __future__ import annotations

import json
from typing import Any

from t2rag import prompts
from t2rag.config import OpenIEConfig
from t2rag.errors import ParseError
from t2rag.index.importer import clean_triples_counted
from t2rag.llm.base import LLM
from t2rag.llm.structured import ask_json, scalar_text
from t2rag.types import Chunk, Completion, OpenIERecord, Triple, Usage

STAGE = "openie"
PROMPTS = ["openie_entities", "openie_triples", "openie_single"]

# Bounds on the reply, enforced by constrained decoding where the backend has it (llama.cpp):
# a small model that loops on one triple, or copies a whole sentence into a predicate, stops
# at the bound with valid JSON instead of running to the token limit. The item bound grows
# with the chunk (one triple per ~4 words is far more than any real extraction yields).
MAX_CHARS = 100
MIN_ITEM_BOUND = 16
MAX_ENTITIES = 1_000  # a reply without constrained decoding is cut here


def item_bound(chunk: Chunk) -> int:
    return max(MIN_ITEM_BOUND, len(chunk.passage.split()) // 4)


def entity_schema(max_items: int) -> dict[str, Any]:
    item = {"type": "string", "maxLength": MAX_CHARS}
    return {
        "type": "object",
        "properties": {"entities": {"type": "array", "items": item, "maxItems": max_items}},
        "required": ["entities"],
    }


def triple_schema(max_items: int) -> dict[str, Any]:
    part = {"type": "string", "maxLength": MAX_CHARS}
    triple = {"type": "array", "items": part, "minItems": 3, "maxItems": 3}
    return {
        "type": "object",
        "properties": {"triples": {"type": "array", "items": triple, "maxItems": max_items}},
        "required": ["triples"],
    }


def _entities(data: Any) -> list[str]:
    items = data["entities"] if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError("'entities' is not a list")
    names = (scalar_text(e) for e in items[:MAX_ENTITIES])
    return list(dict.fromkeys(n[:MAX_CHARS] for n in names if n))


def _triples(data: Any) -> tuple[list[Triple], int]:
    items = data["triples"] if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError("'triples' is not a list")
    return clean_triples_counted(items)


def _raw(completions: list[Completion]) -> str:
    return "\n---\n".join(c.text for c in completions)


def extract(llm: LLM, chunk: Chunk, cfg: OpenIEConfig, usage: Usage | None = None) -> OpenIERecord:
    """Extract one chunk's triples. Parse failures are recorded, not raised; backend
    failures (dead server, bad key) propagate so the build stops with what it committed."""
    completions: list[Completion] = []
    entities: list[str] = []
    bound = item_bound(chunk)
    try:
        if cfg.mode == "two_pass":
            msgs = prompts.load("openie_entities").render(passage=chunk.passage)
            entities, cs = ask_json(llm, msgs, entity_schema(bound), _entities, stage=STAGE, usage=usage,
                                    max_tokens=cfg.max_tokens, salvage=True)
            completions += cs
            msgs = prompts.load("openie_triples").render(passage=chunk.passage, entities=json.dumps(entities))
        else:
            msgs = prompts.load("openie_single").render(passage=chunk.passage)
        (triples, dropped), cs = ask_json(llm, msgs, triple_schema(bound), _triples, stage=STAGE, usage=usage,
                                          max_tokens=cfg.max_tokens, salvage=True)
        completions += cs
    except ParseError as e:
        raw = _raw(completions) if completions else e.raw
        if e.raw and e.raw not in raw:
            raw = f"{raw}\n---\n{e.raw}" if raw else e.raw
        return OpenIERecord(chunk.id, f"llm:{llm.name}", raw, str(e), entities, [])
    return OpenIERecord(chunk.id, f"llm:{llm.name}", _raw(completions), None, entities, triples, dropped)


def records_to_forget(*, everything: bool, only_unextracted: bool) -> str | None:
    """The SQL condition (on the ``openie`` table, the same in every store) selecting the records
    a run drops to extract their chunks again: every failed one (``--retry-failed``), or those
    recorded as not extracted (an index built with ``--llm none``, now given an LLM); None for none."""
    return "error IS NOT NULL" if everything else "source = 'none'" if only_unextracted else None
