"""A real loopback HTTP server imitating OpenAI's /chat/completions and /embeddings, for tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from t2rag.embed.hashing import HashingEmbedder

EMBED_DIM = 32


@dataclass
class Canned:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class FakeState:
    """What the server does: canned replies first (in order), then the default behaviour."""

    canned: list[Canned] = field(default_factory=list)
    rejected_formats: set[str] = field(default_factory=set)
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, path: str) -> int:
        return sum(1 for r in self.requests if r["path"] == path)


def _chat_reply(body: dict[str, Any]) -> dict[str, Any]:
    fmt = (body.get("response_format") or {}).get("type")
    last = body["messages"][-1]["content"] if body.get("messages") else ""
    content = json.dumps({"city": "Paris", "echo": last[:20]}) if fmt else f"echo: {last}"
    return {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 3}},
    }


def _embed_reply(body: dict[str, Any]) -> dict[str, Any]:
    texts = body["input"]
    vectors = HashingEmbedder(EMBED_DIM).embed(texts) * 3.0  # not unit norm: the client must normalize
    data = [{"index": i, "embedding": v.tolist(), "object": "embedding"} for i, v in enumerate(vectors)]
    return {"data": list(reversed(data)), "usage": {"prompt_tokens": len(texts)}}  # out of order on purpose


class _Handler(BaseHTTPRequestHandler):
    state: FakeState

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        path = self.path.removeprefix("/v1")
        with self.state.lock:
            self.state.requests.append({"path": path, "body": body, "auth": self.headers.get("authorization")})
            reply = self.state.canned.pop(0) if self.state.canned else None
        if reply is None:
            reply = self._default(path, body)
        data = json.dumps(reply.body).encode()
        self.send_response(reply.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in reply.headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _default(self, path: str, body: dict[str, Any]) -> Canned:
        fmt = (body.get("response_format") or {}).get("type")
        if fmt in self.state.rejected_formats:
            return Canned(400, {"error": {"message": f"Unsupported value: 'response_format.type' {fmt}"}})
        if path == "/chat/completions":
            return Canned(200, _chat_reply(body))
        if path == "/embeddings":
            return Canned(200, _embed_reply(body))
        return Canned(404, {"error": {"message": f"no route {path}"}})


@contextmanager
def fake_openai() -> Iterator[tuple[str, FakeState]]:
    """Yield (base_url, state) for a server running on 127.0.0.1 in a daemon thread."""
    state = FakeState()
    handler = type("Handler", (_Handler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", state
    finally:
        server.shutdown()
        server.server_close()
