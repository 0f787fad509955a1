"""A JSON-over-HTTP client for OpenAI-compatible servers: auth, retries with backoff, one-line errors."""

from __future__ import annotations

import email.utils
import os
import random
import time
from typing import Any, TypedDict, Unpack
from urllib.parse import urlsplit

import httpx

from t2rag.errors import BackendError, ConfigError
from t2rag.redact import redact

OPENAI_BASE_URL = "https://api.openai.com/v1"
_MAX_SLEEP_S = 60.0


class HTTPStatusError(BackendError):
    """The server answered with a non-retryable (or finally failed) HTTP status."""

    def __init__(self, message: str, status: int, detail: str) -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail


def resolve_base_url(base_url: str | None) -> str:
    return (base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL).rstrip("/")


def backend_name(kind: str, model: str, base_url: str) -> str:
    """``kind:model``, plus ``@host[:port]`` off the default endpoint so caches never mix servers."""
    if base_url == OPENAI_BASE_URL:
        return f"{kind}:{model}"
    parts = urlsplit(base_url)
    host = parts.hostname or base_url
    return f"{kind}:{model}@{host}:{parts.port}" if parts.port else f"{kind}:{model}@{host}"


def _short(text: str, limit: int = 200) -> str:
    return " ".join(text.split())[:limit]


def _server_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return _short(response.text)
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict) and err.get("message"):
        return _short(str(err["message"]))
    if isinstance(err, str):
        return _short(err)
    return _short(response.text)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class JSONClient:
    """POSTs JSON to ``base_url + path``; retries only 429, 5xx and connection/timeout errors.

    The API key lives only in the underlying client's headers: it is never part of
    ``repr``, log lines or exception messages.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None,
        api_key_env: str,
        timeout: float,
        max_retries: int,
        backoff_s: float = 0.5,
        max_connections: int = 8,
    ) -> None:
        self.base_url = base_url
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        key = api_key or os.environ.get(api_key_env)
        if not key and base_url == OPENAI_BASE_URL:
            raise ConfigError(f"no API key: pass api_key or set {api_key_env}")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(
            timeout=timeout,
            headers=headers,
            limits=httpx.Limits(max_connections=max_connections),
        )

    def __repr__(self) -> str:
        return f"JSONClient(base_url={redact(self.base_url)!r})"

    def close(self) -> None:
        self._client.close()

    def _sleep_s(self, attempt: int, response: httpx.Response | None) -> float:
        hinted = _retry_after(response) if response is not None else None
        if hinted is not None:
            return min(hinted, _MAX_SLEEP_S)
        base = min(self.backoff_s * (2**attempt), _MAX_SLEEP_S)
        return base * (0.5 + random.random() / 2)

    def post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        url = self.base_url + path
        shown = redact(url)
        last = ""
        for attempt in range(self.max_retries + 1):
            response: httpx.Response | None = None
            try:
                response = self._client.post(url, json=payload)
            except httpx.TransportError as e:  # connection refused/reset, timeouts: worth retrying
                last = f"{type(e).__name__}: {_short(str(e), 120)}"
            except httpx.HTTPError as e:
                raise BackendError(f"POST {shown} failed: {type(e).__name__}: "
                                   f"{_short(str(e).replace(url, shown), 120)}") from None
            else:
                if response.status_code < 400:
                    return self._json(response, shown)
                detail = _server_message(response)
                last = f"HTTP {response.status_code}: {detail}"
                if response.status_code != 429 and response.status_code < 500:
                    raise HTTPStatusError(f"POST {shown} failed: {last}", response.status_code, detail)
            if attempt < self.max_retries:
                time.sleep(self._sleep_s(attempt, response))
        raise BackendError(f"POST {shown} failed after {self.max_retries + 1} attempts: {last}")

    @staticmethod
    def _json(response: httpx.Response, url: str) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError:
            raise BackendError(f"POST {url}: response is not JSON: {_short(response.text, 80)}") from None
        if not isinstance(body, dict):
            raise BackendError(f"POST {url}: expected a JSON object, got {type(body).__name__}")
        return body


class Connection(TypedDict, total=False):
    """How to reach an OpenAI-compatible server: the options every backend over one takes."""

    base_url: str | None  # default: $OPENAI_BASE_URL, else the public endpoint
    api_key: str | None  # default: the environment variable api_key_env names
    api_key_env: str  # OPENAI_API_KEY
    timeout: float  # seconds per request (60)
    max_retries: int  # for 429, 5xx and connection errors (4)
    backoff_s: float  # first retry's wait, doubled each time (0.5)


def connect(kind: str, model: str, *, max_connections: int = 8,
            **c: Unpack[Connection]) -> tuple[str, str, JSONClient]:
    """(base URL, backend name, client) for ``model`` at the server ``c`` describes."""
    url = resolve_base_url(c.get("base_url"))
    client = JSONClient(url, api_key=c.get("api_key"), api_key_env=c.get("api_key_env", "OPENAI_API_KEY"),
                        timeout=c.get("timeout", 60.0), max_retries=c.get("max_retries", 4),
                        backoff_s=c.get("backoff_s", 0.5), max_connections=max_connections)
    return url, backend_name(kind, model, url), client
