"""A chat model behind any OpenAI-compatible ``/chat/completions`` endpoint (OpenAI, vLLM, Ollama, ...)."""

from __future__ import annotations

import threading
import time
from typing import Any, Unpack

from t2rag.errors import BackendError, ConfigError, RequestRejected
from t2rag.jsontext import loads
from t2rag.llm.base import DEFAULT_MAX_TOKENS
from t2rag.llm.structured import clean_text
from t2rag.openai_http import Connection, HTTPStatusError, connect
from t2rag.types import Completion, Message

# Each structured-output mode falls back to the next when a server rejects response_format.
_STRUCTURED_MODES = ("json_schema", "json_object", "none")


def _response_format(mode: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "out", "schema": schema, "strict": False},
        }
    if mode == "json_object":
        return {"type": "json_object"}
    return None


class OpenAICompatLLM:
    """Chat completions over HTTP; retries transient failures, never logs or repeats the API key."""

    def __init__(self, model: str, *, max_concurrency: int = 8, structured: str = "json_schema",
                 context_tokens: int | None = None, **connection: Unpack[Connection]) -> None:
        if structured not in _STRUCTURED_MODES:
            raise ConfigError(f"structured must be one of {', '.join(_STRUCTURED_MODES)}; got {structured!r}")
        self.model = model
        self.max_concurrency = max_concurrency
        # The server's context window, when known: prompts that carry passages are fitted to it.
        self.context_tokens = context_tokens
        self._structured = structured
        self._lock = threading.Lock()
        self.base_url, self.name, self._http = connect("openai", model, max_connections=max_concurrency, **connection)

    def __repr__(self) -> str:
        return f"OpenAICompatLLM({self.name!r})"

    def close(self) -> None:
        """Close the HTTP connections (they are also closed when the object is collected)."""
        self._http.close()

    @property
    def structured(self) -> str:
        """The structured-output mode in use (it may have fallen back from the configured one)."""
        return self._structured

    def complete(
        self,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
    ) -> Completion:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        t0 = time.perf_counter()
        while True:
            mode = self._structured
            fmt = _response_format(mode, schema) if schema is not None else None
            if fmt is None:
                payload.pop("response_format", None)
            else:
                payload["response_format"] = fmt
            try:
                body = self._http.post("/chat/completions", payload)
                break
            except HTTPStatusError as e:
                if fmt is not None and e.status == 400 and "response_format" in e.detail.lower():
                    self._downgrade(mode)
                    continue
                if e.status in (400, 413, 422):  # this request is refused; the server is alive
                    raise RequestRejected(str(e)) from None
                raise
        return self._completion(body, schema is not None, time.perf_counter() - t0)

    def _downgrade(self, rejected: str) -> None:
        # Remember the fallback so later calls skip the modes this server rejects.
        with self._lock:
            if self._structured == rejected:
                self._structured = _STRUCTURED_MODES[_STRUCTURED_MODES.index(rejected) + 1]

    def _completion(self, body: dict[str, Any], want_json: bool, wall: float) -> Completion:
        try:
            text = clean_text(body["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError):
            raise BackendError(f"{self.name}: response without choices[0].message.content") from None
        usage = _dict(body.get("usage"))
        details = _dict(usage.get("prompt_tokens_details"))
        parsed: Any = None
        if want_json:
            try:
                parsed = loads(text)
            except ValueError:
                parsed = None
        return Completion(
            text=text,
            prompt_tokens=_count(usage.get("prompt_tokens")),
            completion_tokens=_count(usage.get("completion_tokens")),
            wall_s=wall,
            parsed=parsed,
            model=self.name,
            cached_prompt_tokens=_count(details.get("cached_tokens")),
        )


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _count(value: Any) -> int:
    """A token count from a server's usage block; anything but a non-negative integer counts 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
