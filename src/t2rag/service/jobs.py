"""Document jobs kept beside the index: durable across restarts, with ids that are never reused.

A directory index keeps them in ``jobs.sqlite`` inside the directory; a PostgreSQL index in a
``t2rag_jobs`` table of its database. A job's payload (the documents to add, the titles to
delete) is stored with it until it finishes, so a server killed mid-job picks the job up again
when it restarts (adding documents is incremental: only chunks not yet extracted cost calls).
Finished jobs are kept up to a bound, oldest dropped first.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from t2rag.index.store import is_url

JOBS_FILE = "jobs.sqlite"


@dataclass
class Job:
    id: str
    kind: str  # "add" | "delete"
    status: str = "queued"  # queued -> running -> done | failed
    created: float = field(default_factory=time.time)
    finished: float | None = None
    result: dict[str, Any] | None = None
    error: str | None = None
    progress: dict[str, int] | None = None  # while running: chunks done and total (not stored)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


_COLUMNS = "seq, kind, status, created, finished, result, error"


class JobLog:
    """The jobs of one index, in its own storage (see the module docstring)."""

    def __init__(self, location: str | Path, *, keep: int = 1000) -> None:
        self.keep = keep
        self._lock = threading.Lock()
        self._pg = is_url(location)
        if self._pg:
            from t2rag.index.pg_store import _connect

            self.db: Any = _connect(str(location))
            self.db.execute("CREATE TABLE IF NOT EXISTS t2rag_jobs (seq BIGSERIAL PRIMARY KEY, kind TEXT NOT NULL, "
                            "status TEXT NOT NULL, created DOUBLE PRECISION NOT NULL, finished DOUBLE PRECISION, "
                            "result TEXT, error TEXT, payload TEXT)")
        else:
            self.db = sqlite3.connect(Path(location) / JOBS_FILE, timeout=30.0, check_same_thread=False,
                                      isolation_level=None)
            self.db.execute("CREATE TABLE IF NOT EXISTS jobs (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
                            "kind TEXT NOT NULL, status TEXT NOT NULL, created REAL NOT NULL, finished REAL, "
                            "result TEXT, error TEXT, payload TEXT)")

    def _sql(self, sql: str) -> str:
        return sql.replace("jobs", "t2rag_jobs").replace("?", "%s") if self._pg else sql

    def _exec(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
        with self._lock:
            return self.db.execute(self._sql(sql), args)

    def add(self, kind: str, payload: list[Any]) -> Job:
        """Record a queued job with its payload; drop the oldest finished jobs past ``keep``."""
        created = time.time()
        with self._lock:
            cur = self.db.execute(self._sql("INSERT INTO jobs(kind, status, created, payload) VALUES (?, ?, ?, ?) "
                                            "RETURNING seq"), (kind, "queued", created, json.dumps(payload)))
            seq = cur.fetchone()[0]
            self.db.execute(self._sql("DELETE FROM jobs WHERE status IN ('done', 'failed') AND seq NOT IN "
                                      "(SELECT seq FROM jobs WHERE status IN ('done', 'failed') "
                                      "ORDER BY seq DESC LIMIT ?)"), (self.keep,))
        return Job(f"job-{seq}", kind, created=created)

    def update(self, job: Job) -> None:
        """Save a job's status; a finished job's payload is released."""
        done = job.status in ("done", "failed")
        self._exec("UPDATE jobs SET status = ?, finished = ?, result = ?, error = ?"
                   + (", payload = NULL" if done else "") + " WHERE seq = ?",
                   (job.status, job.finished, json.dumps(job.result) if job.result is not None else None,
                    job.error, _seq(job.id)))

    def get(self, job_id: str) -> Job | None:
        seq = _seq(job_id)
        if seq is None:
            return None
        row = self._exec(f"SELECT {_COLUMNS} FROM jobs WHERE seq = ?", (seq,)).fetchone()
        return _job(row) if row else None

    def waiting(self) -> int:
        return int(self._exec("SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')").fetchone()[0])

    def unfinished(self) -> list[tuple[Job, list[Any]]]:
        """Jobs a stopped server left queued or running, oldest first, with their payloads."""
        rows = self._exec(f"SELECT {_COLUMNS}, payload FROM jobs WHERE status IN ('queued', 'running') "
                          "ORDER BY seq").fetchall()
        return [(_job(r[:-1]), json.loads(r[-1] or "[]")) for r in rows]

    def close(self) -> None:
        with self._lock:
            self.db.close()


def _seq(job_id: str) -> int | None:
    prefix, _, number = job_id.partition("-")
    return int(number) if prefix == "job" and number.isdigit() and len(number) < 19 else None


def _job(row: Any) -> Job:
    seq, kind, status, created, finished, result, error = row
    return Job(f"job-{seq}", kind, status, created, finished, json.loads(result) if result else None, error)
