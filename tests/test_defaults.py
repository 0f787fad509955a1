"""Which LLM a command uses without --llm (the index's, the user's default, the bundled model),
Ollama by name, and the privacy rule: nothing reaches a host the user did not name."""

from __future__ import annotations

import ipaddress
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from fake_openai import fake_openai
from t2rag.defaults import choose_llm, index_llm, save_user_default
from t2rag.index.manifest import Manifest


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("T2RAG_LLM", "T2RAG_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("T2RAG_CACHE_DIR", str(tmp_path / "cache"))


def manifest(name: str | None, **endpoints: str) -> Manifest:
    return Manifest(embedder="hashing", dim=8, config={}, llm=name, endpoints=endpoints)


def test_the_order_is_flag_index_user_default_then_local(monkeypatch: pytest.MonkeyPatch) -> None:
    built = manifest("openai:qwen@127.0.0.1:9000", llm="http://127.0.0.1:9000/v1")
    assert choose_llm("local:small", None, built).source == "--llm"
    chosen = choose_llm(None, None, built)
    assert (chosen.spec, chosen.base_url, chosen.source) == ("openai:qwen", "http://127.0.0.1:9000/v1", "the index")
    assert choose_llm(None, "http://other:1/v1", built).base_url == "http://other:1/v1"  # the flag wins
    assert choose_llm(None, None, manifest("imported")).spec == "local"  # nothing to reach again
    save_user_default("ollama:qwen2.5:1.5b", None)
    assert choose_llm(None, None, manifest(None)).spec == "ollama:qwen2.5:1.5b"
    monkeypatch.setenv("T2RAG_LLM", "openai:gpt-4o-mini")
    assert choose_llm(None, None, manifest(None)).source == "T2RAG_LLM"  # the environment before the file
    assert choose_llm(None, None, built).source == "the index"


def test_an_index_names_only_llms_it_can_reach_again() -> None:
    assert index_llm(manifest("local:small")).spec == "local:small"
    assert index_llm(manifest("local:mymodel")) is None  # a GGUF path's stem is not a path
    assert index_llm(manifest("openai:gpt-4o-mini")).base_url is None  # the public endpoint, key from the env
    assert index_llm(manifest("openai:qwen@10.0.0.5:8000")) is None  # its URL was not recorded: not guessed


def test_ollama_is_reached_by_name_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from t2rag.llm.registry import get_llm, ollama_url

    assert ollama_url() == "http://127.0.0.1:11434/v1"
    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0:4000")
    assert ollama_url() == "http://0.0.0.0:4000/v1"
    with fake_openai() as (url, state):
        monkeypatch.setenv("OLLAMA_HOST", url)
        llm = get_llm("ollama:qwen2.5:1.5b")
        reply = llm.complete([{"role": "user", "content": "hi"}])
    assert reply.text.startswith("echo") and state.requests[0]["auth"] is None
    assert state.requests[0]["body"]["model"] == "qwen2.5:1.5b"


def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Fail the test on any connection to an address that is not this machine's."""
    attempts: list[Any] = []
    real_connect = socket.socket.connect
    real_create = socket.create_connection

    def check(address: Any) -> None:
        host = address[0] if isinstance(address, tuple) else address
        attempts.append(host)
        if isinstance(host, str) and host not in ("localhost",) and not host.startswith("/"):
            if not ipaddress.ip_address(host).is_loopback:
                raise AssertionError(f"connection attempted to a non-loopback address {host}")

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            check(address)
        return real_connect(self, address)

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> Any:
        check(address)
        return real_create(address, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    return attempts


def test_no_document_or_question_leaves_for_a_host_the_user_did_not_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    from t2rag.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", "sk-a-key-for-something-else")  # must not pull anything public
    attempts = _loopback_only(monkeypatch)
    (tmp_path / "a.md").write_text("Alpha is a town in Borduria.")
    ix = str(tmp_path / "ix")
    with fake_openai() as (url, state):
        assert main(["index", ix, str(tmp_path / "a.md"), "--llm", "openai:qwen", "--embedder",
                     "openai:nomic-embed-text", "--base-url", url, "-q"]) == 0
        recorded = json.loads((Path(ix) / "manifest.json").read_text())
        assert recorded["endpoints"] == {"llm": url, "embedder": url} and "sk-" not in json.dumps(recorded)
        capsys.readouterr()
        # no --llm, no --base-url: the index's own servers, named when it was built
        assert main(["ask", ix, "Where is Alpha?"]) == 0
        err = capsys.readouterr().err
        assert "LLM openai:qwen (from the index" in err
    paths = [r["path"] for r in state.requests]
    assert paths.count("/chat/completions") >= 3 and "/embeddings" in paths
    assert attempts and all(a == "127.0.0.1" for a in attempts)


def test_the_defaults_command_saves_shows_and_clears(capsys: Any) -> None:
    from t2rag.cli import main

    assert main(["defaults"]) == 0 and "no default LLM" in capsys.readouterr().out
    assert main(["defaults", "--llm", "ollama:qwen2.5:1.5b"]) == 0
    assert "default LLM ollama:qwen2.5:1.5b (from " in capsys.readouterr().out
    assert main(["defaults", "--llm", "nope:x"]) == 1 and "unknown LLM" in capsys.readouterr().err
    assert main(["defaults", "--clear"]) == 0 and "no default LLM" in capsys.readouterr().out
