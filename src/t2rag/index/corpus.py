"""Corpus input: a JSON list or JSONL of {title, text}, or a directory of .txt/.md files."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from t2rag.errors import InputError
from t2rag.llm.structured import jsonl_lines, loads


@dataclass(frozen=True)
class Document:
    title: str
    text: str


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


def load_corpus(path: str | Path) -> list[Document]:
    """Read documents from a .json list, a .jsonl file, or a directory of .txt/.md files."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"corpus not found: {p}")
    if p.is_dir():
        files = sorted(f for f in p.rglob("*") if f.suffix.lower() in (".txt", ".md") and f.is_file())
        if not files:
            raise InputError(f"{p}: directory holds no .txt or .md files")
        docs = []
        for f in files:
            try:
                text = f.read_text("utf-8")
            except UnicodeDecodeError:
                raise InputError(f"{f}: not UTF-8 text") from None
            docs.append(Document(str(f.relative_to(p).with_suffix("")), text.strip()))
        return docs
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
