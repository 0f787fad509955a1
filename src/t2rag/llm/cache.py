"""A persistent SQLite response cache that wraps any LLM backend."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from t2rag.llm.base import DEFAULT_MAX_TOKENS, LLM
from t2rag.types import Completion, Message


def request_key(model: str, messages: list[Message], schema: Any, max_tokens: int, temperature: float) -> str:
    """Hash of the whole request: same request, same key; any change, new key."""
    payload = json.dumps(
        {"model": model, "messages": messages, "schema": schema, "max_tokens": max_tokens, "temperature": temperature},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class CachedLLM:
    """Serves repeated requests from ``path`` (SQLite). Hits keep the original token counts
    (so cost comparisons don't depend on the cache) and are flagged ``cached=True``."""

    def __init__(self, inner: LLM, path: str | Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.max_concurrency = int(getattr(inner, "max_concurrency", 1) or 1)
        self.context_tokens = getattr(inner, "context_tokens", None)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._conn() as db:
            db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0)
            conn.execute("PRAGMA journal_mode=WAL")
            self._local.conn = conn
        return conn

    def complete(
        self,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
    ) -> Completion:
        key = request_key(self.name, messages, schema, max_tokens, temperature)
        t0 = time.perf_counter()
        db = self._conn()
        row = db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        if row is not None:
            stored = json.loads(row[0])
            return replace(Completion(**stored), cached=True, wall_s=time.perf_counter() - t0)
        c = self.inner.complete(messages, schema=schema, max_tokens=max_tokens, temperature=temperature)
        with db:
            db.execute(
                "INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)",
                (key, json.dumps(asdict(c), ensure_ascii=False)),
            )
        return c
