"""Resolution: one LLM call per round fills placeholders from the retrieved evidence, validated."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from t2rag.errors import ParseError
from t2rag.llm.base import DEFAULT_MAX_TOKENS, LLM
from t2rag.llm.budget import fit_passages
from t2rag.llm.structured import ask_json, scalar_text
from t2rag.prompts import load
from t2rag.query.config import ResolveConfig
from t2rag.query.formatting import format_passages, format_triples
from t2rag.query.retrieve import Evidence
from t2rag.query.state import ANSWER_PLACEHOLDER, Binding, QueryState, Support, canonical, is_placeholder
from t2rag.types import Chunk, Message, PropositionHit, Usage

PROMPT = "resolve"
# A reply names a few placeholders with short values (under 60 tokens each); one that runs to
# the general reply budget is a model looping, and its re-ask would loop as long again.
REPLY_TOKENS = 256

def schema(open_names: set[str]) -> dict[str, Any]:
    """The reply schema; constrained decoding can only name placeholders that are still open."""
    placeholder: dict[str, Any] = {"type": "string"}
    if open_names:
        placeholder["enum"] = sorted(open_names)
    return {
        "type": "object",
        "properties": {
            "bindings": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "placeholder": placeholder,
                        "value": {"type": "string"},
                        "evidence": {"type": "array", "items": {"type": "integer"}, "minItems": 1},
                    },
                    "required": ["placeholder", "value", "evidence"],
                },
            }
        },
        "required": ["bindings"],
    }


_EMBEDDED_PLACEHOLDER = re.compile(r"(?:^|\s)\?[A-Za-z_]")
MAX_VALUE_CHARS = 200  # an entity, date or number; longer is a passage copied out

_WORD = re.compile(r"[^\W_]+")
_FILLER = frozenset({"a", "an", "the", "of", "in", "on", "at", "and", "to", "for", "by", "is", "was"})
MIN_GROUNDED = 0.5  # share of a value's words that must occur in the evidence shown

# Values a model writes when it has none; a binding to one of these is no binding.
NON_VALUES = frozenset({"unknown", "none", "n/a", "na", "null", "not found", "not given", "not mentioned", "?"})


@dataclass(frozen=True)
class Dropped:
    entry: Any
    reason: str


@dataclass(frozen=True)
class Resolution:
    """What one resolution call produced: valid bindings, dropped entries, or an error."""

    bindings: tuple[Binding, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    error: str | None = None


def targets(state: QueryState, *, in_order: bool, one_hop: bool = True) -> set[str]:
    """The placeholders a resolve call may fill: every open one, or with ``one_hop`` only what the
    round searched -- in a triples round the sole unknown of each searchable triple, in the
    question fallback (``in_order`` False) the open placeholders but ``?answer`` (a fuzzy
    triple always has another), which the answer step settles from the passages. Asked for a
    bridge and the answer at once, a small model fills the answer with the bridge's value."""
    if not one_hop:
        return state.open_placeholders()
    if in_order:
        return {t.current.placeholders[0] for t in state.searchable}
    return state.open_placeholders() - {ANSWER_PLACEHOLDER}


def render(question: str, state: QueryState, evidence: Evidence, passages: Sequence[Chunk],
           names: set[str] | None = None) -> list[Message]:
    """The resolve prompt: the state, the placeholders to fill (``names``; every open one when
    None), the numbered retrieved facts and, for look-back, the source ``passages`` of those
    facts (none without look-back)."""
    props = "\n".join(f"[{i}] {p.text}" for i, p in enumerate(evidence.propositions, 1))
    shown = "\nSource passages of the retrieved facts:\n" + format_passages(passages) + "\n" if passages else ""
    return load(PROMPT).render(
        question=question.strip(),
        facts=format_triples(state.resolved),
        open=format_triples(state.searchable + state.fuzzy, note_fuzzy=True),
        names=", ".join(sorted(state.open_placeholders() if names is None else names)) or "(none)",
        propositions=props or "(none)",
        passages=shown,
    )


def _entries(data: Any) -> list[Any]:
    """The shape check worth a re-ask: a 'bindings' list (a bare list is accepted)."""
    items = data.get("bindings") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError("expected a 'bindings' list")
    return items


def _check(entry: Any, open_names: set[str], seen: set[str], given: set[str]) -> tuple[str, str] | str:
    """(placeholder, value) for a valid entry, else the reason it is dropped."""
    if not isinstance(entry, dict):
        return "not an object"
    name, value = entry.get("placeholder"), scalar_text(entry.get("value"))
    if not isinstance(name, str) or value is None:
        return "placeholder or value missing"
    name = canonical(name if name.strip().startswith("?") else "?" + name.strip())
    if name not in open_names:
        return f"{name} is not a placeholder to fill now"
    if name in seen:
        return f"{name} bound twice"
    if not value or is_placeholder(value) or value.lower().strip(".") in NON_VALUES:
        return "empty value"
    if _EMBEDDED_PLACEHOLDER.search(value):
        return "value contains a placeholder"
    if len(value) > MAX_VALUE_CHARS:
        return f"value over {MAX_VALUE_CHARS} characters"
    if value.lower() in given:
        return "value is a name the question already gives"
    return name, value


def words(text: str) -> set[str]:
    """Lower-cased words of a text, without the filler words a paraphrase adds or drops."""
    return {w for w in _WORD.findall(text.lower()) if w not in _FILLER}


def grounded(value: str, evidence_words: set[str]) -> bool:
    """Whether a value is taken from the evidence: most of its words occur there. A small
    model fills a placeholder from memory (a wrong state, a plausible area code) when the
    evidence does not answer it; such a value is no resolution, whatever it cites."""
    w = words(value)
    return not w or len(w & evidence_words) >= MIN_GROUNDED * len(w)


def _support(entry: dict[str, Any], evidence: Evidence) -> Support:
    refs = entry.get("evidence")
    nums = refs if isinstance(refs, list) else [refs]
    props = [
        evidence.propositions[n - 1]
        for n in nums
        if isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= len(evidence.propositions)
    ]
    return Support(tuple(dict.fromkeys(p.id for p in props)), _credited(props, evidence, entry.get("value")))


def _credited(props: list[PropositionHit], evidence: Evidence, value: Any) -> tuple[str, ...]:
    """The passages a binding is credited to: of its facts' source chunks, those the round read
    that state the value; failing that, those the round read; failing that, all of them. (A
    fact extracted from many passages is not credited to passages nobody read or that do not
    say it.)"""
    every = list(dict.fromkeys(c for p in props for c in p.chunk_ids))
    read = {c.id: c for c in evidence.chunks}
    seen = [c for c in every if c in read]
    stating = [c for c in seen if isinstance(value, str) and grounded(value, words(read[c].passage))]
    return tuple(stating or seen or every)


def validate(
    entries: list[Any], state: QueryState, evidence: Evidence, round_no: int, *, in_order: bool = True,
    names: set[str] | None = None,
) -> Resolution:
    """Keep bindings of open placeholders to real values; drop (and say why) the rest.

    With ``in_order`` (rounds driven by searchable triples), a placeholder is only bound when
    it is the sole unknown of some pending triple, counting placeholders bound earlier in the
    same reply as known: chains like ?author -> ?city resolve in one round, but a small
    model's slip of writing the value of ?studio into ?owner is caught. The question-embedding
    fallback round (fuzzy triples only) has no such order and skips the check. Only ``names``
    (every open placeholder when None) may be bound."""
    open_names = state.open_placeholders() if names is None else names
    given = {x.lower() for t in state.resolved + state.searchable + state.fuzzy
             for x in (t.origin.subject, t.origin.object) if x and not is_placeholder(x)}
    seen = words(" ".join([p.text for p in evidence.propositions] + [c.passage for c in evidence.chunks]))
    bindings: list[Binding] = []
    dropped: list[Dropped] = []
    for entry in entries:
        checked = _check(entry, open_names, {b.placeholder for b in bindings}, given)
        if isinstance(checked, str):
            dropped.append(Dropped(entry, checked))
            continue
        support = _support(entry, evidence)
        if not support.propositions:
            dropped.append(Dropped(entry, "no valid evidence number"))
            continue
        if not grounded(checked[1], seen):
            dropped.append(Dropped(entry, "value not found in the evidence"))
            continue
        bindings.append(Binding(checked[0], checked[1], support, round_no))
    bindings, circular = _not_circular(bindings, state)
    dropped += [Dropped({"placeholder": b.placeholder, "value": b.value}, "value repeats a term of its own triple")
                for b in circular]
    if in_order:
        bindings, unordered = _in_triple_order(bindings, state)
        dropped += [Dropped({"placeholder": b.placeholder, "value": b.value}, f"{b.placeholder} is not the only "
                            "unknown of any open triple") for b in unordered]
    return Resolution(tuple(bindings), tuple(dropped))


def _not_circular(bindings: list[Binding], state: QueryState) -> tuple[list[Binding], list[Binding]]:
    """Split off bindings whose value is already a known term of a triple they fill: a small
    model often answers [X | shares a border with | ?y] with X itself."""
    keep: list[Binding] = []
    circular: list[Binding] = []
    for b in bindings:
        terms = {x.lower() for t in state.searchable + state.fuzzy if b.placeholder in t.current.placeholders
                 for x in t.current.terms() if not is_placeholder(x)}
        (circular if b.value.lower() in terms else keep).append(b)
    return keep, circular


def _in_triple_order(bindings: list[Binding], state: QueryState) -> tuple[list[Binding], list[Binding]]:
    """Split bindings into those reachable one unknown at a time, and the rest."""
    pending = [set(t.current.placeholders) for t in state.searchable + state.fuzzy]
    known: set[str] = set()
    accepted: list[Binding] = []
    rest = list(bindings)
    progress = True
    while progress:
        progress = False
        for b in list(rest):
            if any(b.placeholder in names and names - known <= {b.placeholder} for names in pending):
                accepted.append(b)
                known.add(b.placeholder)
                rest.remove(b)
                progress = True
    return accepted, rest


def resolve(
    llm: LLM,
    question: str,
    state: QueryState,
    evidence: Evidence,
    config: ResolveConfig | None = None,
    *,
    round_no: int,
    usage: Usage | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    in_order: bool = True,
) -> Resolution:
    """One resolution call for the ``targets`` placeholders; an unusable reply (after one re-ask)
    binds nothing this round. With ``config.lookback`` the first ``config.passages`` source
    chunks (those of the best facts) are shown too, as many as fit the model's context."""
    config = config or ResolveConfig()
    names = targets(state, in_order=in_order, one_hop=config.one_hop)
    chunks = evidence.chunks[: config.passages] if config.lookback else ()
    reply = min(max_tokens, REPLY_TOKENS)
    messages, _ = fit_passages(llm, lambda cs: render(question, state, evidence, cs, names), chunks,
                               max_tokens=reply, stage="resolve", usage=usage)
    try:
        entries, _ = ask_json(llm, messages, schema(names), _entries, stage="resolve", usage=usage,
                              max_tokens=reply)
    except ParseError as e:
        return Resolution(error=f"resolve: {e}")
    return validate(entries, state, evidence, round_no, in_order=in_order, names=names)
