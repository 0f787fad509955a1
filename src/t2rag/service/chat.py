"""Chat-client doors: T2RAG as a model behind an OpenAI-compatible ``/v1/chat/completions`` and
an Ollama-compatible ``/api/chat``, so chat front ends and SDKs use it as they use any model.

The last user message is the question; earlier turns are not read (each question is answered
from the index alone). The reply's text is the answer and its sources; the whole ``Answer`` and,
when streaming, each step of the search travel in an extension field (``t2rag``, ``t2rag_event``)
that clients ignore unless they look for it.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from t2rag.result import Answer
from t2rag.service.running import Running

MODEL = "t2rag"
OLLAMA_VERSION = "0.6.0"  # the Ollama API shape these routes follow

Start = Callable[[str, dict[str, Any] | None, str], Running]


class ChatMessage(BaseModel):
    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatBody(BaseModel):
    model: str = MODEL
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool | None = None


def question_of(messages: list[ChatMessage]) -> str:
    """The text of the last user message (text parts of a multi-part content joined)."""
    for m in reversed(messages):
        if m.role == "user":
            if isinstance(m.content, list):
                return " ".join(str(p.get("text", "")) for p in m.content if p.get("type") == "text")
            return m.content or ""
    raise HTTPException(422, "no user message: the last user message is the question")


def reply_text(answer: Answer) -> str:
    """The answer, then its sources, as a chat client shows them."""
    titles = list(dict.fromkeys([c.title for f in answer.resolved for c in f.chunks]
                                + [c.title for c in answer.answer_chunks]))
    return answer.answer + (f"\n\nSources: {'; '.join(titles)}" if titles else "")


def _usage(answer: Answer) -> dict[str, int]:
    total = answer.usage.get("total", {})
    p, c = int(total.get("prompt_tokens", 0)), int(total.get("completion_tokens", 0))
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def add_chat_routes(app: FastAPI, llm_name: str, guarded: list[Any], check: Callable[[str], str],
                    start: Start) -> None:
    """Register the OpenAI- and Ollama-compatible routes on ``app`` (same auth and admission)."""

    @app.get("/v1/models", dependencies=guarded, summary="OpenAI-compatible: the model list")
    async def models() -> dict[str, Any]:
        """One model, ``t2rag``: this index answered by T2RAG (for OpenAI-compatible chat clients)."""
        return {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0,
                                            "owned_by": f"t2rag ({llm_name})"}]}

    @app.post("/v1/chat/completions", dependencies=guarded, response_model=None,
              summary="OpenAI-compatible chat: the last user message is the question")
    async def chat_completions(body: ChatBody) -> Any:
        """The reply is the answer with its sources; the whole Answer is in ``t2rag``. With
        ``stream: true``, OpenAI's chunk stream, each search step in ``t2rag_event``."""
        running = start(check(question_of(body.messages)), None, "chat")
        ident, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        if body.stream:
            return StreamingResponse(_openai_stream(running, ident, created, body.model),
                                     media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
        answer = await running.finished()
        return {"id": ident, "object": "chat.completion", "created": created, "model": body.model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply_text(answer)},
                             "finish_reason": "stop"}],
                "usage": _usage(answer), "t2rag": answer.to_dict()}

    @app.get("/api/version", summary="Ollama-compatible: the version")
    async def ollama_version() -> dict[str, str]:
        """What Ollama clients ask first."""
        return {"version": OLLAMA_VERSION}

    @app.get("/api/tags", dependencies=guarded, summary="Ollama-compatible: the model list")
    async def ollama_tags() -> dict[str, Any]:
        """One model, ``t2rag:latest``."""
        return {"models": [{"name": f"{MODEL}:latest", "model": f"{MODEL}:latest", "modified_at": _now(),
                            "size": 0, "digest": "", "details": {"format": "t2rag", "family": "t2rag",
                                                                 "parameter_size": llm_name}}]}

    @app.post("/api/chat", dependencies=guarded, response_model=None,
              summary="Ollama-compatible chat: the last user message is the question")
    async def ollama_chat(body: ChatBody) -> Any:
        """NDJSON stream unless ``stream: false``; each search step in ``t2rag_event``."""
        running = start(check(question_of(body.messages)), None, "chat")
        if body.stream is not False:  # Ollama streams unless told not to
            return StreamingResponse(_ollama_stream(running, body.model), media_type="application/x-ndjson")
        answer = await running.finished()
        return _ollama_done(body.model, answer, reply_text(answer))



def _chunk(ident: str, created: int, model: str, delta: dict[str, Any], finish: str | None = None,
           **extra: Any) -> str:
    body = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


async def _openai_stream(running: Running, ident: str, created: int, model: str) -> AsyncIterator[str]:
    """OpenAI's chunk stream: the role, one chunk per search step (empty delta, the step in
    ``t2rag_event``), the answer text, the stop, ``[DONE]``. An error ends the stream with an
    ``error`` object, as OpenAI-compatible servers do."""
    yield _chunk(ident, created, model, {"role": "assistant", "content": ""})
    async for event in running.events():
        yield _chunk(ident, created, model, {}, t2rag_event=event.to_dict())
    try:
        answer: Answer = running.task.result()
    except HTTPException as e:
        yield f"data: {json.dumps({'error': {'message': str(e.detail), 'code': e.status_code}})}\n\n"
        return
    except Exception:  # noqa: BLE001 - one line to the client, never a stack trace
        yield f"data: {json.dumps({'error': {'message': 'internal error', 'code': 500}})}\n\n"
        return
    yield _chunk(ident, created, model, {"content": reply_text(answer)})
    yield _chunk(ident, created, model, {}, "stop", usage=_usage(answer), t2rag=answer.to_dict())
    yield "data: [DONE]\n\n"


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _ollama_done(model: str, answer: Answer, content: str) -> dict[str, Any]:
    u = _usage(answer)
    return {"model": model, "created_at": _now(), "message": {"role": "assistant", "content": content},
            "done": True, "done_reason": "stop", "total_duration": int(answer.timing.total_s * 1e9),
            "prompt_eval_count": u["prompt_tokens"], "eval_count": u["completion_tokens"], "t2rag": answer.to_dict()}


async def _ollama_stream(running: Running, model: str) -> AsyncIterator[str]:
    """Ollama's NDJSON stream: a line per search step (empty content, the step in
    ``t2rag_event``), then the answer with ``done: true``."""
    async for event in running.events():
        line = {"model": model, "created_at": _now(), "message": {"role": "assistant", "content": ""},
                "done": False, "t2rag_event": event.to_dict()}
        yield json.dumps(line, ensure_ascii=False) + "\n"
    try:
        answer: Answer = running.task.result()
    except HTTPException as e:
        yield json.dumps({"error": str(e.detail)}) + "\n"
        return
    except Exception:  # noqa: BLE001
        yield json.dumps({"error": "internal error"}) + "\n"
        return
    yield json.dumps(_ollama_done(model, answer, reply_text(answer)), ensure_ascii=False) + "\n"
