"""The served engine: one index and one LLM shared by every request, admission control, and
document jobs run by a single writer in the background."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

from t2rag.answer_log import AnswerLog
from t2rag.api import T2RAG
from t2rag.errors import IndexLockedError
from t2rag.index.builder import TripleIndex
from t2rag.index.corpus import Document
from t2rag.index.store import is_url
from t2rag.llm.base import LLM, parallelism
from t2rag.query.events import EventSink
from t2rag.result import Answer
from t2rag.service.jobs import Job, JobLog


class Busy(Exception):
    """Every slot is taken and the waiting line is full: the client should retry later."""


class Service:
    """Answers questions over ``directory`` with ``llm``; at most ``slots`` questions run at once
    (the backend's parallel slots) and at most ``max_waiting`` more wait; beyond that ``ask``
    raises ``Busy``. Document jobs run one at a time on a writer thread; the reading engine
    follows the store's generation (``index/sqlite_store.py``), so later questions see the new
    documents -- as they see a CLI writer's -- without the engine being reopened."""

    def __init__(self, directory: str | Path, llm: LLM, *, slots: int | None = None, max_waiting: int = 32,
                 max_jobs: int = 16, log: bool = True) -> None:
        self.directory = directory if is_url(directory) else Path(directory)  # or a database URL
        self.llm = llm
        self._engine = T2RAG.open(self.directory, llm=llm, log=log)
        self.slots = max(1, slots or parallelism(llm))
        self.max_waiting = max(0, max_waiting)
        self._sem = threading.BoundedSemaphore(self.slots)
        self._admitted = 0
        self._lock = threading.Lock()
        # One thread per admitted question, so admission (not a hidden executor queue) bounds the wait.
        self.executor = ThreadPoolExecutor(self.slots + self.max_waiting, thread_name_prefix="t2rag-ask")
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="t2rag-writer")
        self.max_jobs = max(1, max_jobs)
        self._running: Job | None = None  # the job the writer thread is running
        self.jobs = JobLog(self.directory)
        for job, payload in self.jobs.unfinished():  # a stopped server's jobs run again, in order
            self._writer.submit(self._run, job, _payload(job.kind, payload))

    # --- questions ---------------------------------------------------------------------
    def admit(self) -> None:
        """Count one more question in, or raise Busy when the slots and the waiting line are full."""
        with self._lock:
            if self._admitted >= self.slots + self.max_waiting:
                raise Busy(f"{self._admitted} questions in progress or waiting; retry later")
            self._admitted += 1

    def run_admitted(
        self, question: str, config: dict[str, Any] | None = None, on_event: EventSink | None = None,
        via: str = "rest",
    ) -> Answer:
        """Answer a question already ``admit``-ted: wait for a slot, answer, let the next one in.
        The slot is held until the work ends; a client that stops waiting ends it at the next
        step through ``on_event`` (``service/running.py``)."""
        try:
            with self._sem:
                return self._engine.ask(question, config, on_event=on_event, via=via)
        finally:
            with self._lock:
                self._admitted -= 1

    def ask(self, question: str, config: dict[str, Any] | None = None, on_event: EventSink | None = None,
            via: str = "rest") -> Answer:
        self.admit()
        return self.run_admitted(question, config, on_event, via)

    @property
    def log(self) -> AnswerLog | None:
        """The index's log of answers (None when turned off)."""
        return self._engine.log

    def search(self, query: str, k: int = 10) -> list[dict[str, Any]]:
        """The top facts for ``query`` with their sources (``T2RAG.search_facts``)."""
        return self._engine.search_facts(query, k)

    def index_info(self, samples: int = 5) -> dict[str, Any]:
        info = self._engine.index.inspect(samples)
        info["model"] = self.llm.name
        info["slots"] = self.slots
        return info

    def passages(self, ids: list[str]) -> list[dict[str, Any]]:
        """The passages with these ids, each with where it sits in its document (``cited_as``:
        ``file, p. N`` when the index recorded it, else the title)."""
        found = self._engine.passages(ids)
        places = self._engine.retriever.locations([c.id for c in found])
        return [{"id": c.id, "title": c.title, "text": c.text,
                 "cited_as": places[c.id].label() if c.id in places else c.title,
                 "source": places[c.id].source if c.id in places else "",
                 "page": places[c.id].page if c.id in places else None} for c in found]

    def documents(self) -> list[dict[str, Any]]:
        """Every document with its chunks, source, pages and extraction status."""
        return [asdict(d) | {"status": d.status()} for d in self._engine.index.store.document_summaries()]

    # --- document jobs -----------------------------------------------------------------
    def submit(self, kind: str, payload: list[Any]) -> Job:
        """Record a job in the index's job log and queue it; Busy when ``max_jobs`` are waiting."""
        if self.jobs.waiting() >= self.max_jobs:
            raise Busy(f"{self.max_jobs} document jobs are waiting; retry when one has finished")
        stored = [[d.title, d.text, d.source, list(d.pages)] for d in payload] if kind == "add" else payload
        job = self.jobs.add(kind, stored)
        self._writer.submit(self._run, job, payload)
        return job

    def job(self, job_id: str) -> Job | None:
        """A job as stored; the running one as it is now (with its progress)."""
        running = self._running
        return running if running is not None and running.id == job_id else self.jobs.get(job_id)

    def _run(self, job: Job, payload: list[Any]) -> None:
        job.status = "running"
        self.jobs.update(job)
        self._running = job
        try:
            with self._writer_index() as ix:
                if job.kind == "add":
                    docs: list[Document] = payload

                    def progress(state: Any) -> None:
                        job.progress = {"chunks_done": state.chunks_done, "chunks_total": state.chunks_total}

                    job.result = ix.add(docs, llm=self.llm, progress=progress)
                else:
                    job.result = ix.delete(list(payload))
            job.status = "done"
        except Exception as e:  # noqa: BLE001 - a job reports its failure, the server goes on
            job.status, job.error = "failed", str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        finally:
            job.finished = time.time()
            job.progress = None
            self.jobs.update(job)
            self._running = None

    def _writer_index(self, wait_s: float = 600.0) -> TripleIndex:
        """The index opened for writing; while another process (``t2rag index`` or ``delete``)
        holds the one-writer lock, the job waits for it (up to ``wait_s``) rather than fail."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                return TripleIndex.create(self.directory)
            except IndexLockedError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def close(self) -> None:
        self.executor.shutdown(wait=True)
        self._writer.shutdown(wait=True)
        self._engine.close()
        self.jobs.close()


def _payload(kind: str, stored: list[Any]) -> list[Any]:
    """A job's payload as the writer takes it, from its stored JSON form."""
    if kind != "add":
        return [str(t) for t in stored]
    # [title, text] before sources were kept; [title, text, source, pages] since
    return [Document(str(d[0]), str(d[1]), str(d[2]) if len(d) > 2 else "", tuple(d[3]) if len(d) > 3 else ())
            for d in stored]
