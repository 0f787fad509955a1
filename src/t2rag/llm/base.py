"""The LLM protocol: one required method, ``complete``; everything else wraps it."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from t2rag.types import Completion, Message

DEFAULT_MAX_TOKENS = 512  # reply budget of a call that does not say otherwise


@runtime_checkable
class LLM(Protocol):
    """A chat model. ``name`` identifies the model (it is part of cache keys and manifests).

    ``complete`` sends chat ``messages``; when ``schema`` (a JSON schema dict) is given the
    backend constrains or at least requests JSON output and sets ``Completion.parsed`` when
    the reply parses as JSON (validation against the schema is the caller's job).
    Backends raise ``BackendError`` for failures the caller cannot fix by re-asking.
    """

    name: str

    def complete(
        self,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
    ) -> Completion: ...


def parallelism(llm: LLM) -> int:
    """How many concurrent ``complete`` calls a backend benefits from (1 unless it says)."""
    return int(getattr(llm, "max_concurrency", 1) or 1)
