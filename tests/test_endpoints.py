"""``t2rag endpoints`` and our ``openai:`` backends against it: real servers, stopped by process group."""

from __future__ import annotations

import os
from typing import Any

import httpx
import numpy as np
import pytest

from t2rag.embed.registry import get_embedder
from t2rag.errors import T2RAGError
from t2rag.llm.endpoints import LocalEndpoints

TEXTS = ["Inception was directed by Christopher Nolan.", "Szohod is the capital of Borduria.", "1871"]


def assert_stopped(pid: int, *urls: str | None) -> None:
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    for url in urls:
        if url:
            with pytest.raises(httpx.HTTPError):
                httpx.get(url.removesuffix("/v1") + "/health", timeout=2.0)


def test_embeddings_endpoint_serves_the_same_vectors_and_stops_cleanly() -> None:
    with LocalEndpoints(llm=None, embedder="hashing:64") as ep:
        assert ep.llm_url is None and ep.embeddings_url and ep.pid != os.getpid()
        remote = get_embedder("openai:hashing", base_url=ep.embeddings_url, api_key="sk-local")
        assert remote.dim == 64
        np.testing.assert_allclose(remote.embed(TEXTS), get_embedder("hashing:64").embed(TEXTS), atol=1e-6)
        bad = httpx.post(ep.embeddings_url + "/embeddings", json={"input": []})
        assert bad.status_code == 400
        remote.close()
    assert_stopped(ep.pid, ep.embeddings_url)


def test_a_launcher_that_cannot_start_says_why() -> None:
    with pytest.raises(T2RAGError, match="exited"):
        with LocalEndpoints(llm="local:/no/such/model.gguf", embedder=None):
            pass


def small_model_or_skip() -> None:
    from t2rag.llm.models import resolve_model_path

    try:
        resolve_model_path("small")
    except T2RAGError as e:
        if os.environ.get("CI"):  # CI installs the model: missing there is a failure, not a skip
            raise
        pytest.skip(f"local small model unavailable: {e}")


@pytest.mark.local_model
def test_openai_backends_against_llama_cpp_server_and_embeddings_endpoint() -> None:
    small_model_or_skip()
    from t2rag.llm.registry import get_llm

    schema: dict[str, Any] = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    with LocalEndpoints(llm="local:small", embedder="minilm", threads=1) as ep:
        assert ep.llm_url and ep.embeddings_url
        os.environ.setdefault("OPENAI_API_KEY", "sk-local")
        llm = get_llm("openai:small", base_url=ep.llm_url, context=4096)
        c = llm.complete([{"role": "user", "content": "Say hello in one word."}], max_tokens=8)
        assert c.text.strip() and c.prompt_tokens > 0 and 0 < c.completion_tokens <= 8
        c = llm.complete([{"role": "user", "content": "Which city is the capital of France? Reply in JSON."}],
                         schema=schema, max_tokens=32)
        assert isinstance(c.parsed, dict) and isinstance(c.parsed["answer"], str)  # the grammar held
        remote = get_embedder("openai:minilm", base_url=ep.embeddings_url)
        np.testing.assert_allclose(remote.embed(TEXTS), get_embedder("minilm").embed(TEXTS), atol=1e-5)
        remote.close()
        llm.close()  # type: ignore[attr-defined]
    assert_stopped(ep.pid, ep.llm_url, ep.embeddings_url)


@pytest.mark.parametrize("argv", [["--parallel", "0"], ["--context", "0"], ["--llm", "none", "--embedder", "none"],
                                  ["--llm", "openai:x"]])
def test_endpoints_usage_errors_exit_2_before_anything_starts(argv: list[str], capsys: Any) -> None:
    from t2rag.cli import main

    assert main(["endpoints", *argv]) == 2
    assert capsys.readouterr().err.count("\n") == 1
