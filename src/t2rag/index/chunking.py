"""Token-based chunking with overlap; tokens are words and punctuation marks."""

from __future__ import annotations

import re

from t2rag.config import ChunkConfig
from t2rag.index.corpus import Document
from t2rag.types import Chunk

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def chunk_document(doc: Document, cfg: ChunkConfig) -> list[Chunk]:
    """Split a document into chunks of at most ``cfg.size`` tokens, ``cfg.overlap`` shared.

    A text that fits in one chunk is kept verbatim (so imported OpenIE matches by passage);
    longer texts are cut at token boundaries, keeping the original spacing.
    """
    spans = [m.span() for m in _TOKEN.finditer(doc.text)]
    if len(spans) <= cfg.size:
        return [Chunk.make(doc.title, doc.text)]
    chunks = []
    step = cfg.size - cfg.overlap
    for start in range(0, len(spans), step):
        window = spans[start : start + cfg.size]
        chunks.append(Chunk.make(doc.title, doc.text[window[0][0] : window[-1][1]]))
        if start + cfg.size >= len(spans):
            break
    return chunks
