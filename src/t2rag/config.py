"""Per-stage configuration: frozen dataclasses, unknown keys rejected, saved with the index."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, TypeVar

from t2rag.errors import ConfigError
from t2rag.llm.base import DEFAULT_MAX_TOKENS

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


@dataclass(frozen=True)
class QueryConfig:
    """The online algorithm's knobs (paper defaults: N = 3 rounds, k = 5 unique chunks).

    Beyond the paper, on by default because they were measured to help a small model (README,
    "What each change bought"): ``hybrid`` evidence (dense + BM25 fused), worked examples of
    the question's shape (``decompose_examples``), bounded resolve prompts (``resolve_facts``,
    ``lookback_passages``) and the never-worse answer path
    (``answer_passages``: the answer reads the question's own best passages beside the facts;
    ``reject_failed_plans``: a plan that fails its checks is answered as chunk RAG would;
    ``facts_as_notes``: the answer reads the passages first and the facts as notes to check),
    one placeholder hop per resolve call (``one_hop``), the last hop read by the answer step
    (``read_last_hop``) and a broken chain answered by reading, not by the paper's question
    round (``question_fallback`` off)."""

    rounds: int = 3
    k_chunks: int = 5
    top_m: int = 50  # candidates fetched per query proposition before pooling
    lookback: bool = True  # resolution sees the source chunks, not only propositions
    synth_chunks: bool = True  # after an early/forced stop, synthesis also sees passages
    max_tokens: int = DEFAULT_MAX_TOKENS
    # Not in the paper: round 1 also searches with the question itself, pooled with the query
    # triples under the same chunk budget (a guard against a decomposition that misses a hop).
    question_query: bool = False
    # The paper's fallback: when no triple is searchable but fuzzy ones (two unknowns) remain, a
    # round searches with the question and may bind them. Off: the chain stops there and the
    # answer reads the facts so far and k_chunks passages (the 1.5B model's fallback rounds
    # answered 7 of 35 dev questions, chunk RAG 9 of them, at ~1,000 extra tokens each).
    question_fallback: bool = False
    hybrid: bool = True  # fuse dense and BM25 rankings of propositions (reciprocal rank fusion)
    grounded: bool = False  # decompose after seeing the top facts retrieved for the question
    check_decomposition: bool = True  # name ?answer by rule, record what fails decompose.check
    reask_decomposition: bool = False  # re-ask once when a check fails (fixed 0 of 13 on HotpotQA)
    ground_facts: int = 6  # how many of those facts the decomposition prompt shows
    # Worked examples the decomposition prompt shows: those of the question's shape nearest in
    # meaning (query/decompose.py ``pick_examples``); 0 shows the whole pool.
    decompose_examples: int = 2
    resolve_facts: int = 8  # at most this many retrieved facts per resolve call
    lookback_passages: int = 1  # source passages (of the best facts) per resolve call
    # Passages the answer reads, taken in turn from the question's own best (its chunk ranking
    # fused with its facts' chunks) and each round's retrieval, when the chain reached its answer
    # hop; after a stop short of it, or a rejected plan, at least k_chunks (as chunk RAG reads).
    # 0: the paper's behaviour, the last round's chunks after a stop.
    answer_passages: int = 4
    # A plan (decomposition) that fails its checks is not run: the answer reads the question's
    # passages as chunk RAG does (a small model's broken plan binds wrong facts that mislead).
    reject_failed_plans: bool = True
    answer_facts: bool = True  # the answer sees the resolved triples (off: passages only, an ablation)
    passages_when_complete: bool = True  # also read passages after natural completion
    # The answer reads the passages first and the resolved facts as notes that may be wrong
    # (the reader's order), instead of facts first with passages as support: a small model
    # copies a wrongly bound fact into the answer (MuSiQue, 1.5B: 9 vs 5 of 70 right).
    facts_as_notes: bool = True
    # When every pending triple asks for ?answer, that round's passages go to the answer step
    # instead of a resolve call (resolving ?answer and writing the answer are one job).
    read_last_hop: bool = True
    # A resolve call may fill only what its round searched: the sole unknown of a searchable
    # triple, and in the question fallback the open bridge placeholders, never ?answer. Offered
    # every open placeholder, a 1.5B model fills ?answer with the first hop's value
    # ('American Psychological Association' as the association's first president).
    one_hop: bool = True
    # Constrain the decomposition reply to its question shape's plan form: an open question's
    # plan ends in a required answer triple whose object is ?answer; a comparison has a triple
    # per item (query/decompose.py). Off: a free list of triples (measured better: docs/plan-repair.md).
    plan_form: bool = False
    # Repair a plan by rule instead of rejecting it: an open plan's only unknown is its answer,
    # triples linked to nothing the answer needs are dropped, the question's own statements
    # are givens, and a triple relating an unknown to itself is dropped.
    plan_repair: bool = True
    # Ask the answer once more when it repeats a bridge the chain found (?country = Hong Kong
    # answered to "When was the country ... taken?") or is not the kind of value the question
    # asks for (a date, a number, a name): query/answer_check.py.
    answer_check: bool = False

    def __post_init__(self) -> None:
        check_types(self)
        for name, high in (("rounds", 10), ("k_chunks", 100), ("top_m", 10_000), ("max_tokens", 32_768)):
            check_range(name, getattr(self, name), 1, high)
        if min(self.ground_facts, self.resolve_facts, self.lookback_passages, self.answer_passages,
               self.decompose_examples) < 0:
            raise ConfigError("ground_facts, resolve_facts, lookback_passages, answer_passages and "
                              "decompose_examples must be >= 0")
