"""Prompts fitted to the model's context, and the one LLM factory the CLI, API and bench share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from t2rag.cli import main
from t2rag.errors import ConfigError
from t2rag.eval.baselines import IRCoT
from t2rag.llm.budget import estimate_tokens, fit_passages
from t2rag.llm.cache import CachedLLM
from t2rag.llm.registry import get_llm, with_cache
from t2rag.llm.scripted import ScriptedLLM
from t2rag.query.synthesize import read_passages, read_prompt
from t2rag.types import Chunk, Usage

LONG = " ".join(["The harbour of Sighs was rebuilt after the storm of 1871."] * 60)  # ~3,500 characters


def small_context_llm(context: int, reply: str = '{"reasoning": "", "answer": "1871"}') -> ScriptedLLM:
    llm = ScriptedLLM(default=reply)
    llm.context_tokens = context  # type: ignore[attr-defined]
    return llm


def chunks(n: int) -> list[Chunk]:
    return [Chunk.make(f"Doc {i}", LONG) for i in range(n)]


def test_passages_beyond_the_context_are_left_out_best_first_kept() -> None:
    llm, usage = small_context_llm(4096), Usage()
    messages, kept = fit_passages(llm, lambda cs: read_prompt("When?", cs), chunks(5), max_tokens=256,
                                  stage="read", usage=usage)
    assert 0 < len(kept) < 5 and [c.title for c in kept] == [f"Doc {i}" for i in range(len(kept))]
    assert estimate_tokens(messages) + 256 <= 4096
    assert usage.stages["read"].passages_trimmed == 5 - len(kept)


def test_a_passage_longer_than_the_context_is_cut_not_dropped() -> None:
    usage = Usage()
    a = read_passages(small_context_llm(600), "When?", chunks(2), usage=usage, max_tokens=100)
    assert a.answer == "1871" and len(a.chunks) == 1 and a.chunks[0].text == LONG[:len(a.chunks[0].text)]
    assert len(a.chunks[0].text) < len(LONG) and usage.stages["read"].passages_trimmed == 2


def test_without_a_known_context_nothing_is_trimmed() -> None:
    usage = Usage()
    _, kept = fit_passages(ScriptedLLM(default="x"), lambda cs: read_prompt("q", cs), chunks(9), max_tokens=512,
                           stage="read", usage=usage)
    assert len(kept) == 9 and usage.stages == {}


def test_ircot_steps_fit_the_context_as_the_pool_grows() -> None:
    class Pool:
        def retrieve(self, query: str, k: int) -> list[Chunk]:
            return [Chunk.make(f"{query[:10]} {i}", LONG) for i in range(k)]

    llm = small_context_llm(2048, reply="Nothing yet.")
    p = IRCoT(Pool(), llm, k=5, rounds=2).predict("When was the harbour rebuilt?")
    assert all(estimate_tokens(c["messages"]) <= 2048 for c in llm.calls)
    assert p.usage.stages["ircot_step"].passages_trimmed > 0


def test_the_factory_checks_options_and_wraps_the_cache_once(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="parallel"):
        get_llm("scripted", parallel=0)
    with pytest.raises(ConfigError, match="base URL"):
        get_llm("local", base_url="http://127.0.0.1:1/v1")
    with pytest.raises(ConfigError, match="context"):
        get_llm("scripted", context=10)
    assert isinstance(get_llm("scripted", cache=True), ScriptedLLM)  # the test double is never cached
    cached = with_cache(ScriptedLLM(default="x"), tmp_path / "c.sqlite")
    assert isinstance(cached, CachedLLM) and with_cache(cached, tmp_path / "d.sqlite") is cached
    remote = get_llm("openai:m", base_url="http://127.0.0.1:9/v1", context=8192, parallel=3)
    assert remote.context_tokens == 8192 and remote.max_concurrency == 3


# (--base-url without --llm is not an error on its own: the index's own LLM may be a server's)
@pytest.mark.parametrize("argv", [["--parallel", "0"], ["--context", "12"], ["--llm", "local", "--base-url", "http://x/v1"]])
def test_bad_llm_options_are_usage_errors(argv: list[str], tmp_path: Path, capsys: Any) -> None:
    assert main(["ask", str(tmp_path / "missing"), "Who?", *argv]) == 2
    assert capsys.readouterr().err.count("\n") == 1
