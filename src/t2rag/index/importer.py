"""OpenIE files in HippoRAG's format: import (v1 and HippoRAG2), matched to chunks by passage, and export."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from t2rag.errors import InputError
from t2rag.index.corpus import has_surrogates
from t2rag.jsontext import loads
from t2rag.llm.structured import scalar_text
from t2rag.outfile import write_text
from t2rag.types import Chunk, Triple, md5_hex, near_text


@dataclass(frozen=True)
class Extraction:
    entities: list[str]
    triples: list[Triple]
    dropped: int = 0  # triples of the file dropped by clean_triples_counted


# Parts that carry no fact: a small model answers "is X a novelist?" instead of extracting.
JUNK_PARTS = frozenset({"yes", "no", "true", "false", "none", "null", "n/a", "na", "nan", "unknown", "not mentioned"})
MAX_PREDICATE_WORDS = 10  # longer is a sentence copied into the predicate, not a relation
MAX_PART_CHARS = 300  # an entity or relation; longer is a passage pasted into a triple
MAX_TRIPLES_PER_CHUNK = 1_000  # far beyond any real extraction; a runaway reply or file stops here
_MEANINGFUL = re.compile(r"[^\W_]|[$€£%&]")  # "$" and "Q" are real objects; "-" and "?" are not


def junk_reason(parts: list[str]) -> str | None:
    """Why a triple of three cleaned text parts is junk, or None when it is kept."""
    if any(len(x) > MAX_PART_CHARS for x in parts):
        return f"a part over {MAX_PART_CHARS} characters"
    if any(not _MEANINGFUL.search(x) for x in parts):
        return "a part with no letter or digit"
    if any(x.lower().strip(".") in JUNK_PARTS for x in (parts[0], parts[2])):
        return "yes/no/none as an entity"
    if len(parts[1].split()) > MAX_PREDICATE_WORDS:
        return "predicate is a sentence"
    return None


def _near_key(t: Triple) -> tuple[str, ...]:
    return tuple(near_text(x) for x in (t.subject, t.predicate, t.object))


def clean_triples_counted(raw: object) -> tuple[list[Triple], int]:
    """Keep well-formed, meaningful triples; returns them and how many items were dropped:
    malformed (not three scalar parts), junk (``junk_reason``), or exact or near duplicates
    (equal up to case, punctuation and articles) of an earlier triple of the same chunk."""
    out: dict[tuple[str, ...], Triple] = {}
    if not isinstance(raw, list):
        return [], 0
    for t in raw[: MAX_TRIPLES_PER_CHUNK * 2]:
        if len(out) >= MAX_TRIPLES_PER_CHUNK:
            break
        if not isinstance(t, (list, tuple)) or len(t) != 3:
            continue
        parts = [scalar_text(x) for x in t]
        if any(x is None or has_surrogates(x) for x in parts):
            continue
        if junk_reason(parts) is None:  # type: ignore[arg-type]
            triple = Triple(*parts)  # type: ignore[arg-type]
            out.setdefault(_near_key(triple), triple)
    return list(out.values()), len(raw) - len(out)


def clean_triples(raw: object) -> list[Triple]:
    """``clean_triples_counted`` without the count."""
    return clean_triples_counted(raw)[0]


def load_openie(path: str | Path) -> dict[str, Extraction]:
    """Read a HippoRAG OpenIE file; returns passage text (``title\\ntext``) -> extraction.

    Accepts v1 (``docs[{title, text, passage, extracted_entities, extracted_triples}]``) and
    HippoRAG2 (``docs[{idx, passage, extracted_entities, extracted_triples}]``). Entries are
    also indexed by their ``idx`` (``chunk-<md5(passage)>``), which equals our chunk id, when
    it is the hash of their own passage: an idx that names another passage gives it nothing.
    """
    p = Path(path)
    try:
        data = loads(p.read_text("utf-8"))
    except FileNotFoundError:
        raise InputError(f"OpenIE file not found: {p}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise InputError(f"{p}: not a JSON OpenIE file ({e})") from None
    docs = data.get("docs") if isinstance(data, dict) else None
    if not isinstance(docs, list):
        raise InputError(f"{p}: expected an object with a 'docs' list (HippoRAG OpenIE format)")
    out: dict[str, Extraction] = {}
    for i, d in enumerate(docs):
        if not isinstance(d, dict):
            raise InputError(f"{p}: docs[{i}] is not an object")
        passage = d.get("passage")
        if not isinstance(passage, str) and isinstance(d.get("text"), str):
            passage = f"{d.get('title', '')}\n{d['text']}"
        if not isinstance(passage, str):
            raise InputError(f"{p}: docs[{i}] has no 'passage' text")
        for key in ("extracted_entities", "extracted_triples"):
            if d.get(key) is not None and not isinstance(d[key], list):
                raise InputError(f"{p}: docs[{i}].{key} is a {type(d[key]).__name__}, not a list")
        if has_surrogates(passage):
            raise InputError(f"{p}: docs[{i}] holds text that is not valid Unicode (a lone surrogate)")
        ents = [scalar_text(e) for e in d.get("extracted_entities") or []]
        ex = Extraction(list(dict.fromkeys(e for e in ents if e and not has_surrogates(e))),
                        *clean_triples_counted(d.get("extracted_triples")))
        out[passage] = ex
        if d.get("idx") == "chunk-" + md5_hex(passage):  # an idx naming another passage is ignored
            out[d["idx"]] = ex
    return out


def write_openie(path: str | Path, extractions: Iterable[tuple[Chunk, Extraction]]) -> int:
    """Write extractions as a HippoRAG2 OpenIE file (``docs[{idx, passage, extracted_entities,
    extracted_triples}]``) that ``load_openie`` (and HippoRAG2) reads back. A regular file is
    written to a temporary name and renamed, so an interrupted export leaves no half file; a
    device or FIFO is written through (``t2rag.outfile``). Returns the number of passages written."""
    p = Path(path)
    docs = [
        {"idx": c.id, "passage": c.passage, "extracted_entities": ex.entities,
         "extracted_triples": [t.as_list() for t in ex.triples]}
        for c, ex in extractions
    ]
    write_text(p, json.dumps({"docs": docs}, ensure_ascii=False, indent=1))
    return len(docs)
