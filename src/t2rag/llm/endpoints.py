"""Local OpenAI-compatible endpoints: llama.cpp's HTTP server for a GGUF and ``/v1/embeddings`` for an embedder.

Other programs (the peer systems the benchmark compares with, or anything that speaks the
OpenAI API) then use the same model and the same vectors as T2RAG does. ``t2rag endpoints``
runs them in one process until it is stopped; ``LocalEndpoints`` starts that process, waits
until both answer, and stops it by process group, so nothing is left running.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from t2rag.errors import BackendError
from t2rag.llm.local import DEFAULT_CONTEXT

READY_TIMEOUT_S = 300.0  # loading a model on shared cores can take a while
STOP_TIMEOUT_S = 15.0
N_PREDICT = 1024  # output cap for clients that send max_tokens: null


def start_llm_server(
    model: str, *, n_ctx: int = DEFAULT_CONTEXT, n_parallel: int = 1, threads: int | None = None
) -> tuple[Any, str]:
    """llama.cpp's HTTP server for ``model`` (default, small or a .gguf) on a free loopback
    port; returns the server (it stops when dropped) and its ``/v1`` URL."""
    import xllamacpp

    from t2rag.llm.local import server_params
    from t2rag.llm.models import resolve_model_path

    params = server_params(resolve_model_path(model), n_ctx=n_ctx, n_parallel=n_parallel,
                           threads=threads or os.cpu_count() or 1)
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.n_predict = N_PREDICT
    params.endpoint_metrics = True  # /metrics: token counters, for benchmarks that count at the server
    try:
        server = xllamacpp.Server(params)
    except (RuntimeError, ValueError) as e:
        raise BackendError(f"cannot start llama.cpp server for {model}: {' '.join(str(e).split())[:300]}") from None
    address = str(server.listening_address).rstrip("/")
    if not address.startswith("http"):
        address = "http://" + address
    return server, address + "/v1"


class EmbeddingsRequest(BaseModel):
    input: str | list[str]
    model: str | None = None


def embeddings_app(embedder: Any) -> Any:
    """A FastAPI app answering ``POST /v1/embeddings`` (OpenAI's request and reply shape) and ``GET /health``."""
    from fastapi import FastAPI, HTTPException

    app = FastAPI(title="t2rag embeddings")
    lock = threading.Lock()  # one batch at a time: the ONNX session is shared

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/v1/embeddings")
    def embeddings(req: EmbeddingsRequest) -> dict[str, Any]:
        texts = [req.input] if isinstance(req.input, str) else req.input
        if not texts or not all(isinstance(t, str) for t in texts):
            raise HTTPException(400, "input must be a string or a non-empty list of strings")
        with lock:
            vectors = embedder.embed(texts)
        tokens = sum(len(t.split()) for t in texts)
        return {"object": "list", "model": req.model or embedder.name,
                "data": [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}

    return app


def serve_embeddings(embedder: Any) -> tuple[Any, str]:
    """Serve ``embeddings_app`` on a free loopback port in a daemon thread; returns the
    uvicorn server (``should_exit = True`` stops it) and the ``/v1`` URL."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(embeddings_app(embedder), log_level="warning", access_log=False))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    return server, f"http://127.0.0.1:{port}/v1"


@dataclass(frozen=True)
class Endpoints:
    pid: int
    llm_url: str | None
    embeddings_url: str | None
    llm_model: str | None = None
    embedder: str | None = None


class LocalEndpoints:
    """``with LocalEndpoints(llm="local:small", embedder="minilm") as ep:`` runs ``t2rag
    endpoints`` in its own process group, yields its URLs once both answer, and stops it
    (SIGTERM, then SIGKILL) on exit. Pass ``llm=None`` or ``embedder=None`` to skip one."""

    def __init__(self, llm: str | None = "local:small", embedder: str | None = "minilm", *,
                 n_ctx: int = DEFAULT_CONTEXT, n_parallel: int = 1, threads: int | None = None) -> None:
        self.argv = [sys.executable, "-m", "t2rag.cli", "endpoints", "--llm", llm or "none",
                     "--embedder", embedder or "none", "--context", str(n_ctx), "--parallel", str(n_parallel)]
        if threads:
            self.argv += ["--threads", str(threads)]
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Endpoints:
        tmp = Path(tempfile.mkdtemp(prefix="t2rag-endpoints-"))
        ready, log = tmp / "ready.json", tmp / "stderr.log"
        with log.open("wb") as err:  # a file, not a pipe: a chatty server can never block on it
            self.proc = subprocess.Popen([*self.argv, "--ready-file", str(ready)], start_new_session=True,
                                         stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not ready.exists():
            if self.proc.poll() is not None:
                tail = " ".join(log.read_text("utf-8", "replace").split()[-60:])
                raise BackendError(f"t2rag endpoints exited ({self.proc.returncode}): {tail[-300:]}")
            if time.monotonic() > deadline:
                self.stop()
                raise BackendError(f"t2rag endpoints not ready after {READY_TIMEOUT_S:.0f}s")
            time.sleep(0.2)
        return Endpoints(**json.loads(ready.read_text("utf-8")))

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop the whole process group: the server and anything it started."""
        if self.proc is None or self.proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT_S), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue


def wait_healthy(url: str, timeout: float = READY_TIMEOUT_S) -> None:
    """Poll ``URL/health`` (the server root, not ``/v1``) until it answers 200."""
    import httpx

    root = url.removesuffix("/v1")
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(root + "/health", timeout=5.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise BackendError(f"{root} did not become healthy in {timeout:.0f}s")
        time.sleep(0.2)


def run_endpoints(llm: str | None, embedder: str | None, *, n_ctx: int, n_parallel: int, threads: int | None,
                  ready_file: Path | None) -> None:
    """Start the endpoints, announce them (stdout and ``ready_file``), serve until SIGTERM or SIGINT."""
    from t2rag.embed.registry import get_embedder

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    llm_server, llm_url = start_llm_server(llm, n_ctx=n_ctx, n_parallel=n_parallel, threads=threads) if llm \
        else (None, None)
    emb = get_embedder(embedder) if embedder else None
    emb_server, emb_url = serve_embeddings(emb) if emb is not None else (None, None)
    for url in (llm_url, emb_url):
        if url:
            wait_healthy(url)
    info = Endpoints(os.getpid(), llm_url, emb_url, llm, emb.name if emb is not None else None)
    print(f"t2rag endpoints (pid {info.pid}): llm {llm_url or '-'}  embeddings {emb_url or '-'}; "
          "stop with Ctrl-C or SIGTERM", flush=True)
    if ready_file is not None:
        tmp = ready_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(info.__dict__), encoding="utf-8")
        tmp.replace(ready_file)  # whole or absent: the waiting side never reads half a file
    stop.wait()
    if emb_server is not None:
        emb_server.should_exit = True
    del llm_server  # the llama.cpp server stops with its last reference
