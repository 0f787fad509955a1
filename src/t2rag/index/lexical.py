"""BM25 over proposition texts: the lexical half of hybrid evidence, saved beside the vectors.

Small embedders blur names (two films, two people with similar roles embed alike), while a
lexical match on a rare name is exact. The index is derived data like ``vectors.faiss``:
written atomically by the index writer together with the store generation it reflects, and
rebuilt in memory by a reader that finds it missing or stale.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np

DIRNAME = "lexical"


def _tokenize(texts: list[str]) -> list[list[str]]:
    import bm25s

    return bm25s.tokenize(texts, stopwords="en", show_progress=False, return_ids=False)  # type: ignore[return-value]


class LexicalIndex:
    """BM25 over (proposition id, text) rows; ``search`` returns ids with BM25 scores, best first."""

    def __init__(self, ids: list[str], model: object | None, generation: int, *, saved: bool = False) -> None:
        self.ids = ids
        self.model = model
        self.generation = generation
        self.saved = saved  # whether the directory holds this very index

    @classmethod
    def build(cls, rows: Iterable[tuple[str, str]], generation: int) -> LexicalIndex:
        import bm25s

        ids, texts = [], []
        for pid, text in rows:
            ids.append(pid)
            texts.append(text)
        tokens = _tokenize(texts)
        if not any(tokens):  # no document has a searchable word (bm25s cannot index that)
            return cls(ids, None, generation)
        model = bm25s.BM25()
        model.index(tokens, show_progress=False)
        return cls(ids, model, generation)

    def search(self, queries: list[str], top_m: int) -> list[list[tuple[str, float]]]:
        if self.model is None or not queries:
            return [[] for _ in queries]
        k = min(top_m, len(self.ids))
        docs, scores = self.model.retrieve(_tokenize(queries), k=k, show_progress=False)  # type: ignore[attr-defined]
        return [
            [(self.ids[int(d)], float(s)) for d, s in zip(drow, srow) if s > 0]
            for drow, srow in zip(np.asarray(docs), np.asarray(scores))
        ]

    def save(self, directory: Path) -> None:
        """Write ``directory/lexical`` atomically (a temp folder renamed over the old one)."""
        target = directory / DIRNAME
        tmp = Path(tempfile.mkdtemp(dir=directory, prefix=".lexical-"))
        try:
            if self.model is not None:
                self.model.save(str(tmp), show_progress=False)  # type: ignore[attr-defined]
            (tmp / "ids.json").write_text(json.dumps({"generation": self.generation, "ids": self.ids,
                                                      "model": self.model is not None}))
            old = directory / f".lexical-old-{os.getpid()}"
            if target.exists():
                os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
            self.saved = True
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @classmethod
    def load_if_current(cls, directory: Path, generation: int, count: int | None = None) -> LexicalIndex | None:
        """The saved index when it reflects ``generation`` (and holds ``count`` ids, and its model
        as many documents); None when missing, stale, damaged or unreadable."""
        import bm25s

        target = directory / DIRNAME
        try:
            meta = json.loads((target / "ids.json").read_text("utf-8"))
            if meta.get("generation") != generation:
                return None
            ids = [str(i) for i in meta["ids"]]
            if count is not None and len(ids) != count:
                return None
            model = bm25s.BM25.load(str(target), show_progress=False) if meta.get("model", bool(ids)) else None
            if model is not None and int(model.scores.get("num_docs", len(ids))) != len(ids):
                return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        return cls(ids, model, generation, saved=True)


def clean_temp(directory: Path) -> None:
    """Remove folders a killed save left behind."""
    for p in directory.glob(".lexical-*"):
        shutil.rmtree(p, ignore_errors=True)
