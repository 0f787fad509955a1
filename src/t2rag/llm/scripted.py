"""A deterministic scripted LLM (a test double): replies by rule or in sequence, records calls."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import Any

from t2rag.errors import BackendError
from t2rag.jsontext import loads
from t2rag.llm.base import DEFAULT_MAX_TOKENS
from t2rag.types import Completion, Message

Reply = str | dict[str, Any] | list[Any] | Callable[[list[Message]], str]


def _to_text(reply: Reply, messages: list[Message]) -> str:
    if callable(reply):
        return reply(messages)
    if isinstance(reply, str):
        return reply
    return json.dumps(reply)


class ScriptedLLM:
    """Answers from ``rules`` (regex on the last user message -> reply, first match wins),
    else from ``replies`` in order, else ``default``. Dict/list replies are sent as JSON.
    A rule's reply may be a list wrapped in ``Seq`` to reply differently on each match.
    Token counts are whitespace word counts, so usage accounting is exercised too."""

    max_concurrency = 1

    def __init__(
        self,
        replies: list[Reply] | None = None,
        rules: list[tuple[str, Reply | Seq]] | None = None,
        default: Reply | None = None,
        name: str = "scripted",
    ) -> None:
        self.name = name
        self._replies = list(replies or [])
        self._rules = [(re.compile(p, re.S), r) for p, r in (rules or [])]
        self._default = default
        self._lock = threading.Lock()
        self.calls: list[dict[str, Any]] = []

    def complete(
        self,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
    ) -> Completion:
        with self._lock:
            self.calls.append({"messages": messages, "schema": schema, "max_tokens": max_tokens})
            last = messages[-1]["content"] if messages else ""
            reply: Reply | None = None
            for pattern, r in self._rules:
                if pattern.search(last):
                    reply = r.next() if isinstance(r, Seq) else r
                    break
            if reply is None and self._replies:
                reply = self._replies.pop(0)
            if reply is None:
                reply = self._default
            if reply is None:
                raise BackendError(f"scripted LLM has no reply for: {last[:80]!r}")
            text = _to_text(reply, messages)
        parsed: Any = None
        if schema is not None:
            try:
                parsed = loads(text)
            except ValueError:
                parsed = None
        prompt_tokens = sum(len(m["content"].split()) for m in messages)
        return Completion(
            text=text,
            parsed=parsed,
            prompt_tokens=prompt_tokens,
            completion_tokens=len(text.split()),
            model=self.name,
        )


class Seq:
    """A rule reply that yields its items in turn (the last one repeats)."""

    def __init__(self, *items: Reply) -> None:
        self._items = list(items)
        self._i = 0

    def next(self) -> Reply:
        item = self._items[min(self._i, len(self._items) - 1)]
        self._i += 1
        return item
