"""Copy an index between locations (directory <-> PostgreSQL) without any LLM call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from t2rag.errors import InputError
from t2rag.index.builder import TripleIndex
from t2rag.index.manifest import Manifest
from t2rag.index.store import read_manifest
from t2rag.redact import redact


def copy_index(src: str | Path, dst: str | Path) -> dict[str, Any]:
    """Copy documents, chunks, every extraction (failed ones too) and the manifest from ``src``
    to a new index at ``dst``; vectors are embedded again with the same embedder (no LLM calls).

    Until it finishes, the destination's manifest marks it as an unfinished copy, which readers
    refuse; running the same copy again resumes it (every step is idempotent). Copying into a
    finished index, or into another source's unfinished copy, is refused rather than merged."""
    existing = read_manifest(dst)
    mark = f"a copy of {redact(str(src))}"
    if existing is not None and existing.incomplete != mark:
        what = existing.incomplete or "an index"
        raise InputError(f"{redact(str(dst))} already holds {what}; copy into a new directory or an empty database")
    with TripleIndex.open(src) as source:
        target = (TripleIndex.open(dst, embedder=source.embedder, writer=True, finishing_copy=True) if existing
                  else TripleIndex.create(dst, embedder=source.embedder, config=source.config, incomplete=mark))
        with target:
            for doc, chunks in source.store.document_chunks():
                target.store.add_document(doc, chunks)
            records = source.store.openie_records()
            for rec in records:
                target.store.record_openie(rec)
            embedded = target.embed_pending()
            chunk_vectors = target.ensure_chunk_vectors()
            target.store.save_vectors()
            target.manifest = Manifest(**{**source.manifest.__dict__, "counts": target.store.counts(),
                                          "incomplete": None})
            target.store.save_manifest(target.manifest)
            counts = target.store.counts()
    return {"records": len(records), "propositions_embedded": embedded, "chunks_embedded": chunk_vectors,
            "counts": counts}
