"""A persistent SQLite response cache that wraps any LLM backend."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import IO, Any

from t2rag.llm.base import DEFAULT_MAX_TOKENS, LLM
from t2rag.outfile import append_line, jsonl_rows, open_jsonl_for_append
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
        self._replies: IO[str] | None = None  # the replies file of keep_replies
        self._kept: set[str] = set()
        self._lock = threading.Lock()
        with self._conn() as db:
            db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def keep_replies(self, path: str | Path) -> int:
        """Keep every reply this cache serves in the JSONL file ``path`` too (one ``{"key",
        "value"}`` row per request, each once), after adding the file's rows to the cache. A
        run directory that carries its replies is replayed exactly on another machine: the same
        requests get the same replies, so a variant differs from it only where its requests do.
        Returns how many replies the file added to the cache; torn or malformed rows are skipped."""
        self.close_replies()
        path = Path(path)
        rows = [(r["key"], r["value"]) for r in jsonl_rows(path)
                if isinstance(r.get("key"), str) and isinstance(r.get("value"), str)]
        db = self._conn()
        with db:
            before = db.total_changes
            db.executemany("INSERT OR IGNORE INTO responses (key, value) VALUES (?, ?)", rows)
            added = db.total_changes - before
        with self._lock:
            self._kept = {k for k, _ in rows}
            self._replies = open_jsonl_for_append(path)
        return added

    def close_replies(self) -> None:
        with self._lock:
            if self._replies is not None:
                self._replies.close()
                self._replies = None

    def _keep(self, key: str, value: str) -> None:
        with self._lock:
            if self._replies is not None and key not in self._kept:
                append_line(self._replies, {"key": key, "value": value})
                self._kept.add(key)

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
            self._keep(key, row[0])
            stored = json.loads(row[0])
            return replace(Completion(**stored), cached=True, wall_s=time.perf_counter() - t0)
        c = self.inner.complete(messages, schema=schema, max_tokens=max_tokens, temperature=temperature)
        value = json.dumps(asdict(c), ensure_ascii=False)
        with db:
            db.execute("INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)", (key, value))
        self._keep(key, value)
        return c
