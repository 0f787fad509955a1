"""The public entry point: open an index with an LLM, then ask questions."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from t2rag.answer_log import AnswerLog
from t2rag.embed.base import Embedder
from t2rag.errors import InputError
from t2rag.index.builder import TripleIndex
from t2rag.index.corpus import has_surrogates
from t2rag.llm.base import LLM, parallelism
from t2rag.llm.registry import DEFAULT_LLM, get_llm, with_cache
from t2rag.query.config import QueryConfig
from t2rag.query.engine import PROMPTS, answer_question
from t2rag.query.events import EventSink
from t2rag.query.retrieve import Retriever
from t2rag.query.synthesize import read_passages
from t2rag.result import Answer
from t2rag.types import Chunk

__all__ = ["T2RAG", "QueryConfig", "check_question", "prompt_versions", "query_config", "read_passages"]

MAX_QUESTION_CHARS = 4_000  # a question, not a document: longer ones are refused, not truncated


def check_question(question: str) -> str:
    """The question with its whitespace normalized; InputError when empty or too long."""
    if not isinstance(question, str) or not question.strip():
        raise InputError("the question is empty")
    if has_surrogates(question):
        raise InputError("the question is not valid text (undecodable bytes or lone surrogates)")
    if len(question) > MAX_QUESTION_CHARS:
        raise InputError(f"the question is {len(question):,} characters; the limit is {MAX_QUESTION_CHARS:,}")
    return " ".join(question.split())


def prompt_versions() -> dict[str, str]:
    """The version (hash) of every prompt a question's answer depends on, as ``Answer.prompts``."""
    from t2rag.prompts import prompt_hashes
    from t2rag.query.decompose import EXAMPLES

    return prompt_hashes(PROMPTS, data=(EXAMPLES,))


def query_config(config: QueryConfig | dict[str, Any] | None) -> QueryConfig:
    if config is None:
        return QueryConfig()
    return config if isinstance(config, QueryConfig) else QueryConfig.from_dict(config)


class T2RAG:
    """Question answering over one index. Safe to share between threads: ``ask_many`` runs
    questions concurrently (LLM calls overlap; retrieval takes turns)."""

    def __init__(self, index: TripleIndex, llm: LLM, log: AnswerLog | None = None) -> None:
        self.index = index
        self.llm = llm
        self.retriever = Retriever(index.store, index.embedder)
        self.log = log  # every answer is recorded here (``t2rag logs``), when given

    @classmethod
    def open(
        cls,
        directory: str | Path,
        *,
        llm: str | LLM = DEFAULT_LLM,
        embedder: Embedder | str | None = None,
        cache: bool | str | Path = False,
        log: bool = True,
    ) -> T2RAG:
        """Open the index at ``directory`` read-only. ``cache=True`` keeps LLM replies in
        ``default_llm_cache()``; a path puts the cache there instead. ``log`` records every
        answer beside the index (``t2rag.answer_log``; ``T2RAG_NO_LOG=1`` turns it off too)."""
        model = get_llm(llm, cache=cache) if isinstance(llm, str) else with_cache(llm, cache)
        index = TripleIndex.open(directory, embedder=embedder)
        return cls(index, model, AnswerLog.open(index.location) if log else None)

    def ask(
        self, question: str, config: QueryConfig | dict[str, Any] | None = None, *,
        on_event: EventSink | None = None, via: str = "api",
    ) -> Answer:
        """Answer ``question``; ``on_event`` (if given) is called with each ``QueryEvent`` as the
        engine works: decomposition, each round's search, evidence and bindings, the answer.
        ``via`` names the door it came through in the log of answers."""
        answer = answer_question(check_question(question), self.llm, self.retriever, query_config(config), on_event)
        answer.log_id = self.record(answer, via)
        return answer

    def record(self, answer: Answer, via: str) -> int | None:
        """Add ``answer`` to the log of answers (when there is one); returns its entry id."""
        return self.log.record(answer, via) if self.log is not None else None

    def ask_many(
        self,
        questions: list[str],
        config: QueryConfig | dict[str, Any] | None = None,
        *,
        concurrency: int | None = None,
        on_answer: Callable[[int, Answer], None] | None = None,
        via: str = "api",
    ) -> list[Answer]:
        """Answer ``questions`` in order, at most ``concurrency`` at a time (default: what the
        LLM backend benefits from). ``on_answer(i, answer)`` is called as each one finishes,
        one call at a time."""
        cfg = query_config(config)
        workers = max(1, concurrency or parallelism(self.llm))
        lock = threading.Lock()  # callbacks never run concurrently

        def one(i: int) -> Answer:
            answer = answer_question(check_question(questions[i]), self.llm, self.retriever, cfg)
            answer.log_id = self.record(answer, via)
            if on_answer is not None:
                with lock:
                    on_answer(i, answer)
            return answer

        if workers == 1:
            return [one(i) for i in range(len(questions))]
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(one, range(len(questions))))

    def search_facts(self, query: str, k: int = 10) -> list[dict[str, Any]]:
        """The ``k`` facts (propositions) nearest ``query``, dense and BM25 rankings fused, best
        first, each with its source passages (id, title, citation). No LLM call. A fact whose
        passages another writer deleted between the two reads is left out."""
        ev = self.retriever.retrieve([check_question(query)], k_chunks=k, top_m=max(50, k), hybrid=True,
                                     max_facts=k)
        ids = {c for p in ev.propositions for c in p.chunk_ids}
        titles = {c.id: c.title for c in self.retriever.chunks(ids).values()}
        places = self.retriever.locations(ids)
        facts = []
        for p in ev.propositions:
            sources = [{"id": c, "title": titles[c], "cited_as": places[c].label() if c in places else titles[c]}
                       for c in p.chunk_ids if c in titles]
            if sources:
                facts.append({"text": p.text, "score": round(p.score, 6), "triple": p.triple.as_list(),
                              "sources": sources})
        return facts

    def passages(self, ids: list[str]) -> list[Chunk]:
        """The passages with these chunk ids (as an Answer cites them), in the order asked;
        unknown ids are left out."""
        found = self.retriever.chunks(ids)
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def search_passages(self, query: str, k: int) -> list[Chunk]:
        """The ``k`` passages whose own embedding is nearest the query's (dense chunk search,
        as chunk RAG retrieves), best first."""
        hits = self.index.store.search_chunks(self.index.embedder.embed([query]), k)[0]
        return self.passages([cid for cid, _ in hits])

    def iter_passages(self) -> Iterator[Chunk]:
        """Every passage (chunk) of the index, in the order it was added."""
        return self.index.store.iter_chunks()

    def close(self) -> None:
        if self.log is not None:
            self.log.close()
        self.index.close()

    def __enter__(self) -> T2RAG:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
