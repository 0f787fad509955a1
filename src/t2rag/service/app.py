"""The REST API (FastAPI on uvicorn): ask, stream a question's events, manage documents.

Security defaults: the CLI binds 127.0.0.1; any other address needs a bearer token, which is
compared in constant time and never logged; bodies and questions have size limits (413 and
422); every question has a time limit (504); errors reach the client as one JSON line, never
a stack trace; CORS is off unless origins are given.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from pydantic import BaseModel, Field, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from t2rag.api import query_config
from t2rag.errors import T2RAGError
from t2rag.index.corpus import Document
from t2rag.query.events import QueryEvent
from t2rag.service.chat import add_chat_routes
from t2rag.service.engine import Busy, Service

log = logging.getLogger("t2rag.service")


@dataclass(frozen=True)
class Settings:
    token: str | None = None  # bearer token; None: no auth (loopback only, enforced by the CLI)
    max_body: int = 1_000_000  # bytes per request body
    max_question: int = 2_000  # characters per question
    timeout_s: float = 600.0  # per question
    cors_origins: tuple[str, ...] = ()
    # Host header values served (a DNS-rebinding page sends its own name); "*" serves any.
    allowed_hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "::1", "[::1]")


class AskBody(BaseModel):
    question: str = Field(min_length=1)
    config: dict[str, Any] | None = None


class DocumentIn(BaseModel):
    title: str = Field(min_length=1, max_length=1_000)
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


class BodyLimit:
    """Pure ASGI middleware: a body over ``limit`` bytes (declared or streamed) gets 413."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await _too_large(send, self.limit)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await _too_large(send, self.limit)


class _TooLarge(Exception):
    pass


async def _too_large(send: Send, limit: int) -> None:
    body = json.dumps({"error": f"request body over {limit} bytes"}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def create_app(service: Service, settings: Settings | None = None) -> FastAPI:
    s = settings or Settings()
    # With a token, the API docs are not served: a browser cannot send the bearer header, and
    # the schema should not be public on an open binding.
    open_docs = s.token is None
    app = FastAPI(title="T2RAG", version="1", summary="Multi-hop question answering with triplet-driven thinking",
                  docs_url="/docs" if open_docs else None, redoc_url="/redoc" if open_docs else None,
                  openapi_url="/openapi.json" if open_docs else None)
    if s.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(s.cors_origins), allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["Authorization", "Content-Type"])
    app.add_middleware(BodyLimit, limit=s.max_body)
    if "*" not in s.allowed_hosts:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(s.allowed_hosts))

    def auth(request: Request) -> None:
        if s.token is None:
            return
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {s.token}".encode()):
            raise HTTPException(401, "missing or wrong bearer token")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, e: StarletteHTTPException) -> JSONResponse:
        return _error(e.status_code, str(e.detail))

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, e: RequestValidationError) -> JSONResponse:
        first = e.errors()[0] if e.errors() else {}
        where = ".".join(str(x) for x in first.get("loc", ()) if x != "body")
        return _error(422, f"invalid request: {where + ': ' if where else ''}{first.get('msg', 'malformed body')}")

    @app.exception_handler(Exception)
    async def unexpected(_: Request, e: Exception) -> JSONResponse:
        log.error("internal error: %s", type(e).__name__)
        return _error(500, "internal error")

    def check_question(body: AskBody) -> str:
        return check_text(body.question)

    def check_text(question: str) -> str:
        q = question.strip()
        if not q:
            raise HTTPException(422, "the question is empty")
        if len(q) > s.max_question:
            raise HTTPException(422, f"the question is over {s.max_question} characters")
        return q

    async def run(fn: Callable[[], Any], executor: Any = None) -> Any:
        try:
            return await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(executor, fn), s.timeout_s)
        except TimeoutError:
            raise HTTPException(504, f"no answer within {s.timeout_s:g} s") from None
        except Busy as e:
            raise HTTPException(429, str(e)) from None
        except T2RAGError as e:
            raise HTTPException(400, str(e).splitlines()[0] if str(e) else type(e).__name__) from None

    def check_config(config: dict[str, Any] | None) -> None:
        """A bad config is the client's error (422), found before a slot is taken."""
        try:
            query_config(config)
        except T2RAGError as e:
            raise HTTPException(422, str(e)) from None

    def admit() -> None:
        try:
            service.admit()
        except Busy as e:
            raise HTTPException(429, str(e)) from None

    guarded = [Depends(auth)]

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "model": service.llm.name, "slots": service.slots}

    @app.post("/v1/ask", dependencies=guarded)
    async def ask(body: AskBody) -> dict[str, Any]:
        q = check_question(body)
        check_config(body.config)
        admit()
        answer = await run(lambda: service.run_admitted(q, body.config), service.executor)
        return answer.to_dict()  # type: ignore[no-any-return]

    @app.post("/v1/ask/stream", dependencies=guarded)
    async def ask_stream(body: AskBody) -> StreamingResponse:
        q = check_question(body)
        check_config(body.config)
        queue, task = start(q, body.config)
        return StreamingResponse(_events(queue, task), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    def start(q: str, config: dict[str, Any] | None,
              via: str = "rest") -> tuple[asyncio.Queue[QueryEvent | None], asyncio.Future[Any]]:
        """Admit a question (429 before any stream starts) and start answering it now, not when
        the client starts reading, so the admitted slot is always released. The queue carries
        its events, then None."""
        admit()
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[QueryEvent | None] = asyncio.Queue()

        def on_event(e: QueryEvent) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, e)

        task = asyncio.ensure_future(run(lambda: service.run_admitted(q, config, on_event=on_event, via=via),
                                         service.executor))
        task.add_done_callback(lambda _: loop.call_soon_threadsafe(queue.put_nowait, None))
        return queue, task

    add_chat_routes(app, service.llm.name, guarded, check_text, start)

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
        """The whole answer an entry recorded (its permalink: ``/?answer=ID`` in the viewer)."""
        log = service.log
        found = await run(lambda: log.answer(entry_id)) if log is not None else None
        if found is None:
            raise HTTPException(404, f"no answer {entry_id} in the log")
        return found.to_dict()  # type: ignore[no-any-return]

    @app.get("/v1/search", dependencies=guarded)
    async def search(q: str, k: int = 10) -> dict[str, Any]:
        if not q.strip() or len(q) > s.max_question or not 1 <= k <= 100:
            raise HTTPException(422, f"q must be 1..{s.max_question} characters and k 1..100")
        return {"query": q, "facts": await run(lambda: service.search(q, k))}

    @app.get("/v1/index", dependencies=guarded)
    async def index_info() -> dict[str, Any]:
        return await run(service.index_info)  # type: ignore[no-any-return]

    @app.get("/v1/passages", dependencies=guarded)
    async def passages(ids: str) -> dict[str, Any]:
        wanted = [i for i in ids.split(",") if i][:50]
        return {"passages": await run(lambda: service.passages(wanted))}

    @app.post("/v1/documents", status_code=202, dependencies=guarded)
    async def add_documents(body: DocumentsBody) -> dict[str, Any]:
        docs = [Document(d.title.strip(), d.text) for d in body.documents]
        return _submitted(lambda: service.submit("add", docs))

    @app.delete("/v1/documents", status_code=202, dependencies=guarded)
    async def delete_documents(body: DeleteBody) -> dict[str, Any]:
        return _submitted(lambda: service.submit("delete", body.titles))

    @app.get("/v1/jobs/{job_id}", dependencies=guarded)
    async def job(job_id: str) -> dict[str, Any]:
        found = service.job(job_id)
        if found is None:
            raise HTTPException(404, f"no job {job_id}")
        return found.to_dict()

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def viewer() -> str:
        return resources.files("t2rag.service").joinpath("static/index.html").read_text("utf-8")

    return app


def _submitted(submit: Any) -> dict[str, Any]:
    """A queued job as JSON, or 429 when the job queue is full."""
    try:
        return submit().to_dict()  # type: ignore[no-any-return]
    except Busy as e:
        raise HTTPException(429, str(e)) from None


async def _events(queue: asyncio.Queue[QueryEvent | None], task: asyncio.Future[Any]) -> AsyncIterator[str]:
    """Server-sent events: each query event as it happens, then ``done`` with the whole Answer
    (or ``error`` with one line)."""
    while (event := await queue.get()) is not None:
        yield f"event: {event.kind}\ndata: {json.dumps(event.to_dict(), ensure_ascii=False)}\n\n"
    try:
        answer = task.result()
        yield f"event: done\ndata: {json.dumps(answer.to_dict(), ensure_ascii=False)}\n\n"
    except HTTPException as e:
        yield f"event: error\ndata: {json.dumps({'status': e.status_code, 'error': str(e.detail)})}\n\n"
    except Exception as e:  # noqa: BLE001 - the stream ends with one line, never a stack trace
        log.error("internal error in stream: %s", type(e).__name__)
        yield f"event: error\ndata: {json.dumps({'status': 500, 'error': 'internal error'})}\n\n"
