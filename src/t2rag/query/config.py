"""The online algorithm's settings: one frozen config per stage, each field describing itself.

``QueryConfig`` holds the loop's own settings (rounds, passages per round, reply budget) and
one sub-config per stage -- ``decompose``, ``retrieve``, ``resolve``, ``answer`` -- which the
engine hands to that stage whole. Each field carries a one-line description in its metadata;
``describe()`` lists them (``t2rag config``, docs/configuration.md). Settings are written with
dotted keys (``answer.passages=3``) on the command line, in the API and over REST; unknown keys
are refused, and the flat keys of version 0.1 are refused with the name that replaced them.
Why each default was chosen, with the measurements, is in docs/how-it-works.md.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from t2rag.config import check_range, check_types, from_dict
from t2rag.errors import ConfigError
from t2rag.llm.base import DEFAULT_MAX_TOKENS


def knob(default: Any, doc: str) -> Any:
    """A config field with its one-line description."""
    return field(default=default, metadata={"doc": doc})


def _stage(cls: type, doc: str) -> Any:
    return field(default_factory=cls, metadata={"doc": doc, "stage": True})


def _non_negative(cfg: Any) -> None:
    check_types(cfg)
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            raise ConfigError(f"{f.name} must be >= 0, not {value}")


@dataclass(frozen=True)
class DecomposeConfig:
    """How the question becomes query triples (query/decompose.py)."""

    examples: int = knob(2, "worked examples shown: those of the question's shape nearest in meaning "
                            "(0: the whole pool)")
    grounded: bool = knob(False, "decompose after seeing the top facts retrieved for the question")
    ground_facts: int = knob(6, "how many of those facts a grounded decomposition shows")
    check: bool = knob(True, "name ?answer by rule and record what fails the plan checks")
    reask: bool = knob(False, "ask once more when a plan fails its checks")
    form: bool = knob(False, "constrain the reply to the question shape's plan form "
                             "(the answer triple a required field)")
    repair: bool = knob(True, "repair a failing plan by rule (its only unknown, or the one its wh-phrase names, is "
                              "?answer; unlinked, self-relating and past-the-answer triples dropped; the question's "
                              "statements taken as givens)")
    reject_failed: bool = knob(True, "a plan that still fails its checks is not run: the question is answered from its "
                                     "own passages, as chunk RAG would")

    def __post_init__(self) -> None:
        _non_negative(self)


@dataclass(frozen=True)
class RetrieveConfig:
    """How each round searches the facts (query/retrieve.py)."""

    top_m: int = knob(50, "candidate facts fetched per query before the queries' rankings are pooled")
    hybrid: bool = knob(True, "fuse each query's dense and BM25 rankings of facts (reciprocal rank fusion)")
    with_question: bool = knob(False, "round 1 also searches with the question itself, under the same passage budget")
    distinct: bool = knob(False, "a fact joining the same two entities as a better-ranked fact of the round is "
                                 "skipped: it takes no place in the fact budget and brings no passage")

    def __post_init__(self) -> None:
        _non_negative(self)
        check_range("retrieve.top_m", self.top_m, 1, 10_000)


@dataclass(frozen=True)
class ResolveConfig:
    """How a round fills placeholders from its evidence (query/resolve.py)."""

    facts: int = knob(8, "at most this many retrieved facts per resolve call (0: every fact retrieved)")
    lookback: bool = knob(True, "a resolve call also reads source passages of its facts, not only the facts")
    passages: int = knob(1, "how many source passages (those of the best facts) a resolve call reads")
    one_hop: bool = knob(True, "a call fills only what its round searched, never ?answer with a bridge's value")

    def __post_init__(self) -> None:
        _non_negative(self)


@dataclass(frozen=True)
class AnswerConfig:
    """What the answer step reads and how it writes the answer (query/synthesize.py)."""

    passages: int = knob(4, "passages read beside the facts when the chain reached its answer hop, taken in turn "
                            "from the question's best and each round's; after a stop short of it at least k_chunks; "
                            "0: the paper's last-round passages")
    answer_hop_first: bool = knob(False, "when the chain reached its answer hop, that hop's passages are taken "
                                         "first, before the question's best and the earlier rounds'")
    passages_after_stop: bool = knob(True, "after a stop short of completion the answer also reads passages")
    passages_when_complete: bool = knob(True, "after natural completion the answer also reads passages "
                                              "(the paper reads the resolved facts alone)")
    facts: bool = knob(True, "the answer sees the resolved triples")
    facts_as_notes: bool = knob(True, "passages first and the resolved facts as notes that may be wrong, not facts "
                                      "first with passages as support")
    read_last_hop: bool = knob(True, "when every pending triple asks for ?answer, that round's passages go to the "
                                     "answer step instead of a resolve call")
    check: bool = knob(False, "ask once more when the answer repeats a bridge or is not the kind of value asked for")
    plain_read: bool = knob(False, "a chain that reached its answer hop with nothing bound is answered by chunk RAG's "
                                   "read of k_chunks passages (the question's and the hop's, in turn), not with notes")

    def __post_init__(self) -> None:
        _non_negative(self)


STAGES: dict[str, type] = {"decompose": DecomposeConfig, "retrieve": RetrieveConfig, "resolve": ResolveConfig,
                           "answer": AnswerConfig}


@dataclass(frozen=True)
class QueryConfig:
    """The whole query: the loop's settings and one config per stage (paper: N = 3, k = 5)."""

    rounds: int = knob(3, "at most this many retrieval rounds (the paper's N)")
    k_chunks: int = knob(5, "unique passages per round's retrieval (the paper's k)")
    max_tokens: int = knob(DEFAULT_MAX_TOKENS, "reply budget of an LLM call")
    question_fallback: bool = knob(False, "the paper's fallback: when no triple is searchable but triples with two "
                                          "unknowns remain, a round searches with the question")
    decompose: DecomposeConfig = _stage(DecomposeConfig, "planning")
    retrieve: RetrieveConfig = _stage(RetrieveConfig, "searching")
    resolve: ResolveConfig = _stage(ResolveConfig, "resolving")
    answer: AnswerConfig = _stage(AnswerConfig, "answering")

    def __post_init__(self) -> None:
        check_types(self)
        for name, high in (("rounds", 10), ("k_chunks", 100), ("max_tokens", 32_768)):
            check_range(name, getattr(self, name), 1, high)
        for name, cls in STAGES.items():
            if not isinstance(getattr(self, name), cls):
                raise ConfigError(f"{name} must be given as {cls.__name__}, not {type(getattr(self, name)).__name__}")

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> QueryConfig:
        """Build from nested sections (``{"answer": {"passages": 3}}``), dotted keys
        (``{"answer.passages": 3}``) or both; ConfigError names an unknown or renamed key."""
        return QueryConfig().with_settings(data or {})

    def with_settings(self, data: dict[str, Any]) -> QueryConfig:
        """A copy with ``data`` (nested or dotted keys) applied over this config."""
        if not isinstance(data, dict):
            raise ConfigError(f"a query config is a JSON object, not {type(data).__name__}")
        top: dict[str, Any] = {}
        sections: dict[str, dict[str, Any]] = {name: {} for name in STAGES}
        for key, value in data.items():
            stage, _, name = str(key).partition(".")
            if name and stage in STAGES:
                sections[stage][name] = value
            elif not name and stage in STAGES and isinstance(value, dict):
                sections[stage].update(value)
            elif key in RENAMED:
                raise ConfigError(f"query setting {key!r} is now {RENAMED[key]!r} (see docs/configuration.md)")
            else:
                top[key] = value
        stages = {name: from_dict(cls, {**to_flat(getattr(self, name)), **sections[name]}) if sections[name]
                  else getattr(self, name) for name, cls in STAGES.items()}
        own = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in STAGES}
        unknown = sorted(set(top) - set(own))
        if unknown:
            raise ConfigError(f"unknown query setting(s): {', '.join(unknown)}; see `t2rag config`")
        try:
            return QueryConfig(**{**own, **top}, **stages)
        except (TypeError, ValueError) as e:
            raise ConfigError(f"bad QueryConfig: {e}") from None

    @classmethod
    def paper(cls) -> QueryConfig:
        """The paper's algorithm, with none of the additions this library turns on by default."""
        return cls.from_dict(PAPER)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def to_flat(cfg: Any) -> dict[str, Any]:
    return {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)}


def describe() -> list[tuple[str, Any, str]]:
    """Every setting as (dotted key, default, description), in declaration order."""
    rows: list[tuple[str, Any, str]] = []
    default = QueryConfig()
    for f in dataclasses.fields(QueryConfig):
        if f.metadata.get("stage"):
            rows += [(f"{f.name}.{g.name}", getattr(getattr(default, f.name), g.name), g.metadata["doc"])
                     for g in dataclasses.fields(STAGES[f.name])]
        else:
            rows.append((f.name, getattr(default, f.name), f.metadata["doc"]))
    return rows


# Version 0.1's flat keys and the settings that replaced them (refused with this hint).
RENAMED: dict[str, str] = {
    "decompose_examples": "decompose.examples", "grounded": "decompose.grounded",
    "ground_facts": "decompose.ground_facts", "check_decomposition": "decompose.check",
    "reask_decomposition": "decompose.reask", "plan_form": "decompose.form", "plan_repair": "decompose.repair",
    "reject_failed_plans": "decompose.reject_failed", "top_m": "retrieve.top_m", "hybrid": "retrieve.hybrid",
    "question_query": "retrieve.with_question", "resolve_facts": "resolve.facts", "lookback": "resolve.lookback",
    "lookback_passages": "resolve.passages", "one_hop": "resolve.one_hop", "answer_passages": "answer.passages",
    "synth_chunks": "answer.passages_after_stop", "passages_when_complete": "answer.passages_when_complete",
    "answer_facts": "answer.facts", "facts_as_notes": "answer.facts_as_notes",
    "read_last_hop": "answer.read_last_hop", "answer_check": "answer.check",
}

# The paper's algorithm (arXiv 2506.02623v2, Algorithm 1): every addition of this library off.
PAPER: dict[str, Any] = {
    "question_fallback": True, "decompose.examples": 0, "decompose.check": False, "decompose.repair": False,
    "decompose.reject_failed": False, "retrieve.hybrid": False, "resolve.facts": 0, "resolve.passages": 5,
    "resolve.one_hop": False, "answer.passages": 0, "answer.passages_when_complete": False,
    "answer.facts_as_notes": False, "answer.read_last_hop": False,
}

# Named variants of the defaults, each changing one part (the ablation tables in docs/accuracy.md).
ABLATIONS: dict[str, dict[str, Any]] = {
    "single": {"rounds": 1},
    "nolookback": {"resolve.lookback": False},
    "question": {"retrieve.with_question": True},
    "paper": PAPER,
    "dense": {"retrieve.hybrid": False},
    "grounded": {"decompose.grounded": True},
    "unchecked": {"decompose.check": False},
    "reask": {"decompose.reask": True},
    "fullresolve": {"resolve.facts": 0, "resolve.passages": 5},
    "propresolve": {"resolve.passages": 0},
    "factsonly": {"answer.passages": 0, "answer.passages_when_complete": False},  # the paper's answer step
    "paperanswer": {"answer.passages_when_complete": False},  # passages only after a stop
    "nofacts": {"answer.facts": False},  # the answer reads T2RAG's passages without its facts
    "allplans": {"decompose.reject_failed": False},  # run plans that fail their checks too
    "factsfirst": {"answer.facts_as_notes": False},  # the facts first, passages as support
    "nolasthop": {"answer.read_last_hop": False},  # ?answer resolved by a call of its own, then answered
    "anyhop": {"resolve.one_hop": False},  # a resolve call may fill any open placeholder, ?answer too
    "3passages": {"answer.passages": 3},  # the answer reads 3 passages, not 4
    "fallback": {"question_fallback": True},  # the paper's question round when the chain breaks
    "allexamples": {"decompose.examples": 0},  # every worked example, not the 2 nearest of the shape
    "planform": {"decompose.form": True},  # the plan reply constrained to its shape's form
    "norepair": {"decompose.repair": False},  # a failing plan rejected, not repaired
    "answercheck": {"answer.check": True},  # a bridge-echo or wrong-kind answer asked again
    "hopread": {"answer.passages": 2, "answer.answer_hop_first": True},  # 2 passages: the answer hop's best first
    "hopfirst": {"answer.answer_hop_first": True},  # the answer hop's passages first, still 4 of them
    "plainread": {"answer.plain_read": True},  # nothing bound before the answer hop: chunk RAG's read
    "distinct": {"retrieve.distinct": True},  # one fact per pair of entities in a round's facts
}
