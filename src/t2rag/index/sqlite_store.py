"""The directory store: metadata in SQLite (the source of truth, transactional) + FAISS vectors.

Vectors are kept as blobs in SQLite too, so the FAISS file is derived data: it is saved
atomically with the metadata generation it reflects and rebuilt whenever it lags (after a
crash, or after deletes on an index type that cannot remove ids).
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import faiss
import numpy as np

from t2rag.config import StoreConfig
from t2rag.errors import IndexDamagedError, IndexLockedError
from t2rag.index.lexical import LexicalIndex, clean_temp
from t2rag.index.manifest import Manifest
from t2rag.index.openie import records_to_forget
from t2rag.index.vectors import FaissVectors, exact_search
from t2rag.index.vectors import clean_temp as clean_vector_temp
from t2rag.types import Chunk, DocumentSummary, Location, OpenIERecord, Proposition, PropositionHit, Triple

F = TypeVar("F", bound=Callable[..., Any])

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (id TEXT PRIMARY KEY, title TEXT NOT NULL, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS doc_chunks (
  doc TEXT NOT NULL, chunk_id TEXT NOT NULL REFERENCES chunks(id), seq INTEGER NOT NULL,
  source TEXT, page INTEGER, last_page INTEGER, span_start INTEGER, span_end INTEGER,
  PRIMARY KEY (doc, chunk_id));
CREATE INDEX IF NOT EXISTS doc_chunks_chunk ON doc_chunks(chunk_id);
CREATE TABLE IF NOT EXISTS openie (
  chunk_id TEXT PRIMARY KEY REFERENCES chunks(id), source TEXT NOT NULL, raw TEXT,
  error TEXT, entities TEXT NOT NULL, n_triples INTEGER NOT NULL, dropped INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS triples (
  chunk_id TEXT NOT NULL REFERENCES chunks(id), subject TEXT NOT NULL, predicate TEXT NOT NULL,
  object TEXT NOT NULL, prop_id TEXT NOT NULL, PRIMARY KEY (chunk_id, subject, predicate, object));
CREATE TABLE IF NOT EXISTS propositions (
  rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, text TEXT NOT NULL, subject TEXT NOT NULL,
  predicate TEXT NOT NULL, object TEXT NOT NULL, vector BLOB);
CREATE TABLE IF NOT EXISTS prop_chunks (
  prop_id TEXT NOT NULL, chunk_id TEXT NOT NULL, PRIMARY KEY (prop_id, chunk_id));
CREATE INDEX IF NOT EXISTS prop_chunks_chunk ON prop_chunks(chunk_id);
CREATE TABLE IF NOT EXISTS chunk_vectors (chunk_id TEXT PRIMARY KEY, vector BLOB NOT NULL);
"""


def _locked(method: F) -> F:
    """Run a method holding the store's lock: one SQLite connection is shared by threads."""

    @functools.wraps(method)
    def wrapper(self: SqliteStore, *args: Any, **kwargs: Any) -> Any:
        with self._db_lock, self.database_errors():
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class SqliteStore:
    """SQLite + FAISS in one directory. Open with ``writer=True`` to take the one-writer lock."""

    def __init__(self, directory: Path, dim: int, cfg: StoreConfig, *, writer: bool = False) -> None:
        self.dir = Path(directory)
        self.dim = dim
        self.cfg = cfg
        self.writer = writer
        self._lock_fd: int | None = None
        path = self.dir / "meta.sqlite"
        if not writer and not path.exists():
            raise IndexDamagedError(f"{path} is missing: the index's data is gone; rebuild the index")
        if path.exists() and not path.is_file():
            raise IndexDamagedError(f"{path} is not a file (a folder or a device stands in its place); "
                                    "restore it or rebuild the index")
        if writer:
            self._take_lock()
        self._db_lock = threading.RLock()
        self.db = self._connect(path)
        try:
            with self.database_errors():
                self._open_schema()
        except IndexDamagedError:
            self.db.close()
            self._release_lock()
            raise
        if writer:
            clean_temp(self.dir)
            clean_vector_temp(self.dir)
        self.location = str(self.dir)
        self.vectors = FaissVectors(self.dir / "vectors.faiss", cfg, dim)
        self._lexical: LexicalIndex | None = None
        self._chunk_vectors: tuple[list[str], np.ndarray] | None = None
        self._chunk_generation = -1

    def _connect(self, path: Path) -> sqlite3.Connection:
        """A writer's connection, or a reader's read-only one: a reader never writes, so an
        index on a read-only mount (or owned by someone else) can be read. Without write access
        to the folder, SQLite cannot make the WAL's shared-memory file; then the database is
        opened as immutable, which is sound because nothing can write it there either."""
        if self.writer:
            return sqlite3.connect(path, timeout=30.0, check_same_thread=False)
        uri = "file:" + urllib.parse.quote(str(path.resolve()))
        for mode in ("?mode=ro", "?mode=ro&immutable=1"):
            db = sqlite3.connect(uri + mode, uri=True, timeout=30.0, check_same_thread=False)
            try:
                db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
                return db
            except sqlite3.DatabaseError:  # no -shm possible (first); damaged (both: reported on use)
                db.close()
        return sqlite3.connect(uri + "?mode=ro", uri=True, timeout=30.0, check_same_thread=False)  # its error

    def _open_schema(self) -> None:
        if self.writer:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(SCHEMA)
            if "dropped" not in {r[1] for r in self.db.execute("PRAGMA table_info(openie)")}:  # older indexes
                self.db.execute("ALTER TABLE openie ADD COLUMN dropped INTEGER NOT NULL DEFAULT 0")
            if "source" not in {r[1] for r in self.db.execute("PRAGMA table_info(doc_chunks)")}:
                for col in Location.COLUMNS:
                    kind = "TEXT" if col == "source" else "INTEGER"
                    self.db.execute(f"ALTER TABLE doc_chunks ADD COLUMN {col} {kind}")
            self.db.commit()
        elif not self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks'").fetchone():
            raise IndexDamagedError(f"{self.dir / 'meta.sqlite'} holds no index tables (emptied or replaced); "
                                    "rebuild the index")

    @contextmanager
    def database_errors(self) -> Iterator[None]:
        """SQLite's errors on a damaged file as one line naming it."""
        try:
            yield
        except sqlite3.DatabaseError as e:
            raise IndexDamagedError(f"{self.dir / 'meta.sqlite'}: {e}; restore it or rebuild the index") from None

    # --- locking -------------------------------------------------------------
    def _take_lock(self) -> None:
        fd = os.open(self.dir / "write.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise IndexLockedError(f"another process is writing to {self.dir}; try again when it finishes") from None
        self._lock_fd = fd

    def close(self) -> None:
        if self.writer and self.vectors.loaded:
            self.save_vectors()
        self.db.close()
        self._release_lock()

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._db_lock, self.database_errors():
            try:
                yield self.db
                self.db.commit()
            except BaseException:
                self.db.rollback()
                raise

    def save_manifest(self, manifest: Manifest) -> None:
        manifest.save(self.dir)

    # --- generation: bumped whenever propositions change --------------------
    def generation(self) -> int:
        row = self.db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        return int(row[0]) if row else 0

    def _bump(self, db: sqlite3.Connection, key: str = "generation") -> None:
        db.execute(
            "INSERT INTO meta(key, value) VALUES(?, '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1", (key,)
        )

    def _meta_int(self, key: str) -> int:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return int(row[0]) if row else 0

    def _high_water(self, db: sqlite3.Connection) -> int:
        """The highest proposition rowid ever used: new rows go above it, so a FAISS id that
        once named a deleted proposition never names another one (SQLite would reuse it)."""
        row = db.execute("SELECT MAX(rowid) FROM propositions").fetchone()
        return max(self._meta_int("max_prop_rowid"), int(row[0] or 0))

    def _set_high_water(self, db: sqlite3.Connection, value: int) -> None:
        db.execute("INSERT INTO meta(key, value) VALUES('max_prop_rowid', ?) "
                   "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (str(value),))

    # --- chunks --------------------------------------------------------------
    def add_document(self, doc: str, chunks: list[Chunk], locations: list[Location] | None = None) -> int:
        """Link ``chunks`` to document ``doc``, each at its location when given; returns how
        many chunks were new."""
        places = locations or [Location(doc)] * len(chunks)
        with self.transaction() as db:
            before = db.total_changes
            db.executemany(
                "INSERT OR IGNORE INTO chunks(id, title, text) VALUES (?, ?, ?)",
                [(c.id, c.title, c.text) for c in chunks],
            )
            new = db.total_changes - before
            # A title added again (a corpus repeating it) continues its order, never interleaves.
            base = db.execute("SELECT COALESCE(MAX(seq) + 1, 0) FROM doc_chunks WHERE doc = ?", (doc,)).fetchone()[0]
            db.executemany(
                f"INSERT OR IGNORE INTO doc_chunks(doc, chunk_id, seq, {', '.join(Location.COLUMNS)}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(doc, c.id, base + i, *loc.row()) for i, (c, loc) in enumerate(zip(chunks, places))],
            )
        return new

    @_locked
    def chunk_locations(self, ids: Iterable[str]) -> dict[str, Location]:
        """Where each chunk sits (a chunk two documents share is credited to the first by title)."""
        cols = {r[1] for r in self.db.execute("PRAGMA table_info(doc_chunks)")}
        extra = Location.COLUMNS if "source" in cols else ()  # an index built before sources were kept
        out: dict[str, Location] = {}
        for batch in _batches(list(dict.fromkeys(ids)), 500):
            q = ",".join("?" * len(batch))
            for row in self.db.execute(f"SELECT chunk_id, doc{''.join(', ' + c for c in extra)} FROM doc_chunks "
                                       f"WHERE chunk_id IN ({q}) ORDER BY doc, seq", batch):
                out.setdefault(row[0], Location(row[1], row[2] or "", *row[3:]) if extra else Location(row[1]))
        return out

    @_locked
    def chunks_without_openie(self) -> list[Chunk]:
        rows = self.db.execute(
            "SELECT c.id, c.title, c.text FROM chunks c LEFT JOIN openie o ON o.chunk_id = c.id "
            "WHERE o.chunk_id IS NULL ORDER BY c.rowid"
        ).fetchall()
        return [Chunk(*r) for r in rows]

    @_locked
    def get_chunks(self, ids: Iterable[str]) -> dict[str, Chunk]:
        ids = list(dict.fromkeys(ids))
        out: dict[str, Chunk] = {}
        for batch in _batches(ids, 500):
            q = ",".join("?" * len(batch))
            for r in self.db.execute(f"SELECT id, title, text FROM chunks WHERE id IN ({q})", batch):
                out[r[0]] = Chunk(*r)
        return out

    def iter_chunks(self) -> Iterator[Chunk]:
        for r in self.db.execute("SELECT id, title, text FROM chunks ORDER BY rowid"):
            yield Chunk(*r)

    @_locked
    def document_chunks(self) -> list[tuple[str, list[Chunk]]]:
        """Every document with its chunks in order (what ``add_document`` was given)."""
        out: dict[str, list[Chunk]] = {}
        for doc, cid, title, text in self.db.execute(
                "SELECT d.doc, c.id, c.title, c.text FROM doc_chunks d JOIN chunks c ON c.id = d.chunk_id "
                "ORDER BY d.doc, d.seq"):
            out.setdefault(doc, []).append(Chunk(cid, title, text))
        return list(out.items())

    @_locked
    def document_summaries(self) -> list[DocumentSummary]:
        """Every document with its chunk count, source, page count and extraction status."""
        if "source" not in {r[1] for r in self.db.execute("PRAGMA table_info(doc_chunks)")}:
            return [DocumentSummary(d) for d in self.documents()]
        return [DocumentSummary(*r) for r in self.db.execute(
                "SELECT d.doc, COUNT(*), MAX(d.source), MAX(d.last_page), COUNT(o.chunk_id), COUNT(o.error) "
                "FROM doc_chunks d LEFT JOIN openie o ON o.chunk_id = d.chunk_id GROUP BY d.doc ORDER BY d.doc")]

    @_locked
    def documents(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT DISTINCT doc FROM doc_chunks ORDER BY doc")]

    @_locked
    def doc_chunk_ids(self, docs: list[str]) -> dict[str, set[str]]:
        """The chunk ids each of ``docs`` holds now (titles the index lacks are left out)."""
        out: dict[str, set[str]] = {}
        for batch in _batches(list(dict.fromkeys(docs)), 500):
            q = ",".join("?" * len(batch))
            for doc, cid in self.db.execute(f"SELECT doc, chunk_id FROM doc_chunks WHERE doc IN ({q})", batch):
                out.setdefault(doc, set()).add(cid)
        return out

    # --- OpenIE records + triples + propositions ------------------------------
    def record_openie(self, rec: OpenIERecord) -> None:
        """Store one chunk's extraction and its propositions (no vectors yet) atomically."""
        with self.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO openie(chunk_id, source, raw, error, entities, n_triples, dropped) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (rec.chunk_id, rec.source, rec.raw, rec.error, json.dumps(rec.entities), len(rec.triples),
                 rec.dropped),
            )
            top = self._high_water(db)
            for t in rec.triples:
                p = Proposition.from_triple(t)
                db.execute(
                    "INSERT OR IGNORE INTO triples(chunk_id, subject, predicate, object, prop_id) VALUES (?,?,?,?,?)",
                    (rec.chunk_id, t.subject, t.predicate, t.object, p.id),
                )
                top += db.execute(
                    "INSERT OR IGNORE INTO propositions(rowid, id, text, subject, predicate, object) "
                    "VALUES (?,?,?,?,?,?)", (top + 1, p.id, p.text, t.subject, t.predicate, t.object),
                ).rowcount
                db.execute("INSERT OR IGNORE INTO prop_chunks(prop_id, chunk_id) VALUES (?, ?)", (p.id, rec.chunk_id))
            self._set_high_water(db, top)

    def claim(self, chunk_ids: list[str], owner: str, ttl_s: float) -> set[str]:
        """Every chunk: a directory index has one writer at a time (its lock), so nothing else
        can be extracting them."""
        return set(chunk_ids)

    def release_dead(self, host: str) -> int:
        return 0  # no leases: the writer lock dies with its process

    def forget_failures(self, *, everything: bool, only_unextracted: bool) -> None:
        which = records_to_forget(everything=everything, only_unextracted=only_unextracted)
        if which is not None:
            with self.transaction() as db:
                db.execute(f"DELETE FROM openie WHERE {which}")

    @_locked
    def propositions_without_vectors(self) -> list[tuple[int, str]]:
        return self.db.execute("SELECT rowid, text FROM propositions WHERE vector IS NULL ORDER BY rowid").fetchall()

    def set_vectors(self, rowids: list[int], vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        with self.transaction() as db:
            db.executemany(
                "UPDATE propositions SET vector = ? WHERE rowid = ?",
                [(vectors[i].tobytes(), rid) for i, rid in enumerate(rowids)],
            )
            self._bump(db)
            generation = self._meta_int("generation")
        self.vectors.add(rowids, vectors, generation)

    @_locked
    def openie_records(self, failed_only: bool = False, limit: int | None = None) -> list[OpenIERecord]:
        sql = "SELECT chunk_id, source, raw, error, entities, dropped FROM openie"
        if failed_only:
            sql += " WHERE error IS NOT NULL"
        sql += " ORDER BY rowid"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        out = []
        for cid, source, raw, error, ents, dropped in self.db.execute(sql).fetchall():
            triples = [
                Triple(*r)
                for r in self.db.execute(
                    "SELECT subject, predicate, object FROM triples WHERE chunk_id = ? ORDER BY rowid", (cid,)
                )
            ]
            out.append(OpenIERecord(cid, source, raw, error, json.loads(ents), triples, dropped))
        return out

    # --- deletion --------------------------------------------------------------
    def delete_documents(self, docs: list[str]) -> dict[str, int]:
        """Remove documents, chunks no document links to, and propositions left with no chunk."""
        with self.transaction() as db:
            self._set_high_water(db, self._high_water(db))  # the deleted rows' ids stay used
            q = ",".join("?" * len(docs))
            db.execute(f"DELETE FROM doc_chunks WHERE doc IN ({q})", docs)
            orphan_chunks = [
                r[0]
                for r in db.execute(
                    "SELECT id FROM chunks WHERE id NOT IN (SELECT chunk_id FROM doc_chunks)"
                ).fetchall()
            ]
            for batch in _batches(orphan_chunks, 500):
                qb = ",".join("?" * len(batch))
                for table, col in (("prop_chunks", "chunk_id"), ("triples", "chunk_id"), ("openie", "chunk_id"),
                                   ("chunk_vectors", "chunk_id"), ("chunks", "id")):
                    db.execute(f"DELETE FROM {table} WHERE {col} IN ({qb})", batch)
            gone = db.execute(
                "DELETE FROM propositions WHERE id NOT IN (SELECT prop_id FROM prop_chunks)"
            ).rowcount
            if gone or orphan_chunks:
                self._bump(db)
                self._bump(db, "chunk_generation")
        self.vectors.drop()  # rebuilt from SQLite on next use
        self._chunk_vectors = None
        return {"chunks": len(orphan_chunks), "propositions": gone}

    # --- vector search -----------------------------------------------------------
    def _all_vectors(self, sql: str) -> tuple[list[Any], np.ndarray]:
        keys: list[Any] = []
        blobs: list[bytes] = []
        for key, blob in self.db.execute(sql):
            keys.append(key)
            blobs.append(blob)
        if not blobs:
            return keys, np.zeros((0, self.dim), dtype=np.float32)
        return keys, np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), self.dim)

    def _proposition_rows(self) -> tuple[list[Any], np.ndarray]:
        return self._all_vectors("SELECT rowid, vector FROM propositions WHERE vector IS NOT NULL")

    @_locked
    def index(self) -> faiss.Index:
        return self.vectors.get(self.generation(), self._proposition_rows, save=self.writer,
                                count=self._vector_count)

    def _vector_count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM propositions WHERE vector IS NOT NULL").fetchone()[0])

    @_locked
    def save_vectors(self) -> None:
        """Save the derived search structures: the FAISS vectors and the BM25 index."""
        self.vectors.save(self.generation(), self._proposition_rows)
        lexical = self.lexical()
        if not lexical.saved:
            lexical.save(self.dir)

    @_locked
    def lexical(self) -> LexicalIndex:
        """BM25 over proposition texts: the saved one if current, else built from SQLite."""
        gen = self.generation()
        if self._lexical is None or self._lexical.generation != gen:
            count = int(self.db.execute("SELECT COUNT(*) FROM propositions").fetchone()[0])
            self._lexical = LexicalIndex.load_if_current(self.dir, gen, count) or LexicalIndex.build(
                self.db.execute("SELECT id, text FROM propositions ORDER BY rowid"), gen)
        return self._lexical

    def search_lexical(self, queries: list[str], top_m: int) -> list[list[tuple[str, float]]]:
        """For each query text, up to ``top_m`` (proposition id, BM25 score), best first."""
        return self.lexical().search(queries, top_m)

    @_locked
    def search(self, vectors: np.ndarray, top_m: int) -> list[list[tuple[str, float]]]:
        """For each query row, up to ``top_m`` (proposition id, inner product), best first."""
        self.index()
        found = self.vectors.search(vectors, top_m)
        if found is None:
            return [[] for _ in range(len(vectors))]
        scores, rowids = found
        wanted = sorted({int(r) for r in rowids.ravel() if r >= 0})
        id_of: dict[int, str] = {}
        for batch in _batches(wanted, 500):
            q = ",".join("?" * len(batch))
            id_of.update(self.db.execute(f"SELECT rowid, id FROM propositions WHERE rowid IN ({q})", batch))
        return [
            [(id_of[int(r)], float(s)) for r, s in zip(rrow, srow) if r >= 0 and int(r) in id_of]
            for rrow, srow in zip(rowids, scores)
        ]

    @_locked
    def get_propositions(self, ids: Iterable[str]) -> dict[str, PropositionHit]:
        ids = list(dict.fromkeys(ids))
        out: dict[str, PropositionHit] = {}
        for batch in _batches(ids, 500):
            q = ",".join("?" * len(batch))
            links: dict[str, list[str]] = {}
            for pid, cid in self.db.execute(
                f"SELECT prop_id, chunk_id FROM prop_chunks WHERE prop_id IN ({q}) ORDER BY rowid", batch
            ):
                links.setdefault(pid, []).append(cid)
            for pid, text, s, p, o in self.db.execute(
                f"SELECT id, text, subject, predicate, object FROM propositions WHERE id IN ({q})", batch
            ):
                out[pid] = PropositionHit(pid, text, Triple(s, p, o), tuple(links.get(pid, [])))
        return out

    # --- chunk vectors (the answer's passage ranking; the dense baselines) ----
    @_locked
    def chunks_without_vectors(self) -> list[Chunk]:
        rows = self.db.execute(
            "SELECT c.id, c.title, c.text FROM chunks c LEFT JOIN chunk_vectors v ON v.chunk_id = c.id "
            "WHERE v.chunk_id IS NULL ORDER BY c.rowid"
        ).fetchall()
        return [Chunk(*r) for r in rows]

    def set_chunk_vectors(self, ids: list[str], vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        with self.transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO chunk_vectors(chunk_id, vector) VALUES (?, ?)",
                [(cid, vectors[i].tobytes()) for i, cid in enumerate(ids)],
            )
            self._bump(db, "chunk_generation")
        self._chunk_vectors = None

    @_locked
    def search_chunks(self, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        gen = self._meta_int("chunk_generation")  # another process may have changed the chunks
        if self._chunk_vectors is None or self._chunk_generation != gen:
            self._chunk_vectors = self._all_vectors("SELECT chunk_id, vector FROM chunk_vectors ORDER BY rowid")
            self._chunk_generation = gen
        return exact_search(*self._chunk_vectors, vectors, k)

    # --- counts --------------------------------------------------------------
    @_locked
    def _dropped(self) -> int:
        """Junk, malformed and duplicate triples dropped at extraction or import (0 for an index
        whose readers predate the count: opened read-only, it has no column to read)."""
        try:
            return int(self.db.execute("SELECT COALESCE(SUM(dropped), 0) FROM openie").fetchone()[0])
        except sqlite3.OperationalError:
            return 0

    def counts(self) -> dict[str, int]:
        one = lambda sql: int(self.db.execute(sql).fetchone()[0])  # noqa: E731
        return {
            "documents": one("SELECT COUNT(DISTINCT doc) FROM doc_chunks"),
            "chunks": one("SELECT COUNT(*) FROM chunks"),
            "chunks_extracted": one("SELECT COUNT(*) FROM openie WHERE error IS NULL"),
            "chunks_failed": one("SELECT COUNT(*) FROM openie WHERE error IS NOT NULL"),
            "triples": one("SELECT COUNT(*) FROM triples"),
            "triples_dropped": self._dropped(),
            "propositions": one("SELECT COUNT(*) FROM propositions"),
            "propositions_embedded": one("SELECT COUNT(*) FROM propositions WHERE vector IS NOT NULL"),
        }


def _batches(items: list[Any], n: int) -> Iterator[list[Any]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]
