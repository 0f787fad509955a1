"""The answer check: an answer that names a bridge the chain passed through, or is not the kind
of value the question asks for, is a wrong reading the engine can see without the gold answer.

Two rules, both from the question and the plan, never from a dataset:

* **Bridge echo.** In an open question the answer is what the last hop says *about* a bridge
  entity; when the answer is itself the value bound to a bridge placeholder (``?country`` =
  Hong Kong, asked "When was the country ... taken by the British?"), the reader answered an
  earlier hop.
* **Kind.** "When" and "what year" ask for a date, "how many" for a number, "who" for a name:
  a date question answered with a place, or a who-question answered "no", is the wrong kind.

``problem`` returns one sentence saying what is wrong (the engine asks the answer once more
with it), or None.
"""

from __future__ import annotations

import re

from t2rag.query.plan_rules import question_shape
from t2rag.query.state import ANSWER_PLACEHOLDER, QueryState

_DATE_Q = re.compile(r"^(when|(in |during )?(what|which) (year|date|decade|century|month))\b|\bwhat year\b", re.I)
_NUMBER_Q = re.compile(r"^(how (many|much|old|long|far|tall|large|big)|what (percentage|percent|number)\b)", re.I)
_WHO_Q = re.compile(r"^(who|whom)\b", re.I)
_MONTHS = ("january february march april may june july august september october november december "
           "century decade bc ad spring summer autumn fall winter").split()
_NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve twenty thirty forty "
                 "fifty hundred thousand million billion trillion dozen").split()
_WORD = re.compile(r"\w+")


def _norm(text: str) -> str:
    words = _WORD.findall(text.lower())
    return " ".join(w for w in words if w not in ("the", "a", "an"))


def expected_kind(question: str) -> str | None:
    """"date", "number" or "name" when the question's first words ask for one, else None."""
    q = question.strip()
    if _DATE_Q.search(q):
        return "date"
    if _NUMBER_Q.match(q):
        return "number"
    if _WHO_Q.match(q):
        return "name"
    return None


def fits_kind(answer: str, kind: str | None) -> bool:
    """Whether ``answer`` could be a value of ``kind`` (loosely: a date has a digit or a month,
    a number a digit or a number word, a name is not yes/no and not a bare number)."""
    words = set(_WORD.findall(answer.lower()))
    has_digit = any(ch.isdigit() for ch in answer)
    if kind == "date":
        return has_digit or bool(words & set(_MONTHS))
    if kind == "number":
        return has_digit or bool(words & set(_NUMBER_WORDS))
    if kind == "name":
        return bool(words) and answer.strip().lower() not in ("yes", "no") and not answer.strip().isdigit()
    return True


def bridge_echo(answer: str, state: QueryState) -> str | None:
    """The bridge placeholder (other than ``?answer``) whose bound value the answer repeats."""
    a = _norm(answer)
    if not a:
        return None
    for b in state.bindings:
        if b.placeholder != ANSWER_PLACEHOLDER and _norm(b.value) == a:
            return b.placeholder
    return None


def problem(question: str, answer: str, state: QueryState) -> str | None:
    """What is wrong with ``answer`` as a reading of the chain in ``state``, or None."""
    if not answer.strip():
        return None
    kind = expected_kind(question)
    if not fits_kind(answer, kind):
        return f"Check: the question asks for a {kind}, and {answer.strip()!r} is not one."
    if question_shape(question) != "open":
        return None
    bridge = bridge_echo(answer, state)
    if bridge is None:
        return None
    asks = [str(t.current) for t in state.searchable + state.fuzzy + state.resolved
            if ANSWER_PLACEHOLDER in t.origin.placeholders]
    target = f" the question asks for ?answer in {asks[0]}" if asks else " the question asks for something else"
    return (f"Check: {answer.strip()!r} is what the search found for {bridge}, a step on the way;"
            f"{target}.")
