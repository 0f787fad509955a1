"""Token-based chunking with overlap; tokens are words and punctuation marks."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import deque
from itertools import islice

from t2rag.config import ChunkConfig
from t2rag.index.corpus import Document
from t2rag.types import Chunk, Location

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def chunk_document(doc: Document, cfg: ChunkConfig) -> list[Chunk]:
    """The chunks of ``doc`` (see ``chunk_spans``)."""
    return [c for c, _, _ in chunk_spans(doc, cfg)]


def locate(doc: Document, start: int, end: int) -> Location:
    """The location of the text ``doc.text[start:end]``: its source, pages and span."""
    page = last = None
    if doc.pages:
        page, last = bisect_right(doc.pages, start), bisect_right(doc.pages, max(start, end - 1))
    return Location(doc.title, doc.source, page, last, start, end)


def chunk_spans(doc: Document, cfg: ChunkConfig) -> list[tuple[Chunk, int, int]]:
    """The chunks of ``doc``, each with its character span in ``doc.text``. A paged document
    is chunked page by page, so that a chunk, and so a citation, never spans two pages."""
    if len(doc.pages) < 2:
        return _window_spans(doc, cfg)
    spans = []
    for a, b in zip(doc.pages, doc.pages[1:] + (len(doc.text),)):
        page = doc.text[a:b].strip()
        if page:
            a += doc.text[a:b].index(page)
            spans += [(c, a + x, a + y) for c, x, y in _window_spans(Document(doc.title, page), cfg)]
    return spans


def _window_spans(doc: Document, cfg: ChunkConfig) -> list[tuple[Chunk, int, int]]:
    """Split a text into chunks of at most ``cfg.size`` tokens, ``cfg.overlap`` shared.

    A text that fits in one chunk is kept verbatim (so imported OpenIE matches by passage);
    longer texts are cut at token boundaries, keeping the original spacing. Tokens are read
    as a stream through a window of ``cfg.size``, so memory beyond the chunks themselves
    stays bounded however long the document (a 42 MB text once took 1.2 GB as a token list).
    """
    tokens = _TOKEN.finditer(doc.text)
    window: deque[re.Match[str]] = deque(islice(tokens, cfg.size))
    following = next(tokens, None)
    if following is None:
        return [(Chunk.make(doc.title, doc.text), 0, len(doc.text))]
    chunks = []
    step = cfg.size - cfg.overlap
    while True:
        start, end = window[0].start(), window[-1].end()
        chunks.append((Chunk.make(doc.title, doc.text[start:end]), start, end))
        if following is None:  # this window reached the last token
            return chunks
        for _ in range(step):
            window.popleft()
        window.append(following)
        window.extend(islice(tokens, cfg.size - len(window)))
        following = next(tokens, None) if len(window) == cfg.size else None
