"""Embeddings from any OpenAI-compatible ``/embeddings`` endpoint, batched and L2-normalized."""

from __future__ import annotations

from typing import Unpack

import numpy as np

from t2rag.embed.base import normalize_rows
from t2rag.errors import BackendError, ConfigError
from t2rag.openai_http import Connection, connect


class OpenAICompatEmbedder:
    """Sends texts in batches of ``batch_size``; rows come back in input order, unit-norm, float32.

    When ``dim`` is not given it is learned by embedding one short probe text at construction.
    """

    def __init__(self, model: str, *, batch_size: int = 256, dim: int | None = None,
                 **connection: Unpack[Connection]) -> None:
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        self.model = model
        self.batch_size = batch_size
        self.base_url, self.name, self._http = connect("openai", model, **connection)
        self.dim = dim if dim is not None else int(self._batch(["dimension probe"]).shape[1])

    def __repr__(self) -> str:
        return f"OpenAICompatEmbedder({self.name!r}, dim={self.dim})"

    def close(self) -> None:
        """Close the HTTP connections (they are also closed when the object is collected)."""
        self._http.close()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows = [self._batch(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        out = np.concatenate(rows, axis=0)
        if out.shape[1] != self.dim:
            raise BackendError(f"{self.name}: server returned dim {out.shape[1]}, expected {self.dim}")
        return normalize_rows(out)

    def _batch(self, texts: list[str]) -> np.ndarray:
        body = self._http.post("/embeddings", {"model": self.model, "input": texts})
        data = body.get("data")
        if not isinstance(data, list) or len(data) != len(texts):
            got = len(data) if isinstance(data, list) else "no"
            raise BackendError(f"{self.name}: asked for {len(texts)} embeddings, got {got}")
        try:
            ordered = sorted(data, key=lambda d: int(d["index"]))
            return np.asarray([d["embedding"] for d in ordered], dtype=np.float32)
        except (KeyError, TypeError, ValueError):
            raise BackendError(f"{self.name}: malformed embeddings response") from None
