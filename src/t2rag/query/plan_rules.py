"""Plan rules: the checks a decomposition must pass and the repairs that need no model call --
naming the unknown the question asks for ?answer and dropping triples the answer does not need."""

from __future__ import annotations

import re
from collections.abc import Sequence

from t2rag.query.state import ANSWER_PLACEHOLDER, QueryTriple, canonical, is_placeholder

_YES_NO = re.compile(r"^(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b", re.I)
_WORD = re.compile(r"\w+")
_CHOOSES = re.compile(r"^(which|who|what|whose)\b", re.I)
# A wh-phrase that closes a clause ("..., released in which year, is ...", "... in what city?")
# asks for a value even when the question opens with "Do" or "Is" (a title such as "Do Lafzon
# Ki Kahani"); a relative "in which X was born" runs on into its clause and does not match.
_ASKS_VALUE = re.compile(r"\b(what|which)\s+\w+\s*[,?]", re.I)
_OPTION = re.compile(r"\bor\s+(?:(?:the|a|an)\s+)?(\S)")
# Words that ask to rank the options ("Which came first the forming of X or the birth of Y?").
_RANKING = frozenset("""first last earlier earliest later latest older oldest younger youngest more most less
    least fewer larger largest bigger biggest smaller smallest longer longest shorter shortest taller tallest
    higher highest lower lowest greater closer farther further better worse""".split())


def question_shape(question: str) -> str:
    """"yes/no", "comparison" (a choice between named options) or "open", by surface form.

    The question is its whole text or its last sentence ("X has an OBE. Does Y also have
    one?"). A comparison opens with which/who/what/whose and offers options joined by "or":
    a name after the "or" ("..., Mark King or Nick Hexum?") or a word that ranks them
    ("first", "older"). An "or" inside a phrase ("shot in or around Leland", "in the blood or
    bone marrow") offers no options: such a question is open. A question that asks for a value
    by a closing wh-phrase ("released in which year?") is not yes/no, whatever its first word."""
    q = question.strip()
    last = re.split(r"(?<=\w\w[.!?])\s+(?=[A-Z])", q)[-1]  # not after an initial ("E. B. White")
    if (_YES_NO.match(q) or _YES_NO.match(last)) and not _ASKS_VALUE.search(last):
        return "yes/no"
    asks = _CHOOSES.match(q) or _CHOOSES.match(last)
    named = any(m.group(1)[0].isupper() or m.group(1)[0].isdigit() for m in _OPTION.finditer(q))
    ranked = bool(_RANKING & {w.lower() for w in _WORD.findall(q)})
    if asks and re.search(r"\bor\b", q, re.I) and (named or ranked):
        return "comparison"
    return "open"


def check(question: str, triples: Sequence[QueryTriple], *, givens: bool = False) -> list[str]:
    """What makes a decomposition unusable, as short instructions for the re-ask (empty: fine).

    Every triple has three parts; no part restates the question; an open question has the
    ?answer placeholder and every triple connects to it through shared placeholders; a
    comparison or yes/no question has a triple per compared item (at least two). With
    ``givens``, a triple without unknowns (a fact the question states) needs no link, and an
    open plan must have a triple to start from (one unknown, the rest named)."""
    problems = []
    if any(not all(t.terms()) for t in triples):
        problems.append("every triple needs a subject, a predicate and an object")
    q_words = set(_WORD.findall(question.lower()))
    for t in triples:
        for term in t.terms():
            # Copying a long name from the question is right; copying most of the question is not.
            words = set(_WORD.findall(term.lower()))
            if len(words) >= 6 and len(words & q_words) >= 0.6 * len(q_words):
                problems.append(f"'{term[:60]}' copies the question; split it into short parts")
                break
    shape = question_shape(question)
    if shape == "open":
        names = [set(t.placeholders) for t in triples]
        if not any(ANSWER_PLACEHOLDER in n for n in names):
            problems.append(f"use {ANSWER_PLACEHOLDER} for what the question asks")
        elif not _connected([n for n in names if n or not givens]):
            problems.append(f"link every triple to {ANSWER_PLACEHOLDER} through shared placeholders")
        elif givens and not any(len(n) == 1 for n in names):
            problems.append("start from a name the question gives: one triple with a single unknown")
    elif len(triples) < 2:
        problems.append("write one triple per compared item")
    return problems


def mark_answer(question: str, triples: list[QueryTriple], *, only_unknown: bool = False) -> list[QueryTriple]:
    """Name the answer placeholder when the model forgot to: in an open question without
    ?answer, the unknown that only the last triple mentions is what the chain ends in (a
    repair, not a re-ask: small models name it ?waterfall as often as ?answer); with
    ``only_unknown`` (the repair rules), a plan's one and only unknown is its answer wherever it
    stands, and otherwise the one unknown named after what the question asks for
    (``asked_unknown``) is."""
    if question_shape(question) != "open" or not triples:
        return triples
    if any(ANSWER_PLACEHOLDER in t.placeholders for t in triples):
        return triples
    unknowns = list(dict.fromkeys(p for t in triples for p in t.placeholders))
    if only_unknown and len(unknowns) == 1:
        return [t.substitute({unknowns[0]: ANSWER_PLACEHOLDER}) for t in triples]
    asked = asked_unknown(question, unknowns) if only_unknown else None
    if asked:
        return [t.substitute({asked: ANSWER_PLACEHOLDER}) for t in triples]
    earlier = {p for t in triples[:-1] for p in t.placeholders}
    last = [p for p in triples[-1].placeholders if p not in earlier]
    if len(last) != 1:
        return triples
    return [t.substitute({last[0]: ANSWER_PLACEHOLDER}) for t in triples]


# The names an unknown asking "when", "where" or "how many" goes by (the question names no noun).
_ASKED_BY = {
    "when": {"year", "date", "time", "day", "when"},
    "where": {"place", "location", "where"},
    "how many": {"number", "count", "amount", "many"},
    "how much": {"amount", "number", "much"},
}
_WH = re.compile(r"\b(what|which|when|where|how many|how much|who|whom|whose|why|how)\b")
_COPULA = {"is", "was", "are", "were"}
_DETERMINERS = {"the", "a", "an"}
_KIND = {"kind", "type", "sort"}
_AFTER_NOUN = {"of", "for", "in", "on", "at", "to", "from", "by", "with"}
_ENDS_NOUN = _AFTER_NOUN | _COPULA | _DETERMINERS | {
    "that", "did", "does", "do", "has", "have", "had", "can", "could", "will", "would"}


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _asked_words(question: str) -> set[str]:
    """What the question's own wh-phrase says is asked: the words of the noun after "what" or
    "which" (and a date's, a place's or a number's usual names for "when", "where", "how
    many"). Only a wh-word that opens the question (``In what film ...``) or its last phrase
    (``... based in what state?``) counts: one inside a relative clause (``the country where
    ...``) does not say what is asked. ``What kind of X`` asks for a kind, not for X, and
    ``What is the X ...`` only for X when X is followed by a preposition (``What is the
    native language of ...``, not ``What is the country where ... named after?``)."""
    words = _WORD.findall(question.lower())
    for i, w in enumerate(words):
        wh = " ".join(words[i:i + 2]) if w == "how" and words[i + 1:i + 2] in (["many"], ["much"]) else w
        if wh not in ("what", "which", "when", "where", "how many", "how much"):
            if _WH.fullmatch(w):
                return set()  # "who", "why", "how": no noun names what is asked
            continue
        rest = words[i + len(wh.split()):]
        if i > 1 and len(rest) > 4:
            continue  # a relative clause's wh-word, neither opening the question nor ending it
        copula = wh in ("what", "which") and bool(rest) and rest[0] in _COPULA
        rest = rest[1:] if copula else rest
        while rest and rest[0] in _DETERMINERS:
            rest = rest[1:]
        if rest and rest[0] in _KIND:
            return set()
        noun: list[str] = []
        for r in rest[:3]:
            if r in _ENDS_NOUN or _WH.fullmatch(r):
                break
            noun.append(r)
        follows = rest[len(noun)] if len(rest) > len(noun) else ""
        if copula and follows and follows not in _AFTER_NOUN:
            return set()
        if wh not in ("what", "which", "how many", "how much"):
            noun = []
        return {_stem(x) for x in noun} | _ASKED_BY.get(wh, set())
    return set()


def asked_unknown(question: str, unknowns: Sequence[str]) -> str | None:
    """The unknown whose name says what the question asks for (``_asked_words``), when
    exactly one does: ``In what film ...`` asks for ``?film``, ``When was ... born`` for
    ``?year``."""
    wanted = _asked_words(question)
    named = [u for u in unknowns if wanted & {_stem(w) for w in re.split(r"[_\W]+", u.lstrip("?").lower()) if w}]
    return named[0] if len(named) == 1 else None


def prune(triples: list[QueryTriple]) -> list[QueryTriple]:
    """Drop the triples whose unknowns never reach ?answer through shared placeholders: they
    bind nothing the answer depends on, and running them only spends calls and adds facts
    that can mislead. Givens (no unknown) stay as stated context. A triple that relates an
    unknown to itself (``[?answer, is, ?answer]``) says nothing and is dropped first, and one
    that asks past the answer (``_beyond_answer``) last, unless it is the only one holding
    ?answer. Without ?answer, unchanged."""
    triples = [t for t in triples if not (is_placeholder(t.subject) and canonical(t.subject) == canonical(t.object))]
    if not any(ANSWER_PLACEHOLDER in t.placeholders for t in triples):
        return triples
    reached = {ANSWER_PLACEHOLDER}
    grew = True
    while grew:
        grew = False
        for t in triples:
            names = set(t.placeholders)
            if names & reached and not names <= reached:
                reached |= names
                grew = True
    linked = [t for t in triples if not t.placeholders or set(t.placeholders) & reached]
    kept = [t for t in linked if not _beyond_answer(t, linked)]
    return kept if any(ANSWER_PLACEHOLDER in t.placeholders for t in kept) else linked


def _beyond_answer(triple: QueryTriple, triples: Sequence[QueryTriple]) -> bool:
    """Whether ``triple`` asks for something past the answer: it holds ?answer and an unknown no
    other triple mentions (``[?answer, during, ?era]`` once ?answer is the language asked for)."""
    names = triple.placeholders
    others = {p for t in triples if t is not triple for p in t.placeholders}
    return ANSWER_PLACEHOLDER in names and any(p != ANSWER_PLACEHOLDER and p not in others for p in names)


def _connected(names: list[set[str]]) -> bool:
    """Whether the triples form one component through shared placeholders, ?answer included."""
    reached = {ANSWER_PLACEHOLDER}
    todo = [n for n in names if n]
    if len(todo) < len(names):
        return False  # a triple with no unknown links to nothing
    grew = True
    while grew:
        grew = False
        for n in list(todo):
            if n & reached:
                reached |= n
                todo.remove(n)
                grew = True
    return not todo
