"""Benchmark question sets in the HippoRAG2 ``reproduce/dataset`` layout, normalized to ``Sample``.

A dataset NAME is two files in one folder: ``NAME.json`` (questions) and
``NAME_corpus.json`` (a list of ``{title, text}``). Each question format has one loader;
the loader is picked by the name (``musique``, ``2wikimultihopqa``, ``hotpotqa``,
``popqa``, GraphRAG-Bench ``story``/``novel``/``medical``) or, for other names, by the
keys of the first record.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from t2rag.errors import InputError
from t2rag.index.corpus import Document, load_corpus

Record = dict[str, Any]


@dataclass(frozen=True)
class GoldPassage:
    """A gold supporting passage; ``text`` is None when the set names only its title."""

    title: str
    text: str | None = None


@dataclass(frozen=True)
class Sample:
    id: str
    question: str
    answers: list[str]
    supporting: list[GoldPassage] = field(default_factory=list)

    @property
    def supporting_titles(self) -> list[str]:
        return list(dict.fromkeys(p.title for p in self.supporting))


def _as_list(value: Any) -> list[str]:
    """Gold answers come as a string, a list, or (PopQA) a JSON-encoded list in a string."""
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                decoded = json.loads(text)
            except ValueError:
                decoded = None
            if isinstance(decoded, list):
                return _as_list(decoded)
        return [text] if text else []
    if isinstance(value, (list, tuple, set)):
        return [a for v in value for a in _as_list(v)]
    return [str(value)]


def _answers(rec: Record, *keys: str) -> list[str]:
    found: list[str] = []
    for key in keys:
        found += _as_list(rec.get(key))
    return list(dict.fromkeys(a for a in found if a))


def _id(rec: Record, i: int) -> str:
    return str(rec.get("id", rec.get("_id", i)))


def from_paragraphs(rec: Record, i: int) -> Sample:
    """MuSiQue / HippoRAG ``sample``: ``paragraphs[{title, paragraph_text|text, is_supporting}]``."""
    gold = [
        GoldPassage(p.get("title", ""), p.get("paragraph_text", p.get("text")))
        for p in rec.get("paragraphs") or []
        if p.get("is_supporting", True)
    ]
    answers = _answers(rec, "answer", "answer_aliases")
    return Sample(_id(rec, i), rec["question"], answers, gold)


def from_context(rec: Record, i: int, joiner: str = " ") -> Sample:
    """HotpotQA / 2WikiMultihopQA: ``context[[title, [sentences]]]`` + ``supporting_facts``."""
    titles = {f[0] for f in rec.get("supporting_facts") or []}
    gold = [GoldPassage(t, joiner.join(s)) for t, s in rec.get("context") or [] if t in titles]
    answers = _answers(rec, "answer", "answer_aliases")
    return Sample(_id(rec, i), rec["question"], answers, gold)


def from_hotpotqa(rec: Record, i: int) -> Sample:
    # HotpotQA sentences carry their own leading spaces; the corpus joins them with "".
    return from_context(rec, i, joiner="")


def from_popqa(rec: Record, i: int) -> Sample:
    """PopQA: ``possible_answers`` (a list, or a JSON list in a string), maybe ``paragraphs``."""
    s = from_paragraphs({**rec, "answer": None}, i) if rec.get("paragraphs") else None
    answers = _answers(rec, "possible_answers", "answer", "obj_aliases", "answer_aliases")
    return Sample(_id(rec, i), rec["question"], answers, s.supporting if s else [])


def _titles(context: Any) -> list[str]:
    if isinstance(context, str):
        return [context]
    titles: list[str] = []
    for item in context or []:
        if isinstance(item, str):
            titles.append(item)
        elif isinstance(item, dict) and "title" in item:
            titles.append(str(item["title"]))
        elif isinstance(item, (list, tuple)) and item:
            titles.append(str(item[0]))
    return titles


def from_graphrag_bench(rec: Record, i: int) -> Sample:
    """GraphRAG-Bench: ``answer`` (list or string), ``evidence``, ``context`` naming source titles.

    Evidence snippets are not tied to one title, so gold passages are matched by title only.
    """
    gold = [GoldPassage(t) for t in dict.fromkeys(_titles(rec.get("context", rec.get("source"))))]
    return Sample(_id(rec, i), rec["question"], _answers(rec, "answer", "answer_aliases"), gold)


Loader = Callable[[Record, int], Sample]

LOADERS: dict[str, Loader] = {
    "musique": from_paragraphs,
    "sample": from_paragraphs,
    "2wikimultihopqa": from_context,
    "hotpotqa": from_hotpotqa,
    "popqa": from_popqa,
    "story": from_graphrag_bench,
    "novel": from_graphrag_bench,
    "medical": from_graphrag_bench,
    "graphrag_bench": from_graphrag_bench,
}


def pick_loader(name: str, first: Record) -> Loader:
    """The loader for dataset ``name``: by name prefix, else by the first record's keys."""
    base = name.lower()
    for key in sorted(LOADERS, key=len, reverse=True):
        if base.startswith(key):
            return LOADERS[key]
    if "possible_answers" in first:
        return from_popqa
    if "supporting_facts" in first:
        return from_context
    if "paragraphs" in first:
        return from_paragraphs
    if "evidence" in first:
        return from_graphrag_bench
    raise InputError(f"dataset {name!r}: cannot tell its format from keys {sorted(first)}")


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise InputError(f"dataset file not found: {path}")
    try:
        return json.loads(path.read_text("utf-8"))
    except ValueError as e:
        raise InputError(f"{path}: invalid JSON ({e})") from None


def load_samples(name: str, data_dir: str | Path, limit: int | None = None) -> list[Sample]:
    """Read ``data_dir/NAME.json`` into samples (the first ``limit`` when given)."""
    path = Path(data_dir) / f"{name}.json"
    records = _read_json(path)
    if not isinstance(records, list) or not records:
        raise InputError(f"{path}: expected a non-empty JSON list of questions")
    loader = pick_loader(name, records[0])
    samples: list[Sample] = []
    seen: set[str] = set()
    for i, rec in enumerate(records[:limit] if limit else records):
        try:
            s = loader(rec, i)
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"{path}: record {i} is malformed ({e!r})") from None
        if s.id in seen:  # ids key resumable runs, so they must be unique
            s = Sample(f"{s.id}#{i}", s.question, s.answers, s.supporting)
        seen.add(s.id)
        samples.append(s)
    return samples


def load_dataset_corpus(name: str, data_dir: str | Path) -> list[Document]:
    return load_corpus(Path(data_dir) / f"{name}_corpus.json")
