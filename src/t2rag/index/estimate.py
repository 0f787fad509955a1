"""What a build will cost before it starts: extract a small sample of the chunks that still
need the LLM, and scale its calls, tokens and time to all of them. Nothing is written."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from t2rag.config import IndexConfig
from t2rag.index import openie
from t2rag.index.chunking import chunk_document
from t2rag.index.corpus import Document
from t2rag.index.importer import Extraction
from t2rag.index.store import Store
from t2rag.llm.base import LLM, parallelism
from t2rag.types import Chunk, Usage


@dataclass(frozen=True)
class Estimate:
    chunks: int  # chunks the build would send to the LLM
    sampled: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float  # wall time at the sample's pace, one request at a time

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def describe(self, llm_name: str) -> str:
        hours, rest = divmod(int(self.seconds), 3600)
        span = f"{hours} h {rest // 60} min" if hours else f"{rest // 60} min {rest % 60} s"
        return (f"estimate for {llm_name}: {self.chunks} chunks to extract (measured on {self.sampled}): "
                f"about {self.calls:,} LLM calls, {self.prompt_tokens:,} prompt + {self.completion_tokens:,} "
                f"completion tokens, {span} of extraction at one request at a time")


def pending_chunks(docs: list[Document], config: IndexConfig, store: Store | None,
                   imported: dict[str, Extraction] | None = None) -> list[Chunk]:
    """The chunks a build of ``docs`` would extract with the LLM: not in the index's store
    already extracted, and not covered by an imported OpenIE file (chunked as a build would)."""
    imported = imported or {}
    chunks: dict[str, Chunk] = {}
    for d in docs:
        whole = Chunk.make(d.title, d.text)
        if whole.passage in imported or whole.id in imported:
            continue
        for c in chunk_document(d, config.chunk):
            if c.passage not in imported and c.id not in imported:
                chunks.setdefault(c.id, c)
    if store is not None and chunks:
        stored = store.get_chunks(list(chunks))
        unextracted = {c.id for c in store.chunks_without_openie()}
        chunks = {i: c for i, c in chunks.items() if i not in stored or i in unextracted}
    return list(chunks.values())


def estimate_build(chunks: list[Chunk], llm: LLM | Callable[[], LLM], config: IndexConfig,
                   sample: int = 5) -> Estimate:
    """Extract ``sample`` chunks spread over ``chunks`` as the build would (as many at a time as
    the model takes: its decoding slots or a remote server's concurrency) and scale to all of
    them, so ``--parallel 1`` and ``--parallel 2`` can be timed against each other on a machine."""
    if not chunks:
        return Estimate(0, 0, 0, 0, 0, 0.0)
    model = llm if isinstance(llm, LLM) else llm()
    k = max(1, min(sample, len(chunks)))
    picked = [chunks[i * len(chunks) // k] for i in range(k)]
    usage = Usage()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(parallelism(model)) as pool:
        list(pool.map(lambda c: openie.extract(model, c, config.openie, usage), picked))
    per_chunk_s = (time.perf_counter() - t0) / k
    total = usage.total()
    scale = len(chunks) / k
    return Estimate(len(chunks), k, round(total.calls * scale), round(total.prompt_tokens * scale),
                    round(total.completion_tokens * scale), per_chunk_s * len(chunks))
