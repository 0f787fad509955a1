"""Replay committed questions from the LLM response cache alone, to show a refactor changed no answer.

Every LLM request is looked up in the response cache (``~/.cache/t2rag/llm-cache.sqlite``); a
request that is not there is an error, not a model call, so the replay needs no model, takes
seconds, and any change in what the engine sends the model shows up as a miss. Answers are
written as JSON lines; ``--compare OLD`` prints how many are identical.

    .venv/bin/python benchmarks/replay.py --index results/indexes/musique-minilm-l6-v2-int8-local_default \
        --predictions results/musique-local/predictions/t2rag.jsonl --limit 30 --out /tmp/replay-before.jsonl
    (refactor)
    .venv/bin/python benchmarks/replay.py ... --out /tmp/replay-after.jsonl --compare /tmp/replay-before.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from t2rag.api import T2RAG
from t2rag.errors import BackendError
from t2rag.llm.cache import CachedLLM
from t2rag.paths import default_llm_cache
from t2rag.types import Completion, Message


class CacheMiss(BackendError):
    """A request the response cache does not hold."""


class CacheOnly:
    """An LLM that has no model: every request must be served by the cache around it."""

    max_concurrency = 1
    context_tokens = 8192

    def __init__(self, name: str) -> None:
        self.name = name

    def complete(self, messages: list[Message], **_: Any) -> Completion:
        raise CacheMiss(f"not in the response cache: {messages[-1]['content'][:120]!r}")


def replay(index: str, questions: list[str], model: str, config: dict[str, Any]) -> list[dict[str, Any]]:
    rag = T2RAG.open(index, llm=CachedLLM(CacheOnly(model), default_llm_cache()), log=False)
    rows = []
    for q in questions:
        try:
            a = rag.ask(q, config=config)
            usage = {k: v for k, v in a.usage["total"].items() if k != "wall_s"}  # the one thing that varies
            rows.append({"question": q, "answer": a.answer, "termination": a.termination, "usage": usage})
        except CacheMiss as e:
            rows.append({"question": q, "miss": str(e)})
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--index", required=True)
    p.add_argument("--predictions", required=True, help="a bench predictions file: its questions, in order")
    p.add_argument("--limit", type=int, default=30)
    p.add_argument("--model", default="local:default", help="the LLM name the cached replies were made with")
    p.add_argument("--config", default="{}", help="query config as JSON")
    p.add_argument("--out", required=True)
    p.add_argument("--compare", help="an earlier replay's output")
    a = p.parse_args(argv)
    questions = [json.loads(line)["question"] for line in open(a.predictions)][: a.limit]
    rows = replay(a.index, questions, a.model, json.loads(a.config))
    Path(a.out).write_text("".join(json.dumps(r) + "\n" for r in rows))
    misses = sum("miss" in r for r in rows)
    print(f"{len(rows)} questions replayed, {misses} cache misses -> {a.out}")
    if a.compare:
        old = [json.loads(line) for line in open(a.compare)]
        same = sum(x == y for x, y in zip(old, rows, strict=True)
                   for x in [{**x, "usage": {k: v for k, v in x.get("usage", {}).items() if k != "wall_s"}}])
        print(f"identical to {a.compare}: {same} of {len(rows)}")
        return 0 if same == len(rows) else 1
    return 0 if not misses else 1


if __name__ == "__main__":
    sys.exit(main())
