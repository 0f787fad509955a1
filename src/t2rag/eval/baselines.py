"""The methods T2RAG is compared with: closed book (NOR), BM25 and dense chunk RAG, and IRCoT.

Every method turns a question into a ``Prediction`` (answer, retrieved chunks in rank
order, LLM usage per stage) and sees nothing but the question: gold answers stay in the
runner. The chunk methods share one reading prompt (``prompts/read.txt``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from t2rag import prompts
from t2rag.api import T2RAG, read_passages
from t2rag.llm.base import LLM
from t2rag.llm.budget import fit_passages
from t2rag.types import Chunk, Usage

STEP_TOKENS = 96  # one reasoning sentence
ANSWER_MARK = re.compile(r"so the answer is\s*:?\s*", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass
class Prediction:
    answer: str
    retrieved: list[Chunk] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    extra: dict[str, Any] = field(default_factory=dict)
    retrieves: bool = True  # False for closed-book methods: no recall to report


class Method(Protocol):
    name: str

    def predict(self, question: str) -> Prediction: ...


class Retriever(Protocol):
    def retrieve(self, query: str, k: int) -> list[Chunk]: ...


class BM25Retriever:
    """Lexical retrieval over chunk passages (title + text) with ``bm25s``."""

    def __init__(self, chunks: list[Chunk]) -> None:
        import bm25s

        self._bm25s = bm25s
        self.chunks = chunks
        self.model = bm25s.BM25()
        tokens = bm25s.tokenize([c.passage for c in chunks], stopwords="en", show_progress=False)
        self.model.index(tokens, show_progress=False)

    def retrieve(self, query: str, k: int) -> list[Chunk]:
        if not self.chunks:
            return []
        # Query tokens as strings, so the retriever maps them through the corpus vocabulary.
        q = self._bm25s.tokenize([query], stopwords="en", show_progress=False, return_ids=False)
        docs, scores = self.model.retrieve(q, k=min(k, len(self.chunks)), show_progress=False)
        return [self.chunks[int(d)] for d, s in zip(docs[0], scores[0]) if s > 0]


class DenseRetriever:
    """Dense retrieval over the index's chunk vectors (same embedder as T2RAG), through the API."""

    def __init__(self, engine: T2RAG) -> None:
        self.engine = engine

    def retrieve(self, query: str, k: int) -> list[Chunk]:
        return self.engine.search_passages(query, k)


def read(llm: LLM, question: str, chunks: list[Chunk], usage: Usage, max_tokens: int = 256) -> tuple[str, str]:
    """Answer ``question`` from ``chunks`` with the shared reading prompt; (answer, reasoning)."""
    read = read_passages(llm, question, chunks, usage=usage, max_tokens=max_tokens)
    return read.answer, read.reasoning


class NoRetrieval:
    """NOR: closed-book answering with the reading prompt and no passages."""

    def __init__(self, llm: LLM, name: str = "nor") -> None:
        self.llm = llm
        self.name = name

    def predict(self, question: str) -> Prediction:
        usage = Usage()
        answer, reasoning = read(self.llm, question, [], usage)
        return Prediction(answer, [], usage, {"reasoning": reasoning}, retrieves=False)


class ChunkRAG:
    """Single-round RAG: retrieve ``k_retrieve`` chunks (for recall@10), read the top ``k_read``."""

    def __init__(self, name: str, retriever: Retriever, llm: LLM, k_read: int = 5, k_retrieve: int = 10) -> None:
        self.name = name
        self.retriever = retriever
        self.llm = llm
        self.k_read = k_read
        self.k_retrieve = max(k_retrieve, k_read)

    def predict(self, question: str) -> Prediction:
        usage = Usage()
        retrieved = self.retriever.retrieve(question, self.k_retrieve)
        answer, reasoning = read(self.llm, question, retrieved[: self.k_read], usage)
        return Prediction(answer, retrieved, usage, {"reasoning": reasoning})


def first_sentence(text: str) -> str:
    """The one reasoning sentence IRCoT keeps: the first line, cut after its first sentence
    unless it carries the answer marker (an answer may contain dots, e.g. "Dr. No")."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if ANSWER_MARK.search(line):
        return line
    return _SENTENCE_END.split(line, maxsplit=1)[0]


class IRCoT:
    """IRCoT: retrieve with the question, then alternate one reasoning sentence and a
    retrieval with that sentence, up to ``rounds`` times or until "So the answer is";
    then read all passages gathered, in the order they were first retrieved."""

    def __init__(self, retriever: Retriever, llm: LLM, k: int = 5, rounds: int = 3, name: str = "ircot") -> None:
        self.name = name
        self.retriever = retriever
        self.llm = llm
        self.k = k
        self.rounds = rounds

    def _gather(self, pool: dict[str, Chunk], query: str) -> None:
        for c in self.retriever.retrieve(query, self.k):
            pool.setdefault(c.id, c)

    def predict(self, question: str) -> Prediction:
        usage = Usage()
        pool: dict[str, Chunk] = {}
        self._gather(pool, question)
        steps: list[str] = []
        template = prompts.load("ircot_step")
        for _ in range(self.rounds):
            reasoning = " ".join(steps) or "(none yet)"
            messages, _ = fit_passages(
                self.llm, lambda cs: template.render(passages=prompts.numbered_passages(cs), question=question,
                                                     reasoning=reasoning),  # noqa: B023 (called at once)
                list(pool.values()), max_tokens=STEP_TOKENS, stage="ircot_step", usage=usage)
            c = self.llm.complete(messages, max_tokens=STEP_TOKENS, temperature=0.0)
            usage.record("ircot_step", c)
            sentence = first_sentence(c.text)
            if not sentence:
                break
            steps.append(sentence)
            if ANSWER_MARK.search(sentence):
                break
            self._gather(pool, sentence)
        chunks = list(pool.values())
        answer, reasoning = read(self.llm, question, chunks, usage)
        return Prediction(answer, chunks, usage, {"reasoning": reasoning, "steps": steps})
