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
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from t2rag.api import check_question as api_check_question
from t2rag.api import query_config
from t2rag.errors import T2RAGError
from t2rag.service.chat import add_chat_routes
from t2rag.service.library import UPLOAD_PATH, add_library_routes
from t2rag.service.running import Running, stop_switch
from t2rag.service.served import Busy, Service

log = logging.getLogger("t2rag.service")


@dataclass(frozen=True)
class Settings:
    token: str | None = None  # bearer token; None: no auth (loopback only, enforced by the CLI)
    max_body: int = 1_000_000  # bytes per request body
    max_upload: int = 50_000_000  # bytes per uploaded document file (POST /v1/documents/file)
    max_question: int = 2_000  # characters per question
    timeout_s: float = 600.0  # per question
    cors_origins: tuple[str, ...] = ()
    # Host header values served (a DNS-rebinding page sends its own name); "*" serves any.
    allowed_hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "::1", "[::1]")


class AskBody(BaseModel):
    question: str = Field(min_length=1)
    config: dict[str, Any] | None = None


class BodyLimit:
    """Pure ASGI middleware: a body over ``limit`` bytes (declared or streamed) gets 413; an
    uploaded file (``UPLOAD_PATH``) may have up to ``upload`` bytes."""

    def __init__(self, app: ASGIApp, limit: int, upload: int) -> None:
        self.app, self.body_limit, self.upload = app, limit, upload

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.upload if scope.get("path") == UPLOAD_PATH else self.body_limit
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _too_large(send, limit)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > limit:
                raise _TooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await _too_large(send, limit)


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
    # FastAPIOffline serves the API docs' scripts from the package: /docs works without internet.
    summary = "Multi-hop question answering with triplet-driven thinking"
    app = (FastAPIOffline(title="T2RAG", version="1", summary=summary) if open_docs else
           FastAPI(title="T2RAG", version="1", summary=summary, docs_url=None, redoc_url=None, openapi_url=None))
    if s.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(s.cors_origins), allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["Authorization", "Content-Type"])
    app.add_middleware(BodyLimit, limit=s.max_body, upload=s.max_upload)
    if "*" not in s.allowed_hosts:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(s.allowed_hosts))

    def auth(request: Request) -> None:
        if s.token is None:
            return
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {s.token}".encode()):
            raise HTTPException(401, "missing or wrong bearer token")

    guarded = [Depends(auth)]
    gate = Gate(service, s)
    _error_handlers(app)
    _ask_routes(app, gate, guarded)
    add_chat_routes(app, service.llm.name, guarded, gate.check_text, gate.start)
    add_library_routes(app, service, guarded, gate.run)
    _read_routes(app, gate, guarded)
    return app


def _error_handlers(app: FastAPI) -> None:
    """Every error is one JSON line ``{"error": ...}``; an unexpected one names no internals."""

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


@dataclass
class Gate:
    """What every route passes through: the question and config checks, admission to a slot,
    and running the work off the event loop within the time limit."""

    service: Service
    s: Settings

    def check_text(self, question: str) -> str:
        """The library's one question check (``api.check_question``), then this server's limit."""
        try:
            q = api_check_question(question)
        except T2RAGError as e:
            raise HTTPException(422, str(e)) from None
        if len(q) > self.s.max_question:
            raise HTTPException(422, f"the question is over {self.s.max_question} characters")
        return q

    def check_config(self, config: dict[str, Any] | None) -> None:
        """A bad config is the client's error (422), found before a slot is taken."""
        try:
            query_config(config)
        except T2RAGError as e:
            raise HTTPException(422, str(e)) from None

    def admit(self) -> None:
        try:
            self.service.admit()
        except Busy as e:
            raise HTTPException(429, str(e)) from None

    async def run(self, fn: Callable[[], Any], executor: Any = None) -> Any:
        try:
            return await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(executor, fn), self.s.timeout_s)
        except TimeoutError:
            raise HTTPException(504, f"no answer within {self.s.timeout_s:g} s") from None
        except Busy as e:
            raise HTTPException(429, str(e)) from None
        except T2RAGError as e:
            raise HTTPException(400, str(e).splitlines()[0] if str(e) else type(e).__name__) from None

    def start(self, q: str, config: dict[str, Any] | None, via: str = "rest") -> Running:
        """Admit a question (429 before any stream starts) and start answering it now, not when
        the client starts reading, so the admitted slot is always released. Its queue carries
        its events, then None; a client that leaves stops the work at the next step."""
        self.admit()
        loop = asyncio.get_running_loop()
        running = Running(asyncio.Queue())
        on_event = running.sink(loop)
        service = self.service
        running.task = asyncio.ensure_future(
            self.run(lambda: service.run_admitted(q, config, on_event=on_event, via=via), service.executor))
        running.task.add_done_callback(lambda _: loop.call_soon_threadsafe(running.queue.put_nowait, None))
        running.task.add_done_callback(_retrieved)  # a stopped question's error has no one to read it
        return running


def _ask_routes(app: FastAPI, gate: Gate, guarded: list[Any]) -> None:
    service = gate.service

    @app.get("/health", summary="Liveness, the model and the question slots")
    async def health() -> dict[str, Any]:
        """Always open (no token): ``{"status": "ok", "model", "slots"}``."""
        return {"status": "ok", "model": service.llm.name, "slots": service.slots}

    @app.post("/v1/ask", dependencies=guarded, summary="Answer a question")
    async def ask(body: AskBody) -> dict[str, Any]:
        """The whole Answer: the answer, the facts and passages it rests on (with their files
        and pages), the round-by-round trace, tokens and time. 429 when every slot and the
        waiting line are taken; 504 past the time limit (the work then stops at its next step)."""
        q = gate.check_text(body.question)
        gate.check_config(body.config)
        gate.admit()
        stopped = threading.Event()
        try:
            answer = await gate.run(lambda: service.run_admitted(q, body.config, on_event=stop_switch(stopped)),
                                    service.executor)
        except HTTPException:  # a timeout: the work stops at its next step
            stopped.set()
            raise
        return answer.to_dict()  # type: ignore[no-any-return]

    @app.post("/v1/ask/stream", dependencies=guarded, summary="Answer a question, streaming each step")
    async def ask_stream(body: AskBody) -> StreamingResponse:
        """Server-sent events: ``decomposition``, then per round ``round``, ``evidence`` and
        ``bindings``, then ``answer`` and ``done`` with the whole Answer (or ``error``). Closing
        the connection stops the question at its next step and frees its slot."""
        q = gate.check_text(body.question)
        gate.check_config(body.config)
        return StreamingResponse(_events(gate.start(q, body.config)), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})


def _read_routes(app: FastAPI, gate: Gate, guarded: list[Any]) -> None:
    service, limit = gate.service, gate.s.max_question

    @app.get("/v1/search", dependencies=guarded, summary="Search the facts (no LLM)")
    async def search(q: str, k: int = 10) -> dict[str, Any]:
        """The ``k`` facts nearest ``q`` (dense and BM25 fused), each with its source passages."""
        if not q.strip() or len(q) > limit or not 1 <= k <= 100:
            raise HTTPException(422, f"q must be 1..{limit} characters and k 1..100")
        return {"query": q, "facts": await gate.run(lambda: service.search(q, k))}

    @app.get("/v1/index", dependencies=guarded, summary="The index: counts, configs, samples")
    async def index_info() -> dict[str, Any]:
        """Counts, the manifest (embedder, configs), sample triples, failed chunks and the model."""
        return await gate.run(service.index_info)  # type: ignore[no-any-return]

    @app.get("/v1/passages", dependencies=guarded, summary="Read passages by id")
    async def passages(ids: str) -> dict[str, Any]:
        """Up to 50 comma-separated passage ids (as answers cite them): title, text and citation."""
        wanted = [i for i in ids.split(",") if i][:50]
        return {"passages": await gate.run(lambda: service.passages(wanted))}

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def viewer() -> str:
        return resources.files("t2rag.service").joinpath("static/index.html").read_text("utf-8")

    @app.get("/favicon.ico", include_in_schema=False)
    @app.get("/favicon.svg", include_in_schema=False)
    async def favicon() -> Response:
        icon = resources.files("t2rag.service").joinpath("static/favicon.svg").read_bytes()
        return Response(icon, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})


def _retrieved(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


async def _events(running: Running) -> AsyncIterator[str]:
    """Server-sent events: each query event as it happens, then ``done`` with the whole Answer
    (or ``error`` with one line). A client that disconnects stops the question."""
    async for event in running.events():
        yield f"event: {event.kind}\ndata: {json.dumps(event.to_dict(), ensure_ascii=False)}\n\n"
    try:
        answer = running.task.result()
        yield f"event: done\ndata: {json.dumps(answer.to_dict(), ensure_ascii=False)}\n\n"
    except HTTPException as e:
        yield f"event: error\ndata: {json.dumps({'status': e.status_code, 'error': str(e.detail)})}\n\n"
    except Exception as e:  # noqa: BLE001 - the stream ends with one line, never a stack trace
        log.error("internal error in stream: %s", type(e).__name__)
        yield f"event: error\ndata: {json.dumps({'status': 500, 'error': 'internal error'})}\n\n"
