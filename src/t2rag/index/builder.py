"""TripleIndex: build, extend, delete from and open an on-disk triple index.

The build is incremental and resumable: chunks are content-addressed, every chunk's OpenIE
result is committed on its own, and propositions are embedded from whatever lacks a vector.
A killed build, run again, does no repeated LLM work and ends where an uninterrupted one would.
"""

from __future__ import annotations

import os
import socket
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from t2rag.config import IndexConfig, to_dict
from t2rag.embed.base import Embedder
from t2rag.embed.registry import DEFAULT_EMBEDDER, get_embedder
from t2rag.errors import IndexDamagedError, IndexMismatchError, IndexNotFoundError, InputError
from t2rag.index import openie
from t2rag.index.chunking import chunk_spans, locate
from t2rag.index.corpus import Document
from t2rag.index.extract_pool import extract_leased
from t2rag.index.importer import Extraction, write_openie
from t2rag.index.manifest import Manifest
from t2rag.index.store import Store, is_url, open_store, read_manifest, require_manifest
from t2rag.llm.base import LLM, parallelism
from t2rag.prompts import prompt_hashes
from t2rag.redact import redact
from t2rag.types import Chunk, Location, OpenIERecord, Usage
from t2rag.version import VERSION


@dataclass
class BuildProgress:
    """What a progress display needs; passed to the ``progress`` callback after each chunk."""

    chunks_total: int = 0
    chunks_done: int = 0
    triples: int = 0
    dropped: int = 0  # junk, malformed or duplicate triples left out
    failures: int = 0
    llm: str | None = None  # the model that extracted in this build, once it is loaded
    usage: Usage = field(default_factory=Usage)
    started: float = field(default_factory=time.perf_counter)

    def eta_s(self) -> float | None:
        if not self.chunks_done:
            return None
        rate = self.chunks_done / max(time.perf_counter() - self.started, 1e-9)
        return (self.chunks_total - self.chunks_done) / rate


class TripleIndex:
    """An index at a location: a directory (manifest + SQLite + FAISS) or a PostgreSQL database."""

    def __init__(self, location: str | Path, manifest: Manifest, store: Store, embedder: Embedder) -> None:
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"  # names its leases
        self.location = location
        self.manifest = manifest
        self.store = store
        self.embedder = embedder
        self.config = IndexConfig.from_dict(manifest.config)

    @property
    def directory(self) -> Path:
        """The index directory (a directory index only)."""
        if is_url(self.location):
            raise InputError(f"{self.store.location} is a database, not a directory")
        return Path(self.location)

    # --- opening -------------------------------------------------------------
    @classmethod
    def create(
        cls, location: str | Path, *, embedder: Embedder | str | None = None, config: IndexConfig | None = None,
        incomplete: str | None = None,
    ) -> TripleIndex:
        """Open the index at ``location`` (a directory or a ``postgresql://`` URL) for writing,
        creating it if it does not exist yet. An existing index keeps its saved config;
        ``config`` (and ``incomplete``, the mark of a copy in progress) only apply to a new one."""
        loc = _location(location)
        if read_manifest(loc) is not None:
            return cls.open(loc, embedder=embedder, writer=True)
        emb = _embedder(embedder or DEFAULT_EMBEDDER)
        if not is_url(loc):
            if Path(loc).exists() and not Path(loc).is_dir():
                raise InputError(f"{loc} is a file, not an index directory")
            Path(loc).mkdir(parents=True, exist_ok=True)
        cfg = config or IndexConfig()
        manifest = Manifest(embedder=emb.name, dim=emb.dim, config=to_dict(cfg), prompts=prompt_hashes(openie.PROMPTS),
                            incomplete=incomplete)
        if (url := server_url(emb)) is not None:
            manifest.endpoints["embedder"] = url
        store = open_store(loc, emb.dim, cfg.store, writer=True)  # takes the lock before the manifest appears
        # Counted before the manifest is read again: a writer saves the manifest before any
        # chunk, so data seen here means its manifest is visible below (or lost).
        has_data = store.counts()["chunks"] > 0
        if read_manifest(loc) is not None:  # another writer may have created it meanwhile
            store.close()
            return cls.open(loc, embedder=embedder, writer=True)
        if has_data:
            # Data without its manifest: which embedder made the vectors is unknown, so
            # adopting it with this one would mix vector spaces (or dimensions) silently.
            store.close()
            raise IndexMismatchError(f"{redact(str(loc))} holds index data but no manifest (embedder, dimension); "
                                     "restore it or index into a new location")
        store.save_manifest(manifest)
        return cls(loc, manifest, store, emb)

    @classmethod
    def open(
        cls, location: str | Path, *, embedder: Embedder | str | None = None, writer: bool = False,
        finishing_copy: bool = False,
    ) -> TripleIndex:
        """Open the index at ``location`` (a directory or a ``postgresql://`` URL). An index a
        copy is still filling is refused, except by the copy that finishes it."""
        loc = _location(location)
        if not is_url(loc) and not Path(loc).is_dir():
            raise IndexNotFoundError(f"no T2RAG index at {loc}")
        manifest = require_manifest(loc)
        if manifest.incomplete and not finishing_copy:
            raise IndexDamagedError(f"{redact(str(loc))} is {manifest.incomplete} that did not finish; "
                                    "run the same 't2rag copy' again to complete it")
        emb = _embedder(embedder or manifest.embedder, manifest.endpoints.get("embedder"))
        manifest.check_embedder(emb.name, emb.dim)
        if writer:
            _warn_if_prompts_changed(manifest, loc)
        cfg = IndexConfig.from_dict(manifest.config)
        return cls(loc, manifest, open_store(loc, emb.dim, cfg.store, writer=writer), emb)

    def close(self) -> None:
        if self.store.writer:
            self.manifest.counts = self.store.counts()
            self.store.save_manifest(self.manifest)
        self.store.close()

    def __enter__(self) -> TripleIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- building ------------------------------------------------------------
    def add(
        self,
        docs: list[Document],
        *,
        llm: LLM | Callable[[], LLM] | None = None,
        imported: dict[str, Extraction] | None = None,
        usage: Usage | None = None,
        progress: Callable[[BuildProgress], None] | None = None,
        retry_failed: bool = False,
        replace: bool = True,
    ) -> dict[str, Any]:
        """Add documents: chunk, extract (imported OpenIE first, else ``llm``), embed.

        A document whose title the index holds with other text (an edited file) replaces the
        old one, whose facts go with it (``replace``; off: the new chunks join the old ones).
        Chunks already extracted are skipped, so re-running after a crash only does the rest.
        A chunk with no imported extraction and no ``llm`` is recorded as failed. ``llm`` may
        be a zero-argument factory, called only if some chunk needs the LLM (models are slow
        to load)."""
        t0 = time.perf_counter()
        imported = imported or {}
        # Passages the index already holds whole, looked up in one query for the whole batch.
        held = set(self.store.get_chunks([Chunk.make(d.title, d.text).id for d in docs]))
        spans = [(d, self._chunks(d, imported, held)) for d in docs]
        chunked = [(d, [c for c, _ in cs]) for d, cs in spans]
        replaced = self._replace_changed(chunked) if replace else []
        new_chunks = sum(self.store.add_document(d.title, [c for c, _ in cs], [loc for _, loc in cs])
                         for d, cs in spans)
        self._forget_failures(everything=retry_failed, only_unextracted=bool(llm is not None or imported))
        pending = self.store.chunks_without_openie()
        state = BuildProgress(chunks_total=len(pending), usage=usage or Usage())
        embedded = self._extract(pending, llm, imported, state, progress)
        chunks_embedded = self.ensure_chunk_vectors()
        self.store.save_vectors()
        self._record_build(state, imported=bool(imported))
        return {
            "new_chunks": new_chunks,
            "replaced": len(replaced),
            "extracted": state.chunks_done,
            "failed": state.failures,
            "triples": state.triples,
            "triples_dropped": state.dropped,
            "propositions_embedded": embedded,
            "chunks_embedded": chunks_embedded,
            "seconds": round(time.perf_counter() - t0, 3),
            "usage": state.usage.to_dict(),
        }

    def _extract(self, pending: list[Chunk], llm: LLM | Callable[[], LLM] | None, imported: dict[str, Extraction],
                 state: BuildProgress, progress: Callable[[BuildProgress], None] | None) -> int:
        """Extract and record every pending chunk, each committed on its own, embedding the new
        propositions every 64 chunks and at the end; returns how many propositions were embedded."""
        embedded = 0
        for rec in self._extract_all(pending, llm, imported, state):
            self.store.record_openie(rec)
            state.chunks_done += 1
            state.triples += len(rec.triples)
            state.dropped += rec.dropped
            state.failures += rec.error is not None
            if state.chunks_done % 64 == 0:
                embedded += self.embed_pending()
            if progress:
                progress(state)
        return embedded + self.embed_pending()

    def _record_build(self, state: BuildProgress, *, imported: bool) -> None:
        """The manifest notes a build that extracted something (its LLM and prompt versions) and
        the new counts."""
        if state.chunks_done:
            self.manifest.builds.append({
                "llm": state.llm or ("imported" if imported else None), "prompts": prompt_hashes(openie.PROMPTS),
                "library_version": VERSION, "chunks_extracted": state.chunks_done, "chunks_failed": state.failures,
            })
        self.manifest.counts = self.store.counts()
        self.store.save_manifest(self.manifest)

    def _replace_changed(self, chunked: list[tuple[Document, list[Chunk]]]) -> list[str]:
        """Delete the documents whose stored chunks differ from the incoming ones (the same
        title with other text); returns their titles."""
        incoming: dict[str, set[str]] = {}
        for d, chunks in chunked:
            incoming.setdefault(d.title, set()).update(c.id for c in chunks)
        stored = self.store.doc_chunk_ids(list(incoming))
        changed = [t for t, ids in stored.items() if ids != incoming[t]]
        if changed:
            self.store.delete_documents(changed)
        return changed

    def _chunks(self, doc: Document, imported: dict[str, Extraction], held: set[str]) -> list[tuple[Chunk, Location]]:
        """The document's chunks, each with where it sits in the document.

        An imported extraction covers a whole passage: keep that passage as one chunk. A
        passage the index already holds whole (imported earlier) stays whole too, so indexing
        the same corpus again without the import adds nothing."""
        whole = Chunk.make(doc.title, doc.text)
        if whole.passage in imported or whole.id in imported or whole.id in held:
            return [(whole, locate(doc, 0, len(doc.text)))]
        return [(c, locate(doc, a, b)) for c, a, b in chunk_spans(doc, self.config.chunk)]

    def _extract_all(
        self,
        pending: list[Chunk],
        llm: LLM | Callable[[], LLM] | None,
        imported: dict[str, Extraction],
        state: BuildProgress,
    ) -> Iterator[OpenIERecord]:
        todo: list[Chunk] = []
        for c in pending:
            ex = imported.get(c.passage) or imported.get(c.id)
            if ex is not None:
                yield OpenIERecord(c.id, "import", None, None, ex.entities, ex.triples, ex.dropped)
            elif llm is None:
                yield OpenIERecord(c.id, "none", None, "no imported extraction for this chunk and no LLM given",
                                   [], [])
            else:
                todo.append(c)
        if llm is None or not todo:
            return
        model: LLM = llm if isinstance(llm, LLM) else llm()
        self.manifest.llm = state.llm = model.name
        if (url := server_url(model)) is not None:
            self.manifest.endpoints["llm"] = url
        else:
            self.manifest.endpoints.pop("llm", None)

        def extract(c: Chunk) -> OpenIERecord:
            return openie.extract(model, c, self.config.openie, state.usage)

        yield from extract_leased(self.store, todo, extract, worker=self.worker, workers=parallelism(model))

    def _forget_failures(self, *, everything: bool, only_unextracted: bool) -> None:
        # Chunks recorded as "no extraction available" are retried whenever a source is given;
        # real extraction failures only on request (they cost LLM calls).
        self.store.forget_failures(everything=everything, only_unextracted=only_unextracted)

    def embed_pending(self) -> int:
        """Embed every proposition without a vector; returns how many were embedded."""
        rows = self.store.propositions_without_vectors()
        batch = self.config.embed_batch
        for i in range(0, len(rows), batch):
            part = rows[i : i + batch]
            vecs = self.embedder.embed([text for _, text in part])
            self.store.set_vectors([rid for rid, _ in part], vecs)
        return len(rows)

    def ensure_chunk_vectors(self) -> int:
        """Embed chunks without a vector (the answer's passage ranking, and the dense chunk
        baselines); returns how many were new. Indexes built before this keep working without."""
        todo = self.store.chunks_without_vectors()
        for i in range(0, len(todo), self.config.embed_batch):
            part = todo[i : i + self.config.embed_batch]
            self.store.set_chunk_vectors([c.id for c in part], self.embedder.embed([c.passage for c in part]))
        return len(todo)

    def delete(self, titles: list[str]) -> dict[str, int]:
        """Delete documents by title; returns counts of removed chunks and propositions (a
        title given twice is one document)."""
        titles = list(dict.fromkeys(titles))
        known = set(self.store.documents())
        missing = [t for t in titles if t not in known]
        result = self.store.delete_documents([t for t in titles if t in known])
        self.store.save_vectors()
        self.manifest.counts = self.store.counts()
        self.store.save_manifest(self.manifest)
        return {**result, "documents": len(titles) - len(missing), "not_found": len(missing)}

    def export_openie(self, path: str | Path) -> dict[str, int]:
        """Write every successful extraction (LLM or imported) as a HippoRAG OpenIE file: reuse
        it with ``--openie-from`` for another embedder or index, or to resume extraction on
        another machine. Failed and not-yet-extracted chunks are left out (and counted)."""
        records = self.store.openie_records()
        ok = [r for r in records if r.error is None]
        chunks = self.store.get_chunks(r.chunk_id for r in ok)
        written = write_openie(path, ((chunks[r.chunk_id], Extraction(r.entities, r.triples))
                                      for r in ok if r.chunk_id in chunks))
        total = self.store.counts()["chunks"]
        return {"passages": written, "failed": len(records) - len(ok), "not_extracted": total - len(records)}

    def inspect(self, samples: int = 5) -> dict[str, Any]:
        """Counts, configs, sample triples and failed chunks, as plain data."""
        records = [r for r in self.store.openie_records(limit=200) if r.triples][:samples]
        failed = self.store.openie_records(failed_only=True, limit=20)
        chunks = self.store.get_chunks([r.chunk_id for r in records + failed])
        return {
            "location": self.store.location,
            "manifest": self.manifest.__dict__,
            "counts": self.store.counts(),
            "samples": [
                {"chunk": r.chunk_id, "title": chunks[r.chunk_id].title, "triples": [t.as_list() for t in r.triples]}
                for r in records
                if r.chunk_id in chunks
            ],
            "failed": [
                {"chunk": r.chunk_id, "title": chunks[r.chunk_id].title if r.chunk_id in chunks else "",
                 "error": r.error, "raw": (r.raw or "")[:300]}
                for r in failed
            ],
        }


def _embedder(e: Embedder | str, url: str | None = None) -> Embedder:
    """``e`` built from its spec; an OpenAI-compatible one the index recorded by name reaches the
    server URL the index recorded (unless OPENAI_BASE_URL names one)."""
    if not isinstance(e, str):
        return e
    if url and e.startswith("openai:") and "@" in e and not os.environ.get("OPENAI_BASE_URL"):
        return get_embedder(e.partition("@")[0], base_url=url)
    return get_embedder(e)


def server_url(backend: object) -> str | None:
    """The URL of an OpenAI-compatible backend (through a response cache), to record in the
    manifest; None for other backends and for URLs that carry credentials (never written)."""
    url = getattr(getattr(backend, "inner", backend), "base_url", None)
    if not isinstance(url, str) or "@" in urlsplit(url).netloc:
        return None
    return url


def _warn_if_prompts_changed(manifest: Manifest, location: str | Path) -> None:
    """Extraction prompts changed since the index was built: say so (new chunks will be
    extracted with the current prompts; the manifest keeps naming those the index was built with)."""
    current = prompt_hashes(openie.PROMPTS)
    changed = sorted(k for k in current if manifest.prompts.get(k) not in (None, current[k]))
    if changed:
        where = redact(str(location))
        print(f"t2rag: note: {where} was extracted with other versions of the {', '.join(changed)} prompt(s); "
              "new chunks use the current ones (rebuild the index for uniform extraction)", file=sys.stderr)


def _location(location: str | Path) -> str | Path:
    return str(location) if is_url(location) else Path(location)
