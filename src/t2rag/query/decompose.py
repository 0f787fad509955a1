"""Structured decomposition: one LLM call turns a question into query triples with placeholders."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from t2rag.errors import ParseError
from t2rag.llm.base import LLM
from t2rag.llm.structured import ask_json, parse_json_lenient
from t2rag.prompts import load, load_data
from t2rag.query.config import DecomposeConfig
from t2rag.query.plan_rules import check, mark_answer, prune, question_shape
from t2rag.query.state import ANSWER_PLACEHOLDER, QueryTriple, canonical, is_placeholder
from t2rag.types import Message, Usage

PROMPT = "decompose"
EXAMPLES = "decompose_examples"  # worked examples (prompts/decompose_examples.json)
MAX_TRIPLES = 8  # a factoid question needs a handful; more is a runaway reply

_TERM: dict[str, Any] = {"type": "string", "minLength": 1}
_TRIPLE: dict[str, Any] = {"type": "array", "items": _TERM, "minItems": 3, "maxItems": 3}

SCHEMA: dict[str, Any] = {  # the free form: any list of triples
    "type": "object",
    "properties": {
        "triples": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_TRIPLES,
            "items": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3},
        }
    },
    "required": ["triples"],
}

# The plan forms (``plan_form``): the shape of the reply itself carries what the checks used to
# test afterwards. An open question's plan ends in its own required answer triple whose object
# is ?answer (the grammar writes it, the model cannot leave it out); a comparison or yes/no
# question's plan has a triple per compared item, at least two.
OPEN_PLAN: dict[str, Any] = {
    "type": "object",
    "properties": {
        "steps": {"type": "array", "maxItems": MAX_TRIPLES - 1, "items": _TRIPLE},
        "answer": {"type": "array", "prefixItems": [_TERM, _TERM, {"const": ANSWER_PLACEHOLDER}],
                   "minItems": 3, "maxItems": 3},
    },
    "required": ["steps", "answer"],
}
COMPARE_PLAN: dict[str, Any] = {
    "type": "object",
    "properties": {"triples": {"type": "array", "minItems": 2, "maxItems": MAX_TRIPLES, "items": _TRIPLE}},
    "required": ["triples"],
}
REPLY_FREE = 'Reply with JSON only: {"triples": [["subject", "predicate", "object"], ...]}'
REPLY_OPEN = ('Reply with JSON only: {"steps": [["subject", "predicate", "object"], ...], '
              '"answer": ["subject", "predicate", "?answer"]}. The steps are the lookups that lead to '
              'the answer, in order (none when the question names what the answer is about); "answer" '
              'is the one fact that gives what the question asks.')
REPLY_COMPARE = ('Reply with JSON only: {"triples": [["subject", "predicate", "object"], ...]}, '
                 'at least one triple per compared item.')


@dataclass(frozen=True)
class Decomposition:
    """The query triples, and whether the question itself had to stand in as the query.
    ``problems`` are the checks (see ``check``) the kept triples still fail after the re-ask."""

    triples: tuple[QueryTriple, ...]
    fallback: bool = False
    error: str | None = None
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class Example:
    """A worked decomposition shown to the model: a question and its query triples."""

    question: str
    triples: tuple[tuple[str, str, str], ...]

    def render(self, open_form: bool = False) -> str:
        """The example as the model should reply: in the open plan form (``OPEN_PLAN``) when
        ``open_form`` and it has an answer triple, else as a list of triples."""
        return f"Question: {self.question}\n" + json.dumps(self.reply(open_form))

    def reply(self, open_form: bool) -> dict[str, Any]:
        last = max((i for i, t in enumerate(self.triples) if t[2] == ANSWER_PLACEHOLDER), default=None)
        if not open_form or last is None:
            return {"triples": [list(t) for t in self.triples]}
        steps = [list(t) for i, t in enumerate(self.triples) if i != last]
        return {"steps": steps, "answer": list(self.triples[last])}


@cache
def examples() -> tuple[Example, ...]:
    """The pool of worked examples, in file order."""
    return tuple(Example(e["question"], tuple(tuple(t) for t in e["triples"])) for e in load_data(EXAMPLES))


Embed = Callable[[list[str]], np.ndarray]


def pick_examples(question: str, k: int, embed: Embed | None = None) -> tuple[Example, ...]:
    """The ``k`` worked examples a question is shown (all when ``k`` is 0 or no ``embed``):
    those of its shape first (``question_shape``; a comparison also sees the nearest open
    question, whose chain its triples imitate), nearest in meaning within a shape, in pool
    order. A few near examples cost a fraction of the pool's tokens and still show the
    shape the model must copy."""
    pool = examples()
    if not k or embed is None or k >= len(pool):
        return pool
    vectors = np.asarray(embed([question] + [e.question for e in pool]), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    sims = vectors[1:] @ vectors[0]
    shape = question_shape(question)
    same = sorted((i for i, e in enumerate(pool) if question_shape(e.question) == shape), key=lambda i: -sims[i])
    other = sorted((i for i in range(len(pool)) if i not in same), key=lambda i: -sims[i])
    chosen = (same[: k - 1] + other if shape != "open" else same + other)[:k]
    return tuple(pool[i] for i in sorted(chosen))


def question_triple(question: str) -> QueryTriple:
    """The whole question as one searchable query: its text is the query proposition."""
    return QueryTriple(" ".join(question.split()), "", ANSWER_PLACEHOLDER)


def _parts(item: Any) -> list[str]:
    if isinstance(item, dict):  # tolerate {"subject": .., "predicate": .., "object": ..}
        item = [item.get("subject"), item.get("predicate"), item.get("object")]
    if not isinstance(item, list) or len(item) != 3:
        raise ValueError(f"a triple must have 3 parts, got {item!r}"[:120])
    if not all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in item):
        raise ValueError(f"triple parts must be text, got {item!r}"[:120])
    return [" ".join(str(x).split()) for x in item]


def parse_triples(data: Any) -> list[QueryTriple]:
    """Turn the model's JSON (a triples list, or an open plan's steps and answer) into query
    triples; raises ValueError on a shape worth re-asking."""
    items: Any
    if isinstance(data, dict) and "answer" in data and "triples" not in data:
        steps = data.get("steps") or []
        items = (steps if isinstance(steps, list) else [steps]) + [data["answer"]]
    else:
        items = data.get("triples") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise ValueError("expected a non-empty 'triples' list")
    triples = []
    for item in items[:MAX_TRIPLES]:
        s, p, o = _parts(item)
        if not (s or o):
            raise ValueError("a triple has neither subject nor object")
        triples.append(QueryTriple(s, p, o))
    # A small model may repeat a triple verbatim; one copy is searched and resolved once.
    return list(dict.fromkeys(name_placeholders(triples)))


def name_placeholders(triples: list[QueryTriple]) -> list[QueryTriple]:
    """Canonicalize placeholder names; give each bare ``?`` a fresh unique name."""
    taken = {canonical(t) for q in triples for t in q.terms() if is_placeholder(t)}
    counter = 0

    def fresh() -> str:
        nonlocal counter
        while True:
            counter += 1
            name = f"?unknown{counter}"
            if name not in taken:
                taken.add(name)
                return name

    def fix(term: str) -> str:
        if not is_placeholder(term):
            return term
        return fresh() if term.strip() == "?" else canonical(term)

    return [QueryTriple(fix(q.subject), fix(q.predicate), fix(q.object)) for q in triples]


def plan_prompt(question: str, config: DecomposeConfig, grounding: Sequence[str] = (),
                embed: Embed | None = None) -> tuple[list[Message], dict[str, Any]]:
    """The decomposition prompt and the JSON schema its reply follows: ``grounding`` facts
    before the question, the worked examples ``pick_examples`` chooses, and with
    ``config.form`` the question shape's plan form (``OPEN_PLAN``, ``COMPARE_PLAN``)."""
    lines = "".join(f"- {g}\n" for g in grounding)
    facts = f"Facts from the collection that may name the entities:\n{lines}\n" if lines else ""
    open_form = config.form and question_shape(question) == "open"
    schema = SCHEMA if not config.form else OPEN_PLAN if open_form else COMPARE_PLAN
    reply = REPLY_FREE if not config.form else REPLY_OPEN if open_form else REPLY_COMPARE
    worked = "\n".join(e.render(open_form) for e in pick_examples(question, config.examples, embed))
    return load(PROMPT).render(question=question.strip(), grounding=facts, examples=worked, reply=reply), schema


def decompose(
    llm: LLM, question: str, config: DecomposeConfig | None = None, *, usage: Usage | None = None,
    max_tokens: int = 512, grounding: Sequence[str] = (), embed: Embed | None = None,
) -> Decomposition:
    """Decompose ``question``; on unusable output (after one re-ask) fall back to the question.

    ``grounding`` are facts retrieved for the question itself, shown before it so the model
    starts its triples from entities the collection names. The prompt shows ``config.examples``
    worked examples (``pick_examples``, by ``embed``; the whole pool without it). With
    ``config.check``, a reply that parses but fails a ``check`` is kept with its problems
    recorded, or (``config.reask``) first asked again once with the problems named. A
    decomposition without any unknown (a claim to verify) also gets the question as a query,
    so some evidence is retrieved. With ``config.form`` the reply is constrained to its shape's
    plan form (``OPEN_PLAN``, ``COMPARE_PLAN``). With ``config.repair``, an open plan's only
    unknown is its answer (``mark_answer``), triples that link to nothing the answer needs are
    dropped (``prune``) and triples the question states outright are givens, not failures."""
    config = config or DecomposeConfig()
    checked, reask, repair = config.check, config.reask, config.repair
    shape = question_shape(question)
    messages, schema = plan_prompt(question, config, grounding, embed)

    def repaired(triples: list[QueryTriple]) -> list[QueryTriple]:
        triples = mark_answer(question, triples, only_unknown=repair)
        return prune(triples) if repair and shape == "open" else triples

    def convert(data: Any) -> list[QueryTriple]:
        triples = parse_triples(data)
        if checked and reask:  # a failed check becomes a targeted re-ask (the repair comes after)
            problems = check(question, repaired(triples), givens=repair)
            if problems:
                raise ValueError("; ".join(problems))
        return triples

    problems: tuple[str, ...] = ()
    try:
        triples, _ = ask_json(llm, messages, schema, convert, stage="decompose", usage=usage, max_tokens=max_tokens)
    except ParseError as e:
        try:  # the re-ask still failed a check: keep its triples if they are triples at all
            triples = parse_triples(parse_json_lenient(e.raw))
        except (ParseError, ValueError):
            return Decomposition((question_triple(question),), fallback=True, error=str(e))
    if checked:
        triples = repaired(triples)
        problems = tuple(check(question, triples, givens=repair))
    if not any(t.placeholders for t in triples):
        triples.append(question_triple(question))
    return Decomposition(tuple(triples), problems=problems)
