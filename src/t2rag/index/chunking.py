"""Token-based chunking with overlap; tokens are words and punctuation marks."""

from __future__ import annotations

import re
from collections import deque
from itertools import islice

from t2rag.config import ChunkConfig
from t2rag.index.corpus import Document
from t2rag.types import Chunk

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def chunk_document(doc: Document, cfg: ChunkConfig) -> list[Chunk]:
    """Split a document into chunks of at most ``cfg.size`` tokens, ``cfg.overlap`` shared.

    A text that fits in one chunk is kept verbatim (so imported OpenIE matches by passage);
    longer texts are cut at token boundaries, keeping the original spacing. Tokens are read
    as a stream through a window of ``cfg.size``, so memory beyond the chunks themselves
    stays bounded however long the document (a 42 MB text once took 1.2 GB as a token list).
    """
    tokens = _TOKEN.finditer(doc.text)
    window: deque[re.Match[str]] = deque(islice(tokens, cfg.size))
    following = next(tokens, None)
    if following is None:
        return [Chunk.make(doc.title, doc.text)]
    chunks = []
    step = cfg.size - cfg.overlap
    while True:
        chunks.append(Chunk.make(doc.title, doc.text[window[0].start() : window[-1].end()]))
        if following is None:  # this window reached the last token
            return chunks
        for _ in range(step):
            window.popleft()
        window.append(following)
        window.extend(islice(tokens, cfg.size - len(window)))
        following = next(tokens, None) if len(window) == cfg.size else None
