"""The index manifest: what built this index, checked every time it is opened."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from t2rag.errors import IndexMismatchError, IndexNotFoundError
from t2rag.version import VERSION

FORMAT_VERSION = 1
MANIFEST = "manifest.json"


@dataclass
class Manifest:
    embedder: str
    dim: int
    config: dict[str, Any]
    format_version: int = FORMAT_VERSION
    library_version: str = VERSION
    llm: str | None = None
    # The server URLs of OpenAI-compatible backends ("llm", "embedder"), so that commands reach
    # the same servers again without being told (never a key; a password in a URL is removed).
    endpoints: dict[str, str] = field(default_factory=dict)
    prompts: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    # One entry per build that extracted chunks: which LLM (or "imported"), with which prompts.
    builds: list[dict[str, Any]] = field(default_factory=list)
    # Set while a copy fills this index ("a copy of SRC"): readers refuse it until it finishes.
    incomplete: str | None = None

    def to_json(self) -> str:
        return json.dumps(self.__dict__, indent=2, sort_keys=True) + "\n"

    def save(self, directory: Path) -> None:
        path = directory / MANIFEST
        tmp = path.with_suffix(".json.tmp")
        try:
            tmp.write_text(self.to_json())
            os.replace(tmp, path)
        finally:  # a full disk leaves the old manifest and no half-written temporary file
            tmp.unlink(missing_ok=True)

    @staticmethod
    def load(directory: Path) -> Manifest:
        path = Path(directory) / MANIFEST
        if not path.exists():
            raise IndexNotFoundError(f"no T2RAG index at {directory} (no {MANIFEST}); build one with 't2rag index'")
        try:
            text = path.read_text("utf-8")
        except UnicodeDecodeError:
            raise IndexMismatchError(f"{path} is not a valid T2RAG manifest: not UTF-8 text") from None
        except OSError as e:
            raise IndexMismatchError(f"{path} cannot be read: {e.strerror or e}") from None
        return Manifest.from_json(text, str(directory), where=str(path))

    @staticmethod
    def from_json(text: str, location: str, where: str | None = None) -> Manifest:
        """Parse and check a manifest read from ``where`` for the index at ``location``."""
        try:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise TypeError("not a JSON object")
            m = Manifest(**data)
            m.check_types()
        except (ValueError, TypeError) as e:
            raise IndexMismatchError(f"{where or location} is not a valid T2RAG manifest: {e}") from None
        if m.format_version != FORMAT_VERSION:
            raise IndexMismatchError(
                f"index {location} has format {m.format_version}; this T2RAG reads format {FORMAT_VERSION}"
            )
        return m

    def check_types(self) -> None:
        """Raise TypeError naming the first field whose value has the wrong type (a tampered file)."""
        expect: dict[str, type | tuple[type, ...]] = {
            "embedder": str, "dim": int, "config": dict, "format_version": int, "library_version": str,
            "llm": (str, type(None)), "prompts": dict, "counts": dict, "builds": list, "endpoints": dict,
            "incomplete": (str, type(None))}
        for name, kind in expect.items():
            value = getattr(self, name)
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise TypeError(f"'{name}' is a {type(value).__name__}")

    def check_embedder(self, name: str, dim: int) -> None:
        if name != self.embedder or dim != self.dim:
            raise IndexMismatchError(
                f"index was built with embedder {self.embedder!r} ({self.dim}-d) but {name!r} ({dim}-d) was given; "
                f"use --embedder {self.embedder} or build a new index"
            )
