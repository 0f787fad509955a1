"""The log of answers: every question answered over an index, with its answer, sources, cost
and settings, kept beside the index (``t2rag logs``, the viewer's history, ``/v1/history``).

A directory index keeps it in ``answers.sqlite`` inside the directory; a PostgreSQL index in a
``t2rag_answers`` table of its database. Each entry holds the whole ``Answer`` (trace included),
so an entry can be shown again exactly as it was answered. Only the newest ``keep`` entries are
kept. ``T2RAG_NO_LOG=1`` (or ``log=False``, ``--no-log``) turns the log off; an index whose
folder cannot be written (a read-only mount) is answered without a log, said once on stderr.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from t2rag.index.store import is_url
from t2rag.result import Answer

LOG_FILE = "answers.sqlite"
NO_LOG_ENV = "T2RAG_NO_LOG"
KEEP = 10_000


@dataclass(frozen=True)
class LogEntry:
    id: int
    time: float
    via: str  # "cli", "api", "rest", "mcp", "chat"
    question: str
    answer: str
    termination: str
    model: str
    tokens: int
    seconds: float
    sources: list[str]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _summary(a: Answer) -> tuple[str, str, str, int, float, str]:
    total = a.usage.get("total", {})
    tokens = int(total.get("prompt_tokens", 0)) + int(total.get("completion_tokens", 0))
    sources = list(dict.fromkeys(c.label() for c in a.answer_chunks))
    return a.answer, a.termination, a.model, tokens, a.timing.total_s, json.dumps(sources, ensure_ascii=False)


_FIELDS = "seq, created, via, question, answer, termination, model, tokens, seconds, sources"


class AnswerLog:
    """The answers of one index (see the module docstring); safe to share between threads."""

    def __init__(self, location: str | Path, *, keep: int = KEEP) -> None:
        self.keep = keep
        self._lock = threading.Lock()
        self._pg = is_url(location)
        self._mark = "%s" if self._pg else "?"
        if self._pg:
            from t2rag.index.pg_store import _connect

            self.db: Any = _connect(str(location))
            serial, real = "BIGSERIAL PRIMARY KEY", "DOUBLE PRECISION"
            self._table = "t2rag_answers"
        else:
            self.db = sqlite3.connect(Path(location) / LOG_FILE, timeout=30.0, check_same_thread=False,
                                      isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            serial, real = "INTEGER PRIMARY KEY AUTOINCREMENT", "REAL"
            self._table = "answers"
        self.db.execute(f"CREATE TABLE IF NOT EXISTS {self._table} (seq {serial}, created {real} NOT NULL, "
                        "via TEXT NOT NULL, question TEXT NOT NULL, answer TEXT NOT NULL, termination TEXT NOT NULL, "
                        f"model TEXT NOT NULL, tokens INTEGER NOT NULL, seconds {real} NOT NULL, "
                        "sources TEXT NOT NULL, answer_json TEXT NOT NULL)")

    @classmethod
    def open(cls, location: str | Path) -> AnswerLog | None:
        """The index's log, or None when it is turned off or cannot be written (said once)."""
        if os.environ.get(NO_LOG_ENV, "").strip() not in ("", "0"):
            return None
        try:
            return cls(location)
        except Exception as e:  # a read-only folder, a database without CREATE rights
            print(f"t2rag: answers are not logged ({' '.join(str(e).split())[:120]})", file=sys.stderr)
            return None

    def record(self, answer: Answer, via: str) -> int:
        """Add ``answer``; returns its id. Older entries beyond ``keep`` are dropped."""
        m = self._mark
        row = (time.time(), via, answer.question, *_summary(answer), json.dumps(answer.to_dict(), ensure_ascii=False))
        with self._lock:
            cur = self.db.execute(
                f"INSERT INTO {self._table} (created, via, question, answer, termination, model, tokens, seconds, "
                f"sources, answer_json) VALUES ({', '.join([m] * 10)}) RETURNING seq", row)
            seq = int(cur.fetchone()[0])
            self.db.execute(f"DELETE FROM {self._table} WHERE seq <= {m}", (seq - self.keep,))
        return seq

    def entries(self, limit: int = 20, before: int | None = None, query: str = "") -> list[LogEntry]:
        """The newest entries first (ids below ``before``), questions containing ``query``."""
        m = self._mark
        where = ["question LIKE " + m]
        args: list[Any] = [f"%{query}%"]
        if before is not None:
            where.append("seq < " + m)
            args.append(before)
        with self._lock:
            rows = self.db.execute(f"SELECT {_FIELDS} FROM {self._table} WHERE {' AND '.join(where)} "
                                   f"ORDER BY seq DESC LIMIT {m}", (*args, limit)).fetchall()
        return [LogEntry(int(r[0]), float(r[1]), r[2], r[3], r[4], r[5], r[6], int(r[7]), float(r[8]),
                         json.loads(r[9])) for r in rows]

    def answer(self, entry_id: int) -> Answer | None:
        """The whole Answer an entry recorded, trace included."""
        with self._lock:
            sql = f"SELECT answer_json FROM {self._table} WHERE seq = {self._mark}"
            row = self.db.execute(sql, (entry_id,)).fetchone()
        if not row:
            return None
        answer = Answer.from_dict(json.loads(row[0]))
        answer.log_id = entry_id
        return answer

    def close(self) -> None:
        with self._lock:
            self.db.close()
