"""Frozen values that every stage shares: chunks, triples, propositions, completions, usage."""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

_NEAR = re.compile(r"[^\w\s]|\b(the|a|an)\b")


def near_text(text: str) -> str:
    """``text`` up to case, punctuation and articles: how two phrasings of one term compare."""
    return " ".join(_NEAR.sub(" ", text.lower()).split())


def md5_hex(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Chunk:
    """A unit of indexed text. ``passage`` (title + newline + text) is what OpenIE reads."""

    id: str
    title: str
    text: str

    @property
    def passage(self) -> str:
        return f"{self.title}\n{self.text}" if self.title else self.text

    @staticmethod
    def make(title: str, text: str) -> Chunk:
        # Same id scheme as HippoRAG2 ("chunk-" + md5(passage)) so its OpenIE files line up.
        passage = f"{title}\n{text}" if title else text
        return Chunk(id="chunk-" + md5_hex(passage), title=title, text=text)


@dataclass(frozen=True)
class Location:
    """Where a chunk sits in a document: the document's title, its source as given (a path or
    URL), the pages it spans for paged formats (1-based) and its character span in the
    document's extracted text. Indexes built before sources were kept have the title only."""

    doc: str
    source: str = ""
    page: int | None = None
    last_page: int | None = None
    start: int | None = None
    end: int | None = None

    # The stores' column names for the fields after ``doc`` (``end`` is an SQL keyword).
    COLUMNS: ClassVar[tuple[str, ...]] = ("source", "page", "last_page", "span_start", "span_end")

    def row(self) -> tuple[str, int | None, int | None, int | None, int | None]:
        return (self.source, self.page, self.last_page, self.start, self.end)

    def label(self) -> str:
        """``report.pdf, p. 3`` (``pp. 3-4`` across pages); the source or title alone otherwise."""
        where = self.source or self.doc
        if self.page is None:
            return where
        pages = f"p. {self.page}" if self.last_page in (None, self.page) else f"pp. {self.page}-{self.last_page}"
        return f"{where}, {pages}"


@dataclass(frozen=True)
class DocumentSummary:
    """One document of an index: its chunks, where it came from, and how far extraction got."""

    title: str
    chunks: int = 0
    source: str | None = None
    pages: int | None = None  # the last page a chunk is on (paged formats)
    extracted: int = 0  # chunks with an extraction record (failed ones included)
    failed: int = 0

    def status(self) -> str:
        if self.failed:
            return f"{self.failed} of {self.chunks} chunks failed"
        return "extracted" if self.extracted >= self.chunks else f"{self.extracted} of {self.chunks} chunks extracted"


@dataclass(frozen=True)
class Triple:
    subject: str
    predicate: str
    object: str

    def as_list(self) -> list[str]:
        return [self.subject, self.predicate, self.object]


def verbalize(subject: str, predicate: str, obj: str) -> str:
    """Turn triple parts into the one-sentence proposition the index embeds."""
    parts = [" ".join(p.split()) for p in (subject, predicate, obj)]
    return " ".join(p for p in parts if p)


@dataclass(frozen=True)
class Proposition:
    id: str
    text: str
    triple: Triple

    @staticmethod
    def from_triple(triple: Triple) -> Proposition:
        text = verbalize(triple.subject, triple.predicate, triple.object)
        return Proposition(id="prop-" + md5_hex(text.lower()), text=text, triple=triple)


Message = dict[str, str]


@dataclass(frozen=True)
class PropositionHit:
    """A proposition found by a search, with every chunk it came from."""

    id: str
    text: str
    triple: Triple
    chunk_ids: tuple[str, ...]
    score: float = 0.0


@dataclass(frozen=True)
class OpenIERecord:
    """One chunk's extraction as a store keeps it: where it came from, the raw reply, the error."""

    chunk_id: str
    source: str
    raw: str | None
    error: str | None
    entities: list[str]
    triples: list[Triple]
    dropped: int = 0  # items of the reply or file dropped as malformed, junk or duplicate


@dataclass(frozen=True)
class Completion:
    """One LLM reply. ``parsed`` is set when a JSON schema was requested and the text parsed."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    cached: bool = False
    parsed: Any = None
    model: str = ""
    cached_prompt_tokens: int = 0


@dataclass
class StageUsage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    cached_prompt_tokens: int = 0
    wall_s: float = 0.0
    passages_trimmed: int = 0  # passages left out or cut to fit the model's context

    def add(self, other: StageUsage) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cache_hits += other.cache_hits
        self.cached_prompt_tokens += other.cached_prompt_tokens
        self.wall_s += other.wall_s
        self.passages_trimmed += other.passages_trimmed


@dataclass
class Usage:
    """LLM usage aggregated per stage (openie, decompose, resolve, answer, ...); thread-safe."""

    stages: dict[str, StageUsage] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, stage: str, c: Completion) -> None:
        with self._lock:
            s = self.stages.setdefault(stage, StageUsage())
            s.calls += 1
            s.prompt_tokens += c.prompt_tokens
            s.completion_tokens += c.completion_tokens
            s.cache_hits += int(c.cached)
            s.cached_prompt_tokens += c.cached_prompt_tokens
            s.wall_s += c.wall_s

    def note_trimmed(self, stage: str, passages: int) -> None:
        with self._lock:
            self.stages.setdefault(stage, StageUsage()).passages_trimmed += passages

    def merge(self, other: Usage) -> None:
        with self._lock:
            for name, s in other.stages.items():
                self.stages.setdefault(name, StageUsage()).add(s)

    def total(self) -> StageUsage:
        t = StageUsage()
        for s in self.stages.values():
            t.add(s)
        return t

    def to_dict(self) -> dict[str, Any]:
        out = {name: asdict(s) for name, s in sorted(self.stages.items())}
        out["total"] = asdict(self.total())
        return out

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Usage:
        u = Usage()
        for name, s in d.items():
            if name != "total":
                u.stages[name] = StageUsage(**s)
        return u
