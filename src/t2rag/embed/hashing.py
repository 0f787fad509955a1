"""A deterministic hashing embedder (a test double): bag of word and bigram hashes."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from t2rag.embed.base import normalize_rows

_WORD = re.compile(r"\w+")


class HashingEmbedder:
    """Texts sharing words get similar vectors; no model, no randomness. For tests only."""

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.name = f"hashing:{dim}"

    def _bucket(self, token: str) -> tuple[int, float]:
        h = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        v = int.from_bytes(h, "little")
        return v % self.dim, 1.0 if (v >> 63) & 1 else -1.0

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            for tok in words + [a + "_" + b for a, b in zip(words, words[1:])]:
                j, sign = self._bucket(tok)
                out[i, j] += sign
        return normalize_rows(out)
