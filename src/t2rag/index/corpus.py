"""Corpus input: a JSON list or JSONL of {title, text}, a document file, or a folder of them
(text, Markdown, reStructuredText, HTML, PDF, Word: ``index/documents.py``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from t2rag.errors import InputError
from t2rag.index.documents import FORMAT_NAMES, FORMATS, read_file
from t2rag.jsontext import jsonl_lines, loads


@dataclass(frozen=True)
class Document:
    """A document to index: its title (unique in an index), its text, and where it came from:
    ``source`` (a path or URL as given) and, for paged formats, ``pages``: the offset in
    ``text`` where each page starts (the first is 0)."""

    title: str
    text: str
    source: str = ""
    pages: tuple[int, ...] = ()


def _from_records(records: object, where: str) -> list[Document]:
    if not isinstance(records, list):
        raise InputError(f"{where}: expected a JSON list of {{title, text}} objects")
    docs = []
    for i, r in enumerate(records):
        if not isinstance(r, dict) or not isinstance(r.get("text"), str):
            raise InputError(f"{where}: record {i} has no string 'text' field")
        title = r.get("title", "")
        if not isinstance(title, str):
            raise InputError(f"{where}: record {i} has a non-string 'title'")
        if has_surrogates(title) or has_surrogates(r["text"]):
            raise InputError(f"{where}: record {i} holds text that is not valid Unicode (a lone surrogate)")
        if r["text"].strip() or title.strip():
            docs.append(Document(title.strip(), r["text"].strip()))
    return docs


def has_surrogates(text: str) -> bool:
    """Whether ``text`` holds lone surrogates (from ``\\ud800`` in JSON or undecodable bytes),
    which no UTF-8 file or database accepts."""
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def load_corpus(path: str | Path, notes: list[str] | None = None) -> list[Document]:
    """Read documents from a .json list, a .jsonl file, one document file, or a folder of
    document files (searched recursively; hidden files and folders left out). A file that
    gives no document (empty, unsupported, unreadable) or was read with a guess (another
    encoding) adds a line to ``notes``; nothing is skipped silently."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"corpus not found: {p}")
    if p.is_dir() or p.suffix.lower() in FORMATS:
        files = _folder_files(p) if p.is_dir() else [p]
        read = [read_file(f, str(f.relative_to(p).with_suffix("")) if p.is_dir() else f.stem) for f in files]
        if notes is not None:
            notes += [f"{r.title}: {r.note}" for r in read if r.note]
        docs = [Document(r.title, r.text, str(f), r.pages) for f, r in zip(files, read) if not r.skipped]
        if not docs:
            what = "holds no readable document" if p.is_dir() else "gave no text"
            raise InputError(f"{p} {what} (T2RAG reads {FORMAT_NAMES}, and .json/.jsonl lists of {{title, text}})"
                             + (f"; {read[0].title}: {read[0].note}" if len(read) == 1 else ""))
        return docs
    if p.suffix.lower() not in (".json", ".jsonl"):
        raise InputError(f"{p}: unsupported file type (T2RAG reads {FORMAT_NAMES}, "
                         "and .json/.jsonl lists of {title, text})")
    try:
        raw = p.read_text("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{p}: not UTF-8 text") from None
    if p.suffix.lower() == ".jsonl":
        records = []
        for n, line in enumerate(jsonl_lines(raw), 1):
            if line.strip():
                try:
                    records.append(loads(line))
                except json.JSONDecodeError as e:
                    raise InputError(f"{p}:{n}: invalid JSON ({e.msg})") from None
        return _from_records(records, str(p))
    try:
        data = loads(raw)
    except json.JSONDecodeError as e:
        raise InputError(f"{p}: invalid JSON at line {e.lineno} ({e.msg})") from None
    return _from_records(data, str(p))


def _folder_files(folder: Path) -> list[Path]:
    """Every file under ``folder`` but hidden ones (``.git/``, ``.DS_Store``), in path order."""
    return sorted(f for f in folder.rglob("*")
                  if f.is_file() and not any(part.startswith(".") for part in f.relative_to(folder).parts))
