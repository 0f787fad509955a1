"""The one parse point where LLM text becomes typed values: schema, tolerant parse, one re-ask."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from t2rag.errors import ParseError
from t2rag.jsontext import loads
from t2rag.llm.base import DEFAULT_MAX_TOKENS, LLM
from t2rag.types import Completion, Message, Usage

T = TypeVar("T")

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def _structure(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """Positions of JSON structure outside strings: each bracket, and each '"' that ends a
    string. Strings count only inside brackets, so a stray quote in prose swallows nothing."""
    depth = 0
    in_str = escape = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
                yield i, ch
        elif ch == '"' and depth > 0:
            in_str = True
        elif ch in "{[":
            depth += 1
            yield i, ch
        elif ch in "}]" and depth > 0:
            depth -= 1
            yield i, ch


def _balanced_spans(text: str) -> list[str]:
    """Every top-level {...} or [...] span."""
    spans: list[str] = []
    depth = 0
    start = -1
    for i, ch in _structure(text):
        if ch in "{[":
            if depth == 0:
                start = i
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    return spans


def salvage_truncated(text: str) -> Any:
    """The complete part of JSON cut off mid-way (a reply that ran out of tokens or looped).

    Keeps every finished list, object and list string inside the open containers, closes the
    open ones, and parses the longest such prefix: ``{"triples": [["a","b","c"], ["d", "e``
    becomes ``{"triples": [["a","b","c"], ["d"]]}`` (the caller's shape check drops the short
    triple). Raises ParseError when nothing complete remains."""
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    cuts: list[tuple[int, str]] = []  # (end of a finished value, closers for what is still open)
    stack: list[str] = []
    for i, ch in _structure(text, start) if start >= 0 else ():
        if ch == '"':
            if stack and stack[-1] == "[":  # a finished string element (object keys are not cut points)
                cuts.append((i + 1, "".join(reversed(stack)).translate(_CLOSERS)))
        elif ch in "{[":
            stack.append(ch)
        else:
            stack.pop()
            if not stack:
                break
            cuts.append((i + 1, "".join(reversed(stack)).translate(_CLOSERS)))
    for end, closers in reversed(cuts):
        try:
            return json.loads(text[start:end] + closers)
        except ValueError:
            continue
    raise ParseError(f"no complete JSON value in {' '.join(text.split())[:80]!r}", raw=text)


_CLOSERS = str.maketrans("[{", "]}")


def scalar_text(value: Any) -> str | None:
    """A JSON scalar as one line of text, or None when it is no value: null, true/false, a
    non-finite number (NaN parses from model output), a container."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if not isinstance(value, (str, int, float)):
        return None
    return " ".join(str(value).split())


def clean_text(value: Any) -> str:
    """A model's content as text: a list of text parts joined, a number as its digits, lone
    surrogates (which no database or file accepts as UTF-8) replaced."""
    if isinstance(value, list):
        value = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in value)
    elif value is None:
        value = ""
    elif not isinstance(value, str):
        value = str(value)
    return value.encode("utf-8", "replace").decode("utf-8")


def parse_json_lenient(text: str) -> Any:
    """Parse JSON from model text: plain, fenced, embedded in prose, or with trailing commas.

    Never evaluates anything. Raises ParseError (carrying the raw text) when nothing parses.
    """
    candidates = [text.strip()]
    candidates += [m.strip() for m in _FENCE.findall(text)]
    candidates += _balanced_spans(text)
    for cand in candidates:
        for variant in (cand, _TRAILING_COMMA.sub(r"\1", cand)):
            try:
                return loads(variant)
            except ValueError:
                continue
    snippet = " ".join(text.split())[:80]
    raise ParseError(f"model output is not JSON: {snippet!r}", raw=text)


def ask_json(
    llm: LLM,
    messages: list[Message],
    schema: dict[str, Any],
    convert: Callable[[Any], T],
    *,
    stage: str,
    usage: Usage | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    reask: bool = True,
    salvage: bool = False,
) -> tuple[T, list[Completion]]:
    """Ask for JSON under ``schema`` and turn it into a value with ``convert``.

    ``convert`` raises ParseError (or ValueError/KeyError/TypeError) on a wrong shape. On a
    failure the model is asked once more, shown its output and the error; a second failure
    raises ParseError with the last raw text. With ``salvage``, a reply cut off mid-way keeps
    its finished items (see ``salvage_truncated``) instead of being re-asked: for list-shaped
    answers such as extracted triples, where a model that loops or rambles until the token
    limit has usually said what it had to first. Returns the value and the completions made.
    """
    completions: list[Completion] = []
    attempt = list(messages)
    for _ in range(2 if reask else 1):
        c = llm.complete(attempt, schema=schema, max_tokens=max_tokens, temperature=0.0)
        completions.append(c)
        if usage is not None:
            usage.record(stage, c)
        try:
            return _value(c, convert, salvage), completions
        except ParseError as e:
            error = e
        attempt = [
            *messages,
            {"role": "assistant", "content": c.text},
            {"role": "user", "content": f"That reply could not be used ({error}). "
                                        "Reply again with only the JSON object, following the requested format."},
        ]
    raise error


def _value(c: Completion, convert: Callable[[Any], T], salvage: bool) -> T:
    """A reply's value by ``convert``, or a ParseError (with the raw text) saying why it has none."""
    try:
        return convert(c.parsed if c.parsed is not None else parse_json_lenient(c.text))
    except ParseError as e:
        if salvage:
            try:
                return convert(salvage_truncated(c.text))
            except (ParseError, ValueError, KeyError, TypeError, AttributeError):
                pass
        raise ParseError(str(e), raw=c.text) from None
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ParseError(f"model output has the wrong shape: {e}", raw=c.text) from None
