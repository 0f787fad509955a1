"""Turns the engine's working values (state, evidence, resolutions) into the Answer's plain records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from t2rag.query.resolve import Resolution
from t2rag.query.retrieve import Evidence
from t2rag.query.state import QueryState, TrackedTriple
from t2rag.result import (
    BindingRecord,
    ChunkRef,
    DroppedBinding,
    PropositionRef,
    ResolvedFact,
    RoundTrace,
    StateSnapshot,
)
from t2rag.types import Chunk, PropositionHit


def triples(ts: Sequence[TrackedTriple]) -> list[list[str]]:
    return [t.current.as_list() for t in ts]


def snapshot(state: QueryState) -> StateSnapshot:
    return StateSnapshot(triples(state.resolved), triples(state.searchable), triples(state.fuzzy))


def prop_ref(hit: PropositionHit) -> PropositionRef:
    return PropositionRef(hit.id, hit.text, round(float(hit.score), 6), list(hit.chunk_ids))


def chunk_ref(chunk_id: str, chunks: Mapping[str, Chunk]) -> ChunkRef:
    c = chunks.get(chunk_id)
    return ChunkRef(chunk_id, c.title if c else "")


def round_trace(
    round_no: int,
    mode: str,
    searched: Sequence[TrackedTriple],
    before: QueryState,
    after: QueryState,
    evidence: Evidence,
    resolution: Resolution,
) -> RoundTrace:
    return RoundTrace(
        round=round_no,
        mode="question" if mode == "question" else "read" if mode == "read" else "triples",
        searched=triples(searched),
        queries=list(evidence.queries),
        before=snapshot(before),
        after=snapshot(after),
        propositions=[prop_ref(p) for p in evidence.propositions],
        chunks=[ChunkRef(c.id, c.title) for c in evidence.chunks],
        bindings=[BindingRecord(b.placeholder, b.value, list(b.support.propositions)) for b in resolution.bindings],
        dropped=[DroppedBinding(d.entry, d.reason) for d in resolution.dropped],
        dropped_invalid=len(resolution.dropped),
        errors=[resolution.error] if resolution.error else [],
    )


def resolved_facts(
    state: QueryState, props: Mapping[str, PropositionHit], chunks: Mapping[str, Chunk]
) -> list[ResolvedFact]:
    """Each resolved triple with the propositions and chunks behind the values bound into it."""
    return [
        ResolvedFact(
            triple=t.current.as_list(),
            origin=t.origin.as_list(),
            round=t.round,
            propositions=[prop_ref(props[p]) for p in t.support.propositions if p in props],
            chunks=[chunk_ref(c, chunks) for c in t.support.chunks],
        )
        for t in state.resolved
    ]
