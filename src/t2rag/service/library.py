"""The index's documents and answers over HTTP: list, add (JSON or an uploaded file), delete,
follow the jobs that do it, and read the log of past answers."""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePath
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from pydantic import BaseModel, Field, field_validator

from t2rag.index.corpus import Document
from t2rag.index.documents import FORMAT_NAMES, FORMATS, read_file
from t2rag.service.served import Busy, Service

UPLOAD_PATH = "/v1/documents/file"


class DocumentIn(BaseModel):
    title: str = Field(min_length=1, max_length=1_000, description="Unique in the index: a document with this "
                       "title and other text is replaced.")
    text: str = Field(min_length=1)

    @field_validator("title")
    @classmethod
    def _named(cls, title: str) -> str:
        if not title.strip():
            raise ValueError("a title must have a visible character")
        return title.strip()


class DocumentsBody(BaseModel):
    documents: list[DocumentIn] = Field(min_length=1)


class DeleteBody(BaseModel):
    titles: list[str] = Field(min_length=1)


def submitted(submit: Callable[[], Any]) -> dict[str, Any]:
    """A queued job as JSON, or 429 when the job queue is full."""
    try:
        return submit().to_dict()  # type: ignore[no-any-return]
    except Busy as e:
        raise HTTPException(429, str(e)) from None


def uploaded_document(name: str, data: bytes) -> Document:
    """The document in an uploaded file named ``name`` (its format by suffix, as ``t2rag index``
    reads it); 422 with the reason when it gives no text."""
    pure = PurePath(name.replace("\\", "/"))
    if not name.strip() or pure.name in ("", ".", "..") or pure.suffix.lower() not in FORMATS:
        raise HTTPException(422, f"name the file with its suffix; T2RAG reads {FORMAT_NAMES}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / pure.name
        path.write_bytes(data)
        got = read_file(path, pure.stem)
    if got.skipped:
        raise HTTPException(422, f"{pure.name}: {got.note}")
    return Document(pure.stem, got.text, source=pure.name, pages=got.pages)


def add_library_routes(app: FastAPI, service: Service, guarded: list[Any],
                       run: Callable[[Callable[[], Any]], Awaitable[Any]]) -> None:
    @app.get("/v1/documents", dependencies=guarded, summary="The documents in the index")
    async def documents() -> dict[str, Any]:
        """Every document with its chunk count, source file, page count and extraction status."""
        docs = await run(service.documents)
        return {"documents": docs}

    @app.post("/v1/documents", status_code=202, dependencies=guarded, summary="Add documents (queues a job)")
    async def add_documents(body: DocumentsBody) -> dict[str, Any]:
        """Queue a job that adds the documents (only new chunks cost LLM calls); follow it at
        ``/v1/jobs/{id}``. 429 when too many jobs wait."""
        docs = [Document(d.title, d.text) for d in body.documents]
        return submitted(lambda: service.submit("add", docs))

    @app.post(UPLOAD_PATH, status_code=202, dependencies=guarded, summary="Add one uploaded file (queues a job)")
    async def add_file(request: Request, name: str) -> dict[str, Any]:
        """The request body is the file's bytes; ``name`` its file name, whose suffix says the
        format (text, Markdown, reStructuredText, HTML, PDF, Word .docx). The document's title is
        the name without the suffix; a PDF keeps its pages for citations."""
        data = await request.body()
        doc = await run(lambda: uploaded_document(name, data))
        return submitted(lambda: service.submit("add", [doc]))

    @app.delete("/v1/documents", status_code=202, dependencies=guarded, summary="Delete documents (queues a job)")
    async def delete_documents(body: DeleteBody) -> dict[str, Any]:
        """Queue a job that deletes the documents with these titles and every fact only they support."""
        return submitted(lambda: service.submit("delete", body.titles))

    @app.get("/v1/jobs/{job_id}", dependencies=guarded, summary="A document job's status and progress")
    async def job(job_id: str) -> dict[str, Any]:
        """queued, running (with chunks done of total), done (with what it did) or failed (with why)."""
        found = service.job(job_id)
        if found is None:
            raise HTTPException(404, f"no job {job_id}")
        return found.to_dict()

    @app.get("/v1/history", dependencies=guarded, summary="The log of answers, newest first")
    async def history(limit: int = 20, before: int | None = None, q: str = "") -> dict[str, Any]:
        """Past answers over this index (from every door: CLI, API, REST, MCP, chat), newest
        first; ``before`` pages back from an entry id, ``q`` keeps questions containing it."""
        log = service.log
        if log is None:
            return {"entries": [], "logging": False}
        if not 1 <= limit <= 200:
            raise HTTPException(422, "limit must be 1..200")
        entries = await run(lambda: log.entries(limit, before, q))
        return {"entries": [e.to_dict() for e in entries], "logging": True}

    @app.get("/v1/history/{entry_id}", dependencies=guarded, summary="One past answer, trace included")
    async def history_entry(entry_id: int) -> dict[str, Any]:
        """The whole answer an entry recorded (its permalink in the viewer: ``/?answer=ID``)."""
        log = service.log
        found = await run(lambda: log.answer(entry_id)) if log is not None else None
        if found is None:
            raise HTTPException(404, f"no answer {entry_id} in the log")
        return found.to_dict()  # type: ignore[no-any-return]
