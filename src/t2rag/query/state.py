"""The query-triple state machine: classify triples by their unknowns and apply bindings, purely."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from t2rag.types import verbalize

TripleKind = Literal["resolved", "searchable", "fuzzy"]
ANSWER_PLACEHOLDER = "?answer"  # the unknown a plan asks for: its value is the answer

# ``?name``, a bare ``?``, or a name of up to five words (``?risk factor``): small models write
# the unknown as a phrase as often as an identifier, and a phrase taken for a literal name
# leaves the plan without its unknown.
_PLACEHOLDER = re.compile(r"\?(?:[\w'’-]+(?:\s+[\w'’-]+){0,4})?")
_NAME_GAPS = re.compile(r"[\s'’]+")


def is_placeholder(term: str) -> bool:
    """A term is a placeholder when it is wholly ``?name``, ``?a short phrase`` or a bare ``?``."""
    return _PLACEHOLDER.fullmatch(term.strip()) is not None


def canonical(term: str) -> str:
    """Placeholder names compare case-insensitively, a phrase joined by underscores:
    ``?Film`` and ``?film`` are one unknown, ``?risk factor`` is ``?risk_factor``."""
    return _NAME_GAPS.sub("_", term.strip().lower()).strip("_") or "?"


@dataclass(frozen=True)
class QueryTriple:
    """A triple whose terms may be placeholders (``?x``) standing for unknowns."""

    subject: str
    predicate: str
    object: str

    def terms(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)

    def as_list(self) -> list[str]:
        return list(self.terms())

    @property
    def placeholders(self) -> tuple[str, ...]:
        """Distinct placeholder names, in order of appearance."""
        return tuple(dict.fromkeys(canonical(t) for t in self.terms() if is_placeholder(t)))

    @property
    def kind(self) -> TripleKind:
        n = len(self.placeholders)
        return "resolved" if n == 0 else "searchable" if n == 1 else "fuzzy"

    def substitute(self, values: Mapping[str, str]) -> QueryTriple:
        """Replace every placeholder that ``values`` binds; other terms are kept."""
        def sub(t: str) -> str:
            return values.get(canonical(t), t) if is_placeholder(t) else t

        return QueryTriple(sub(self.subject), sub(self.predicate), sub(self.object))

    def query_text(self) -> str:
        """The query proposition: the known terms verbalized exactly as the index does."""
        s, p, o = ("" if is_placeholder(t) else t for t in self.terms())
        return verbalize(s, p, o)

    def __str__(self) -> str:
        return "[" + " | ".join(self.terms()) + "]"


@dataclass(frozen=True)
class Support:
    """Provenance: the proposition ids and chunk ids a value (or triple) rests on."""

    propositions: tuple[str, ...] = ()
    chunks: tuple[str, ...] = ()

    def __or__(self, other: Support) -> Support:
        return Support(
            tuple(dict.fromkeys(self.propositions + other.propositions)),
            tuple(dict.fromkeys(self.chunks + other.chunks)),
        )


@dataclass(frozen=True)
class Binding:
    """A value for a placeholder, with the evidence it came from and the round that found it."""

    placeholder: str
    value: str
    support: Support = Support()
    round: int = 0


@dataclass(frozen=True)
class TrackedTriple:
    """A query triple as decomposed (``origin``) and as it stands after substitutions."""

    origin: QueryTriple
    current: QueryTriple
    support: Support = Support()
    round: int = 0  # the round in which it reached its current kind (0: decomposition)


@dataclass(frozen=True)
class QueryState:
    """Where a query stands. ``to_search`` are searchable triples not searched yet: at the
    start every searchable triple, afterwards only those that became searchable last round."""

    resolved: tuple[TrackedTriple, ...] = ()
    searchable: tuple[TrackedTriple, ...] = ()
    fuzzy: tuple[TrackedTriple, ...] = ()
    to_search: tuple[TrackedTriple, ...] = ()
    bindings: tuple[Binding, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.searchable and not self.fuzzy

    def open_placeholders(self) -> set[str]:
        """Placeholders still unbound in some pending triple."""
        return {p for t in self.searchable + self.fuzzy for p in t.current.placeholders}

    def values(self) -> dict[str, str]:
        return {b.placeholder: b.value for b in self.bindings}


def initial_state(triples: Iterable[QueryTriple]) -> QueryState:
    """Classify decomposed triples; every searchable one is searched in round 1."""
    tracked = [TrackedTriple(t, t) for t in triples]
    searchable = tuple(t for t in tracked if t.current.kind == "searchable")
    return QueryState(
        resolved=tuple(t for t in tracked if t.current.kind == "resolved"),
        searchable=searchable,
        fuzzy=tuple(t for t in tracked if t.current.kind == "fuzzy"),
        to_search=searchable,
    )


def _bind(t: TrackedTriple, accepted: Mapping[str, Binding], round_no: int) -> TrackedTriple:
    used = [accepted[p] for p in t.current.placeholders if p in accepted]
    if not used:
        return t
    support = t.support
    for b in used:
        support = support | b.support
    current = t.current.substitute({b.placeholder: b.value for b in used})
    return replace(t, current=current, support=support, round=round_no)


def apply_bindings(state: QueryState, bindings: Iterable[Binding], round_no: int) -> QueryState:
    """Substitute each binding into every pending triple that uses its placeholder.

    Only bindings of open placeholders count, the first per placeholder wins. The resolved set
    only grows; fuzzy triples that lose unknowns move on; ``to_search`` becomes the triples
    that turned searchable now (the ones searched before are not searched again)."""
    open_names = state.open_placeholders()
    accepted: dict[str, Binding] = {}
    for b in bindings:
        if b.placeholder in open_names and b.placeholder not in accepted:
            accepted[b.placeholder] = b
    resolved, searchable, fuzzy, new = list(state.resolved), [], [], []
    for before in state.searchable + state.fuzzy:
        t = _bind(before, accepted, round_no)
        kind = t.current.kind
        if kind == "resolved":
            resolved.append(t)
        elif kind == "searchable":
            searchable.append(t)
            if before.current.kind == "fuzzy":
                new.append(t)
        else:
            fuzzy.append(t)
    return QueryState(
        resolved=tuple(resolved),
        searchable=tuple(searchable),
        fuzzy=tuple(fuzzy),
        to_search=tuple(new),
        bindings=state.bindings + tuple(accepted.values()),
    )
