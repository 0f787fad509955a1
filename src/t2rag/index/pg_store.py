"""The index store in PostgreSQL + pgvector: one database that many processes and machines share.

Everything lives in the database: chunks, extractions, propositions, their vectors (a
``vector(dim)`` column with an HNSW index for inner product) and the manifest. Every write
is one transaction, and every insert is idempotent (ids are content hashes), so several
writers may build the same corpus at once without duplicating anything, and a killed build
resumes where it stopped. BM25 over propositions is kept in memory, rebuilt when the
database's generation moves.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from t2rag.config import StoreConfig
from t2rag.errors import IndexMismatchError, IndexNotFoundError, InputError
from t2rag.index.lexical import LexicalIndex
from t2rag.index.manifest import Manifest
from t2rag.index.openie import records_to_forget
from t2rag.redact import redact
from t2rag.types import Chunk, DocumentSummary, Location, OpenIERecord, Proposition, PropositionHit, Triple

URL_PREFIXES = ("postgresql://", "postgres://")
HNSW_M = 16  # pgvector's defaults: 16 links per node, a build candidate list of 64
HNSW_EF_CONSTRUCTION = 64
SCHEMA_LOCK = 7236861  # advisory lock key taken while creating the extension and the tables

SCHEMA = """
CREATE TABLE IF NOT EXISTS t2rag_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
  seq BIGSERIAL, id TEXT PRIMARY KEY, title TEXT NOT NULL, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS doc_chunks (
  doc TEXT NOT NULL, chunk_id TEXT NOT NULL REFERENCES chunks(id), seq INTEGER NOT NULL,
  source TEXT, page INTEGER, last_page INTEGER, span_start INTEGER, span_end INTEGER,
  PRIMARY KEY (doc, chunk_id));
CREATE INDEX IF NOT EXISTS doc_chunks_chunk ON doc_chunks(chunk_id);
CREATE TABLE IF NOT EXISTS openie (
  seq BIGSERIAL, chunk_id TEXT PRIMARY KEY REFERENCES chunks(id), source TEXT NOT NULL, raw TEXT,
  error TEXT, entities TEXT NOT NULL, n_triples INTEGER NOT NULL, dropped INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS triples (
  seq BIGSERIAL, chunk_id TEXT NOT NULL REFERENCES chunks(id), subject TEXT NOT NULL,
  predicate TEXT NOT NULL, object TEXT NOT NULL, prop_id TEXT NOT NULL,
  PRIMARY KEY (chunk_id, subject, predicate, object));
CREATE TABLE IF NOT EXISTS propositions (
  seq BIGSERIAL UNIQUE, id TEXT PRIMARY KEY, text TEXT NOT NULL, subject TEXT NOT NULL,
  predicate TEXT NOT NULL, object TEXT NOT NULL, embedding vector({dim}));
CREATE TABLE IF NOT EXISTS prop_chunks (
  seq BIGSERIAL, prop_id TEXT NOT NULL, chunk_id TEXT NOT NULL, PRIMARY KEY (prop_id, chunk_id));
CREATE INDEX IF NOT EXISTS prop_chunks_chunk ON prop_chunks(chunk_id);
CREATE TABLE IF NOT EXISTS t2rag_leases (
  chunk_id TEXT PRIMARY KEY, owner TEXT NOT NULL, expires TIMESTAMPTZ NOT NULL);
CREATE TABLE IF NOT EXISTS chunk_vectors (
  seq BIGSERIAL, chunk_id TEXT PRIMARY KEY, embedding vector({dim}) NOT NULL);
CREATE INDEX IF NOT EXISTS propositions_hnsw ON propositions
  USING hnsw (embedding vector_ip_ops) WITH (m = {m}, ef_construction = {efc});
CREATE INDEX IF NOT EXISTS chunk_vectors_hnsw ON chunk_vectors
  USING hnsw (embedding vector_ip_ops) WITH (m = {m}, ef_construction = {efc});
"""

SCHEMA_OBJECTS = re.findall(r"CREATE (?:TABLE|INDEX) IF NOT EXISTS (\w+)", SCHEMA)


def is_url(location: object) -> bool:
    return isinstance(location, str) and location.startswith(URL_PREFIXES)


def _connect(url: str) -> Any:
    try:
        import psycopg
        from pgvector.psycopg import register_vector
    except ImportError:
        raise InputError("a PostgreSQL index needs psycopg and pgvector: pip install 't2rag[postgres]'") from None
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except (psycopg.Error, ValueError) as e:  # ValueError: a URL libpq cannot parse (a bad port)
        reason = " ".join(str(e).split()) or type(e).__name__
        raise IndexNotFoundError(f"cannot connect to {redact(url)}: {redact(reason)}") from None
    try:
        if not conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))  # concurrent creators wait
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public")
    except psycopg.Error:
        conn.close()
        raise IndexNotFoundError(
            f"{redact(url)} has no pgvector extension (and this user cannot create it): "
            "install pgvector on the server, then 'CREATE EXTENSION vector' as a superuser") from None
    try:
        register_vector(conn)
    except psycopg.Error:  # the type exists, but not on this connection's search path
        conn.close()
        raise IndexNotFoundError(f"{redact(url)}: pgvector's type is not on the search path; "
                                 "add public to it, e.g. options=-csearch_path%3Dmyindex,public") from None
    return conn


class PgStore:
    """The store protocol (see ``t2rag.index.store``) over one PostgreSQL database."""

    def __init__(self, url: str, dim: int, cfg: StoreConfig, *, writer: bool = False) -> None:
        self.url = url
        self.location = redact(url)
        self.dim = dim
        self.cfg = cfg
        self.writer = writer
        self.db = _connect(url)
        self._lock = threading.RLock()
        self._lexical: LexicalIndex | None = None
        if writer:
            self._create_schema()
        self._check_dim()

    def _create_schema(self) -> None:
        """Create the tables and indexes that are missing. Only then: even a CREATE INDEX IF NOT
        EXISTS locks its table, and a writer running it while another writes rows deadlocks."""
        with self.transaction() as db:
            db.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))  # one schema creator at a time
            found = db.execute("SELECT count(*) FROM unnest(%s::text[]) AS n WHERE to_regclass(n) IS NOT NULL",
                               (SCHEMA_OBJECTS,)).fetchone()[0]
            if found < len(SCHEMA_OBJECTS):
                db.execute(SCHEMA.format(dim=self.dim, m=HNSW_M, efc=HNSW_EF_CONSTRUCTION))
            if not self._has_locations(db):  # an index built before sources were kept
                db.execute("ALTER TABLE doc_chunks " + ", ".join(
                    f"ADD COLUMN IF NOT EXISTS {c} {'TEXT' if c == 'source' else 'INTEGER'}" for c in Location.COLUMNS))

    @staticmethod
    def _has_locations(db: Any) -> bool:
        return db.execute("SELECT 1 FROM information_schema.columns WHERE table_name = 'doc_chunks' "
                          "AND column_name = 'source' AND table_schema = current_schema()").fetchone() is not None

    def _check_dim(self) -> None:
        row = self.db.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass('propositions') "
            "AND attname = 'embedding'").fetchone()
        if row and row[0] not in (-1, self.dim):
            raise IndexMismatchError(f"the index at {self.location} stores {row[0]}-d vectors, "
                                     f"but the embedder gives {self.dim}-d")

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        with self._lock, self.db.transaction():
            yield self.db

    # --- manifest and generation ------------------------------------------------
    @staticmethod
    def read_manifest(url: str) -> Manifest | None:
        """The manifest kept in the database, or None when no index was made there yet."""
        db = _connect(url)
        try:
            row = db.execute("SELECT value FROM t2rag_meta WHERE key = 'manifest'").fetchone() \
                if db.execute("SELECT to_regclass('t2rag_meta')").fetchone()[0] else None
        finally:
            db.close()
        return Manifest.from_json(row[0], redact(url)) if row else None

    def save_manifest(self, manifest: Manifest) -> None:
        with self.transaction() as db:
            db.execute("INSERT INTO t2rag_meta(key, value) VALUES ('manifest', %s) "
                       "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", (manifest.to_json(),))

    def generation(self) -> int:
        row = self.db.execute("SELECT value FROM t2rag_meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

    @staticmethod
    def _bump(db: Any) -> None:
        db.execute("INSERT INTO t2rag_meta(key, value) VALUES ('generation', '1') ON CONFLICT (key) "
                   "DO UPDATE SET value = (t2rag_meta.value::bigint + 1)::text")

    # --- chunks ------------------------------------------------------------------
    def add_document(self, doc: str, chunks: list[Chunk], locations: list[Location] | None = None) -> int:
        places = locations or [Location(doc)] * len(chunks)
        with self.transaction() as db:
            new = 0
            for c in chunks:
                cur = db.execute("INSERT INTO chunks(id, title, text) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                                 (c.id, c.title, c.text))
                new += cur.rowcount
            # A title added again (a corpus repeating it) continues its order, never interleaves.
            base = db.execute("SELECT COALESCE(MAX(seq) + 1, 0) FROM doc_chunks WHERE doc = %s", (doc,)).fetchone()[0]
            with db.cursor() as cur:
                cur.executemany(f"INSERT INTO doc_chunks(doc, chunk_id, seq, {', '.join(Location.COLUMNS)}) "
                                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                                [(doc, c.id, base + i, *loc.row()) for i, (c, loc) in enumerate(zip(chunks, places))])
        return new

    def chunk_locations(self, ids: Iterable[str]) -> dict[str, Location]:
        """Where each chunk sits: its first document's (see ``SqliteStore.chunk_locations``)."""
        out: dict[str, Location] = {}
        with self._lock:
            extra = Location.COLUMNS if self._has_locations(self.db) else ()
            rows = self.db.execute(f"SELECT chunk_id, doc{''.join(', ' + c for c in extra)} FROM doc_chunks "
                                   "WHERE chunk_id = ANY(%s) ORDER BY doc, seq", (list(dict.fromkeys(ids)),))
            for row in rows:
                out.setdefault(row[0], Location(row[1], row[2] or "", *row[3:]) if extra else Location(row[1]))
        return out

    def chunks_without_openie(self) -> list[Chunk]:
        return self._chunks("SELECT c.id, c.title, c.text FROM chunks c LEFT JOIN openie o ON o.chunk_id = c.id "
                            "WHERE o.chunk_id IS NULL ORDER BY c.seq")

    def get_chunks(self, ids: Iterable[str]) -> dict[str, Chunk]:
        return {c.id: c for c in self._chunks("SELECT id, title, text FROM chunks WHERE id = ANY(%s)",
                                              (list(dict.fromkeys(ids)),))}

    def iter_chunks(self) -> Iterator[Chunk]:
        yield from self._chunks("SELECT id, title, text FROM chunks ORDER BY seq")

    def _chunks(self, sql: str, args: tuple[Any, ...] = ()) -> list[Chunk]:
        with self._lock:
            return [Chunk(*r) for r in self.db.execute(sql, args).fetchall()]

    def document_chunks(self) -> list[tuple[str, list[Chunk]]]:
        out: dict[str, list[Chunk]] = {}
        with self._lock:
            for doc, cid, title, text in self.db.execute(
                    "SELECT d.doc, c.id, c.title, c.text FROM doc_chunks d JOIN chunks c ON c.id = d.chunk_id "
                    "ORDER BY d.doc, d.seq"):
                out.setdefault(doc, []).append(Chunk(cid, title, text))
        return list(out.items())

    def document_summaries(self) -> list[DocumentSummary]:
        """Every document with its chunk count, source, page count and extraction status."""
        with self._lock:
            if not self._has_locations(self.db):
                rows = self.db.execute("SELECT DISTINCT doc FROM doc_chunks ORDER BY doc")
                return [DocumentSummary(r[0]) for r in rows]
            return [DocumentSummary(*r) for r in self.db.execute(
                "SELECT d.doc, COUNT(*), MAX(d.source), MAX(d.last_page), COUNT(o.chunk_id), COUNT(o.error) "
                "FROM doc_chunks d LEFT JOIN openie o ON o.chunk_id = d.chunk_id GROUP BY d.doc ORDER BY d.doc")]

    def documents(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self.db.execute("SELECT DISTINCT doc FROM doc_chunks ORDER BY doc")]

    def doc_chunk_ids(self, docs: list[str]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        with self._lock:
            for doc, cid in self.db.execute("SELECT doc, chunk_id FROM doc_chunks WHERE doc = ANY(%s)", (docs,)):
                out.setdefault(doc, set()).add(cid)
        return out

    # --- extractions and propositions ---------------------------------------------
    def record_openie(self, rec: OpenIERecord) -> None:
        props = [(t, Proposition.from_triple(t)) for t in rec.triples]
        with self.transaction() as db, db.cursor() as cur:
            # Hold the chunk against a concurrent delete (which locks it FOR UPDATE first); a
            # chunk deleted while it was being extracted is skipped, not a foreign-key crash.
            if cur.execute("SELECT 1 FROM chunks WHERE id = %s FOR KEY SHARE", (rec.chunk_id,)).fetchone() is None:
                return
            cur.execute(
                "INSERT INTO openie(chunk_id, source, raw, error, entities, n_triples, dropped) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (chunk_id) DO UPDATE SET source = EXCLUDED.source, "
                "raw = EXCLUDED.raw, error = EXCLUDED.error, entities = EXCLUDED.entities, "
                "n_triples = EXCLUDED.n_triples, dropped = EXCLUDED.dropped",
                (rec.chunk_id, rec.source, rec.raw, rec.error, json.dumps(rec.entities), len(rec.triples),
                 rec.dropped))
            cur.executemany("INSERT INTO triples(chunk_id, subject, predicate, object, prop_id) "
                            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                            [(rec.chunk_id, t.subject, t.predicate, t.object, p.id) for t, p in props])
            cur.executemany("INSERT INTO propositions(id, text, subject, predicate, object) "
                            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                            # In id order: two writers recording chunks that share propositions
                            # then lock those rows in the same order and wait, never deadlock.
                            sorted((p.id, p.text, t.subject, t.predicate, t.object) for t, p in props))
            cur.executemany("INSERT INTO prop_chunks(prop_id, chunk_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                            [(p.id, rec.chunk_id) for _, p in props])

    def claim(self, chunk_ids: list[str], owner: str, ttl_s: float) -> set[str]:
        """Lease the chunks of ``chunk_ids`` that are not extracted yet and not leased by another
        live worker to ``owner`` for ``ttl_s`` seconds; returns those now leased to it. Workers
        writing to one database so never extract a chunk twice, and a killed worker's chunks
        return to the pool when its leases expire. A lease is kept after its chunk is recorded:
        deleting it would let a claim that read the chunk as unextracted (a moment earlier)
        lease it again once the row is gone."""
        with self.transaction() as db:
            rows = db.execute(
                "INSERT INTO t2rag_leases(chunk_id, owner, expires) "
                "SELECT id, %s, now() + make_interval(secs => %s) FROM unnest(%s::text[]) AS id "
                "WHERE NOT EXISTS (SELECT 1 FROM openie o WHERE o.chunk_id = id) "
                "ON CONFLICT (chunk_id) DO UPDATE SET owner = EXCLUDED.owner, expires = EXCLUDED.expires "
                "WHERE t2rag_leases.expires < now() OR t2rag_leases.owner = EXCLUDED.owner "
                "RETURNING chunk_id", (owner, float(ttl_s), sorted(set(chunk_ids)))).fetchall()
        return {r[0] for r in rows}

    def release_dead(self, host: str) -> int:
        """Expire the live leases of this host's workers whose process is gone (a crashed or
        killed ``t2rag index`` run again here need not wait out its own leases); returns how
        many owners were released."""
        with self._lock:
            owners = [r[0] for r in self.db.execute(
                "SELECT DISTINCT owner FROM t2rag_leases WHERE expires > now() AND owner LIKE %s", (f"{host}:%",))]
        dead = [o for o in owners if not _alive(o.split(":")[1])]
        if dead:
            with self.transaction() as db:
                db.execute("UPDATE t2rag_leases SET expires = now() - interval '1 second' WHERE owner = ANY(%s)",
                           (dead,))
        return len(dead)

    def forget_failures(self, *, everything: bool, only_unextracted: bool) -> None:
        which = records_to_forget(everything=everything, only_unextracted=only_unextracted)
        if which is None:
            return
        with self.transaction() as db:  # their leases go too: the chunks are up for extraction again
            db.execute(f"DELETE FROM t2rag_leases WHERE chunk_id IN (SELECT chunk_id FROM openie WHERE {which})")
            db.execute(f"DELETE FROM openie WHERE {which}")

    def propositions_without_vectors(self) -> list[tuple[int, str]]:
        with self._lock:
            return [(int(s), t) for s, t in self.db.execute(
                "SELECT seq, text FROM propositions WHERE embedding IS NULL ORDER BY seq")]

    def set_vectors(self, rowids: list[int], vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        with self.transaction() as db, db.cursor() as cur:
            cur.executemany("UPDATE propositions SET embedding = %s WHERE seq = %s",
                            [(vectors[i], rid) for i, rid in enumerate(rowids)])
            self._bump(db)

    def openie_records(self, failed_only: bool = False, limit: int | None = None) -> list[OpenIERecord]:
        sql = "SELECT chunk_id, source, raw, error, entities, dropped FROM openie"
        sql += (" WHERE error IS NOT NULL" if failed_only else "") + " ORDER BY seq"
        sql += f" LIMIT {int(limit)}" if limit is not None else ""
        with self._lock:
            rows = self.db.execute(sql).fetchall()
            triples: dict[str, list[Triple]] = {}
            for cid, s, p, o in self.db.execute(
                    "SELECT chunk_id, subject, predicate, object FROM triples WHERE chunk_id = ANY(%s) ORDER BY seq",
                    ([r[0] for r in rows],)):
                triples.setdefault(cid, []).append(Triple(s, p, o))
        return [OpenIERecord(cid, src, raw, err, json.loads(ents), triples.get(cid, []), dropped)
                for cid, src, raw, err, ents, dropped in rows]

    # --- deletion --------------------------------------------------------------------
    def delete_documents(self, docs: list[str]) -> dict[str, int]:
        with self.transaction() as db:
            db.execute("DELETE FROM doc_chunks WHERE doc = ANY(%s)", (docs,))
            # Lock the orphaned chunks first: a build recording one of them finishes (and its
            # rows are deleted below) or waits and then finds the chunk gone.
            orphans = [r[0] for r in db.execute(
                "SELECT id FROM chunks WHERE NOT EXISTS (SELECT 1 FROM doc_chunks d WHERE d.chunk_id = chunks.id) "
                "ORDER BY id FOR UPDATE")]
            for table, col in (("prop_chunks", "chunk_id"), ("triples", "chunk_id"), ("openie", "chunk_id"),
                               ("chunk_vectors", "chunk_id"), ("t2rag_leases", "chunk_id"), ("chunks", "id")):
                db.execute(f"DELETE FROM {table} WHERE {col} = ANY(%s)", (orphans,))
            gone = db.execute("DELETE FROM propositions p WHERE NOT EXISTS "
                              "(SELECT 1 FROM prop_chunks l WHERE l.prop_id = p.id)").rowcount
            if gone or orphans:
                self._bump(db)
        return {"chunks": len(orphans), "propositions": gone}

    # --- search ------------------------------------------------------------------------
    def _knn(self, table: str, key: str, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """Inner-product nearest neighbours through the HNSW index (``<#>`` is the negated
        inner product); ef_search is raised to ``k`` so the index can return all ``k``."""
        out = []
        with self.transaction() as db:
            db.execute(f"SET LOCAL hnsw.ef_search = {max(int(k), self.cfg.hnsw_ef_search, 1)}")
            for v in np.ascontiguousarray(vectors, dtype=np.float32):
                rows = db.execute(f"SELECT {key}, -(embedding <#> %s) FROM {table} WHERE embedding IS NOT NULL "
                                  "ORDER BY embedding <#> %s LIMIT %s", (v, v, int(k))).fetchall()
                out.append([(r[0], float(r[1])) for r in rows])
        return out

    def search(self, vectors: np.ndarray, top_m: int) -> list[list[tuple[str, float]]]:
        return self._knn("propositions", "id", vectors, top_m)

    def lexical(self) -> LexicalIndex:
        with self._lock:
            gen = self.generation()
            if self._lexical is None or self._lexical.generation != gen:
                self._lexical = LexicalIndex.build(self.db.execute("SELECT id, text FROM propositions ORDER BY seq"),
                                                   gen)
            return self._lexical

    def search_lexical(self, queries: list[str], top_m: int) -> list[list[tuple[str, float]]]:
        return self.lexical().search(queries, top_m)

    def get_propositions(self, ids: Iterable[str]) -> dict[str, PropositionHit]:
        ids = list(dict.fromkeys(ids))
        with self._lock:
            links: dict[str, list[str]] = {}
            for pid, cid in self.db.execute(
                    "SELECT prop_id, chunk_id FROM prop_chunks WHERE prop_id = ANY(%s) ORDER BY seq", (ids,)):
                links.setdefault(pid, []).append(cid)
            rows = self.db.execute("SELECT id, text, subject, predicate, object FROM propositions "
                                   "WHERE id = ANY(%s)", (ids,)).fetchall()
        return {pid: PropositionHit(pid, text, Triple(s, p, o), tuple(links.get(pid, [])))
                for pid, text, s, p, o in rows}

    def save_vectors(self) -> None:
        """Nothing to save: the database keeps vectors and their HNSW index up to date."""

    # --- chunk vectors --------------------------------------------------------------------
    def chunks_without_vectors(self) -> list[Chunk]:
        return self._chunks("SELECT c.id, c.title, c.text FROM chunks c LEFT JOIN chunk_vectors v "
                            "ON v.chunk_id = c.id WHERE v.chunk_id IS NULL ORDER BY c.seq")

    def set_chunk_vectors(self, ids: list[str], vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        with self.transaction() as db, db.cursor() as cur:
            alive = {r[0] for r in cur.execute("SELECT id FROM chunks WHERE id = ANY(%s) ORDER BY id FOR KEY SHARE",
                                               (list(ids),)).fetchall()}  # a deleted chunk gets no vector
            cur.executemany("INSERT INTO chunk_vectors(chunk_id, embedding) VALUES (%s, %s) "
                            "ON CONFLICT (chunk_id) DO UPDATE SET embedding = EXCLUDED.embedding",
                            [(cid, vectors[i]) for i, cid in enumerate(ids) if cid in alive])

    def search_chunks(self, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        return self._knn("chunk_vectors", "chunk_id", vectors, k)

    # --- counts ------------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        sql = {
            "documents": "SELECT COUNT(DISTINCT doc) FROM doc_chunks",
            "chunks": "SELECT COUNT(*) FROM chunks",
            "chunks_extracted": "SELECT COUNT(*) FROM openie WHERE error IS NULL",
            "chunks_failed": "SELECT COUNT(*) FROM openie WHERE error IS NOT NULL",
            "triples": "SELECT COUNT(*) FROM triples",
            "triples_dropped": "SELECT COALESCE(SUM(dropped), 0) FROM openie",
            "propositions": "SELECT COUNT(*) FROM propositions",
            "propositions_embedded": "SELECT COUNT(*) FROM propositions WHERE embedding IS NOT NULL",
        }
        with self._lock:
            return {k: int(self.db.execute(q).fetchone()[0]) for k, q in sql.items()}


def safe_name(url: str) -> str:
    """A file-system-safe label for a database URL (for run directories and logs)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", redact(url).split("://", 1)[-1]).strip("_")[:80]


def _alive(pid: str) -> bool:
    """Whether a process with this id runs on this host (a malformed id counts as alive)."""
    if not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
