"""Per-stage configuration: frozen dataclasses, unknown keys rejected, saved with the index."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, TypeVar

from t2rag.errors import ConfigError

C = TypeVar("C")


def from_dict(cls: type[C], data: dict[str, Any] | None) -> C:
    """Build config ``cls`` from a dict, rejecting unknown keys with a one-line error."""
    data = dict(data or {})
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - names)
    if unknown:
        raise ConfigError(f"unknown {cls.__name__} key(s): {', '.join(unknown)}; known: {', '.join(sorted(names))}")
    try:
        return cls(**data)
    except ConfigError:
        raise
    except (TypeError, ValueError) as e:
        raise ConfigError(f"bad {cls.__name__}: {e}") from None


def to_dict(cfg: Any) -> dict[str, Any]:
    return dataclasses.asdict(cfg)


_SCALARS: dict[str, tuple[tuple[type, ...], str]] = {
    "int": ((int,), "a whole number"), "bool": ((bool,), "true or false"), "str": ((str,), "text"),
    "float": ((int, float), "a finite number")}


def check_types(cfg: Any) -> None:
    """Reject a field whose value is not of its declared scalar type (JSON gives 2.5 for an
    int, "yes" for a bool, NaN or 1e400 for a count); nested configs are checked by their own
    class. Raises ConfigError naming the field."""
    for f in dataclasses.fields(cfg):
        if str(f.type) not in _SCALARS:
            continue
        want, what = _SCALARS[str(f.type)]
        value = getattr(cfg, f.name)
        ok = isinstance(value, want) and (bool in want) == isinstance(value, bool)
        if not ok or (isinstance(value, float) and not math.isfinite(value)):
            raise ConfigError(f"{f.name} must be {what}, not {value!r}"[:160])


def check_range(name: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise ConfigError(f"{name} must be {low}..{high}, not {value}")


@dataclass(frozen=True)
class ChunkConfig:
    """Token-based chunking. Tokens are words and punctuation marks (a model-free proxy;
    roughly 1.3 LLM tokens each), so 200 tokens fits a small model's context with room."""

    size: int = 200
    overlap: int = 30

    def __post_init__(self) -> None:
        check_types(self)
        if self.size < 8 or not (0 <= self.overlap < self.size):
            raise ConfigError(
                f"bad chunk config: need size >= 8 and 0 <= overlap < size (got {self.size}, {self.overlap})"
            )


@dataclass(frozen=True)
class OpenIEConfig:
    mode: str = "two_pass"  # "two_pass" (entities, then triples) or "single"
    max_tokens: int = 768

    def __post_init__(self) -> None:
        check_types(self)
        if self.mode not in ("two_pass", "single"):
            raise ConfigError(f"OpenIE mode must be 'two_pass' or 'single', not {self.mode!r}")


@dataclass(frozen=True)
class StoreConfig:
    """Vector index type: exact inner product, or an approximate one for large indexes."""

    index_type: str = "flat"  # "flat" | "hnsw" | "ivf"
    hnsw_m: int = 32
    hnsw_ef_construction: int = 80
    hnsw_ef_search: int = 128
    ivf_nlist: int = 0  # 0 -> about 4 * sqrt(n)
    ivf_nprobe: int = 32

    def __post_init__(self) -> None:
        check_types(self)
        if self.index_type not in ("flat", "hnsw", "ivf"):
            raise ConfigError(f"index type must be 'flat', 'hnsw' or 'ivf', not {self.index_type!r}")


@dataclass(frozen=True)
class IndexConfig:
    chunk: ChunkConfig = ChunkConfig()
    openie: OpenIEConfig = OpenIEConfig()
    store: StoreConfig = StoreConfig()
    embed_batch: int = 256

    @staticmethod
    def from_dict(data: dict[str, Any] | None) -> IndexConfig:
        data = dict(data or {})
        chunk = from_dict(ChunkConfig, data.pop("chunk", None))
        openie = from_dict(OpenIEConfig, data.pop("openie", None))
        store = from_dict(StoreConfig, data.pop("store", None))
        base = from_dict(IndexConfig, data)
        return dataclasses.replace(base, chunk=chunk, openie=openie, store=store)
