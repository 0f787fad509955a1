"""FAISS vector index over proposition rows: built from SQLite, saved atomically, derived data."""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import faiss
import numpy as np

from t2rag.config import StoreConfig
from t2rag.errors import InputError


def make_index(cfg: StoreConfig, dim: int, n_hint: int) -> faiss.Index:
    """An empty id-mapped inner-product index of the configured type."""
    if cfg.index_type == "hnsw":
        base = faiss.IndexHNSWFlat(dim, cfg.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        base.hnsw.efConstruction = cfg.hnsw_ef_construction
        base.hnsw.efSearch = cfg.hnsw_ef_search
        return faiss.IndexIDMap2(base)
    if cfg.index_type == "ivf":
        nlist = cfg.ivf_nlist or max(1, int(4 * math.sqrt(max(n_hint, 1))))
        quantizer = faiss.IndexFlatIP(dim)
        ivf = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
        ivf.nprobe = cfg.ivf_nprobe
        return ivf
    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))


def build_index(cfg: StoreConfig, dim: int, ids: np.ndarray, vectors: np.ndarray) -> faiss.Index:
    index = make_index(cfg, dim, len(ids))
    if isinstance(index, faiss.IndexIVF):
        if len(vectors) < index.nlist:  # too few points to train: fall back to exact search
            index = make_index(StoreConfig(index_type="flat"), dim, len(ids))
        else:
            # k-means on a sample: 64 points per list is plenty and keeps training in seconds
            n_train = min(len(vectors), 64 * index.nlist)
            pick = np.random.default_rng(0).choice(len(vectors), n_train, replace=False)
            index.train(np.ascontiguousarray(vectors[np.sort(pick)]))
    if len(ids):
        index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), ids.astype(np.int64))
    return index


def save_atomic(index: faiss.Index, path: Path, generation: int) -> None:
    """Write index + a sidecar naming the SQLite generation it reflects; temp file + rename."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".vectors-", suffix=".tmp")
    os.close(fd)
    try:
        faiss.write_index(index, tmp)
        os.replace(tmp, path)
    except RuntimeError as e:  # faiss reports a full disk or an I/O error this way
        reason = " ".join(str(e).split())[-160:]
        raise InputError(f"cannot save {path} ({reason}); the index data is intact: free space and run "
                         "the command again") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    side = path.with_suffix(".json")
    tmp_side = side.with_suffix(".json.tmp")
    tmp_side.write_text(json.dumps({"generation": generation, "ntotal": int(index.ntotal)}))
    os.replace(tmp_side, side)


def load_if_current(path: Path, generation: int, dim: int | None = None,
                    count: Callable[[], int] | None = None) -> faiss.Index | None:
    """The saved index if it reflects ``generation`` of the metadata -- and holds vectors of
    ``dim`` and as many as ``count()`` says the database has -- else None (rebuild)."""
    side = path.with_suffix(".json")
    if not path.exists() or not side.exists():
        return None
    try:
        meta = json.loads(side.read_text())
    except ValueError:
        return None
    if not isinstance(meta, dict) or meta.get("generation") != generation:
        return None
    try:
        idx = faiss.read_index(str(path))
    except RuntimeError:  # damaged or truncated: derived data, so rebuilt from SQLite
        print(f"t2rag: {path} is damaged; rebuilding it from the index database", file=sys.stderr)
        return None
    if (dim is not None and idx.d != dim) or (count is not None and idx.ntotal != count()):
        print(f"t2rag: {path} does not match the index database; rebuilding it", file=sys.stderr)
        return None
    return idx


def clean_temp(directory: Path) -> None:
    """Remove the temp files of a save that a killed process left behind."""
    for p in directory.glob(".vectors-*.tmp"):
        p.unlink(missing_ok=True)


class FaissVectors:
    """The FAISS lifecycle of one index directory: load the saved index when it reflects the
    current generation, else build it from all stored vectors; append new vectors; drop it
    after deletes (rebuilt on next use); save it atomically."""

    def __init__(self, path: Path, cfg: StoreConfig, dim: int) -> None:
        self.path = path
        self.cfg = cfg
        self.dim = dim
        self._index: faiss.Index | None = None
        self._generation: int | None = None  # the metadata generation the loaded index reflects

    def get(self, generation: int, rows: Callable[[], tuple[list[int], np.ndarray]], *, save: bool,
            count: Callable[[], int] | None = None) -> faiss.Index:
        """The index for ``generation``; ``rows`` gives (ids, vectors) when it must be rebuilt.
        A loaded index of another generation (another process changed the store) is replaced:
        a long-running reader never searches vectors that no longer match the database."""
        if self._index is not None and self._generation != generation:
            self._index = None
        if self._index is None:
            idx = load_if_current(self.path, generation, self.dim, count)
            if idx is None:
                ids, vecs = rows()
                idx = build_index(self.cfg, self.dim, np.asarray(ids, dtype=np.int64), vecs)
                if save:
                    save_atomic(idx, self.path, generation)
            _set_search_params(idx, self.cfg)
            self._index, self._generation = idx, generation
        return self._index

    @property
    def loaded(self) -> bool:
        return self._index is not None

    def add(self, ids: list[int], vectors: np.ndarray, generation: int) -> None:
        """Append to a loaded index, which then reflects ``generation`` (IVF is retrained at
        save time instead, and dropped here so nothing searches it half-updated)."""
        if self._index is None:
            return
        if self.cfg.index_type == "ivf" or self._generation != generation - 1:
            self._index = None  # not the state these vectors extend: rebuilt on next use
            return
        self._index.add_with_ids(vectors, np.asarray(ids, dtype=np.int64))
        self._generation = generation

    def drop(self) -> None:
        self._index = None

    def save(self, generation: int, rows: Callable[[], tuple[list[int], np.ndarray]]) -> None:
        if self.cfg.index_type == "ivf":
            self._index = None  # IVF is retrained from all vectors rather than appended to
        save_atomic(self.get(generation, rows, save=False), self.path, generation)

    def search(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(scores, ids) of the ``k`` best per row, or None when the index is empty."""
        assert self._index is not None, "get() first"
        if self._index.ntotal == 0:
            return None
        return self._index.search(np.ascontiguousarray(vectors, dtype=np.float32), min(k, self._index.ntotal))


def _set_search_params(idx: faiss.Index, cfg: StoreConfig) -> None:
    inner = faiss.downcast_index(idx.index) if isinstance(idx, faiss.IndexIDMap2) else idx
    if isinstance(inner, faiss.IndexHNSW):
        inner.hnsw.efSearch = cfg.hnsw_ef_search
    elif isinstance(inner, faiss.IndexIVF):
        inner.nprobe = cfg.ivf_nprobe


def exact_search(ids: list[str], vectors: np.ndarray, queries: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
    """Exact inner-product top ``k`` of each query row over a small in-memory set."""
    if not ids:
        return [[] for _ in range(len(queries))]
    flat = faiss.IndexFlatIP(vectors.shape[1])
    flat.add(np.ascontiguousarray(vectors, dtype=np.float32))
    scores, rows = flat.search(np.ascontiguousarray(queries, dtype=np.float32), min(k, flat.ntotal))
    return [[(ids[r], float(s)) for r, s in zip(rr, ss) if r >= 0] for rr, ss in zip(rows, scores)]
