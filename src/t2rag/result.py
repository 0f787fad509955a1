"""What a query returns: the answer with its provenance, trace and cost, as plain JSON-ready data."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from t2rag.types import Location

Termination = Literal["complete", "early_stop", "max_rounds", "plan_rejected", "last_hop"]
TripleList = list[str]  # [subject, predicate, object]


@dataclass
class ChunkRef:
    """A passage as an answer cites it: its id and title, and where it sits in its document
    (the source as given, pages for paged formats) when the index recorded that."""

    id: str
    title: str
    source: str = ""
    page: int | None = None
    last_page: int | None = None

    def label(self) -> str:
        """``report.pdf, p. 3`` when the location is known, else the title (or the id)."""
        if not self.source:
            return self.title or self.id
        return Location(self.title, self.source, self.page, self.last_page).label()


@dataclass
class PropositionRef:
    """A retrieved proposition: its text, retrieval score and every chunk it came from."""

    id: str
    text: str
    score: float
    chunk_ids: list[str]


@dataclass
class ResolvedFact:
    """A resolved triple, the query triple it started as, and what supports its binding(s)."""

    triple: TripleList
    origin: TripleList
    round: int  # 0: already resolved in the decomposition
    propositions: list[PropositionRef]
    chunks: list[ChunkRef]

    @staticmethod
    def from_dict(d: dict[str, Any]) -> ResolvedFact:
        return ResolvedFact(
            triple=list(d["triple"]),
            origin=list(d["origin"]),
            round=d["round"],
            propositions=[PropositionRef(**p) for p in d["propositions"]],
            chunks=[ChunkRef(**c) for c in d["chunks"]],
        )


@dataclass
class BindingRecord:
    placeholder: str
    value: str
    evidence: list[str]  # proposition ids


@dataclass
class DroppedBinding:
    entry: Any  # what the model wrote, as parsed JSON
    reason: str


@dataclass
class StateSnapshot:
    resolved: list[TripleList]
    searchable: list[TripleList]
    fuzzy: list[TripleList]


@dataclass
class RoundTrace:
    """One round: what was searched and how, what came back, what the model bound."""

    round: int
    mode: Literal["triples", "question", "read"]  # "question": the fuzzy-only fallback; "read": last hop
    searched: list[TripleList]
    queries: list[str]
    before: StateSnapshot
    after: StateSnapshot
    propositions: list[PropositionRef]
    chunks: list[ChunkRef]
    bindings: list[BindingRecord]
    dropped: list[DroppedBinding]
    dropped_invalid: int
    errors: list[str]

    @staticmethod
    def from_dict(d: dict[str, Any]) -> RoundTrace:
        return RoundTrace(
            **{
                **d,
                "before": StateSnapshot(**d["before"]),
                "after": StateSnapshot(**d["after"]),
                "propositions": [PropositionRef(**p) for p in d["propositions"]],
                "chunks": [ChunkRef(**c) for c in d["chunks"]],
                "bindings": [BindingRecord(**b) for b in d["bindings"]],
                "dropped": [DroppedBinding(**x) for x in d["dropped"]],
            }
        )


@dataclass
class DecompositionRecord:
    triples: list[TripleList]
    fallback: bool  # the question itself stood in as the only query
    error: str | None
    problems: list[str] = field(default_factory=list)  # checks still failed after the re-ask


@dataclass
class Timing:
    total_s: float
    llm_s: float
    other_s: float  # everything but LLM calls: embedding, search, parsing, bookkeeping


@dataclass
class Answer:
    """The answer to one question, with everything needed to see how it was reached."""

    question: str
    answer: str
    termination: Termination
    resolved: list[ResolvedFact]
    unresolved: list[TripleList]
    decomposition: DecompositionRecord
    rounds: list[RoundTrace]
    usage: dict[str, Any]  # Usage.to_dict(): per stage and "total"
    timing: Timing
    config: dict[str, Any]
    errors: list[str] = field(default_factory=list)  # every stage's recovered failure, in order
    model: str = ""  # the LLM's name
    prompts: dict[str, str] = field(default_factory=dict)  # prompt name -> hash
    # "facts": resolved triples only; "facts+passages": passages too; "passages": read alone (rejected plan)
    answer_path: str = "facts"
    # The answer check's finding about the first reply, which was asked again ("": it passed)
    answer_check: str = ""
    log_id: int | None = None  # its entry in the index's log of answers (the viewer's permalink)
    answer_chunks: list[ChunkRef] = field(default_factory=list)  # the passages the answer read
    grounding: list[PropositionRef] = field(default_factory=list)  # retrieved for the question itself

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Answer:
        return Answer(
            **{
                **d,
                "resolved": [ResolvedFact.from_dict(r) for r in d["resolved"]],
                "decomposition": DecompositionRecord(**d["decomposition"]),
                "rounds": [RoundTrace.from_dict(r) for r in d["rounds"]],
                "timing": Timing(**d["timing"]),
                "errors": list(d.get("errors", [])),
                "answer_chunks": [ChunkRef(**c) for c in d.get("answer_chunks", [])],
                "grounding": [PropositionRef(**p) for p in d.get("grounding", [])],
            }
        )
