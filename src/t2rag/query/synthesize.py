"""Synthesis: one LLM call writes the short final answer from the resolved triples (and passages),
or -- when there is no plan to trust -- from the passages alone, as chunk RAG reads them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from t2rag.errors import ParseError
from t2rag.llm.base import DEFAULT_MAX_TOKENS, LLM
from t2rag.llm.budget import fit_passages
from t2rag.llm.structured import ask_json, scalar_text
from t2rag.prompts import load, numbered_passages
from t2rag.query.config import AnswerConfig
from t2rag.query.formatting import format_passages, format_triples
from t2rag.query.state import QueryState
from t2rag.types import Chunk, Message, Usage

PROMPT = "answer"
READ_PROMPT = "read"
NOTES_PROMPT = "answer_notes"
T = TypeVar("T")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "answer": {"type": "string"}},
    "required": ["reasoning", "answer"],
}


@dataclass(frozen=True)
class Synthesis:
    answer: str
    error: str | None = None
    path: str = "facts"  # "facts" (resolved triples only), "facts+passages" or "passages"
    chunks: tuple[Chunk, ...] = ()  # the passages the answer read
    reasoning: str = ""


def render(
    question: str, state: QueryState, *, natural: bool, chunks: Sequence[Chunk], facts: bool = True,
    notes: bool = False, note: str = "",
) -> list[Message]:
    """After natural completion only the resolved triples; after a stop, what is left too.
    With ``notes`` the passages come first and the facts are notes to check against them;
    ``note`` (the answer check's finding about an earlier reply) comes last."""
    extra = ""
    pending = state.searchable + state.fuzzy
    if pending and not natural:
        extra += "\nStill unresolved:\n" + format_triples(pending) + "\n"
    if note:
        extra += "\n" + note + "\n"
    shown = format_triples(state.resolved) if facts else "(none)"
    if notes:
        return load(NOTES_PROMPT).render(question=question.strip(), facts=shown, extra=extra,
                                         passages=numbered_passages(chunks) if chunks else "(none)")
    if chunks:
        extra += "\nPassages:\n" + format_passages(chunks) + "\n"
    return load(PROMPT).render(question=question.strip(), facts=shown, extra=extra)


def _answer(data: Any) -> str:
    value = scalar_text(data.get("answer")) if isinstance(data, dict) else None
    if value is None:
        raise ValueError("expected {'answer': text}")
    return value


def _example_lines(messages: Sequence[Message], answer: str) -> list[str]:
    """The lines of the prompt's instructions that show a worked example naming ``answer``."""
    a = answer.strip().lower()
    return [line for m in messages if m["role"] == "system" for line in m["content"].splitlines()
            if line.startswith("Example") and a in line.lower()]


def echoes_example(answer: str, messages: Sequence[Message]) -> bool:
    """True when ``answer`` is a value of the worked example in the prompt's instructions (its
    answer, or a name in its reasoning) and occurs nowhere in what the model was shown for this
    question: the model copied the example (a 0.5B model answered "1931", the example's year,
    to a third of HotpotQA questions; the 1.5B model answered its designer "Lena Ortiz").
    Answers of two letters or fewer, and yes/no, are never taken for copies."""
    a = answer.strip()
    if len(a) <= 2 or a.lower() in ("yes", "no"):
        return False
    shown = " ".join(m["content"] for m in messages if m["role"] != "system")
    return bool(_example_lines(messages, a)) and a.lower() not in shown.lower()


def ask_answer(llm: LLM, messages: list[Message], convert: Callable[[Any], T], *, stage: str,
               usage: Usage | None, max_tokens: int) -> T:
    """One answer call (a malformed reply raises ParseError, not re-asked). A reply that copies
    the prompt's example answer is asked once more with the example's lines left out (told
    that the value is wrong, a 0.5B model wrote it again); the second reply stands."""
    value, _ = ask_json(llm, messages, SCHEMA, convert, stage=stage, usage=usage, max_tokens=max_tokens,
                        reask=False)
    answer = value[0] if isinstance(value, tuple) else value
    if not isinstance(answer, str) or not echoes_example(answer, messages):
        return value
    copied = set(_example_lines(messages, answer))
    retry = [m if m["role"] != "system" else
             {**m, "content": "\n".join(x for x in m["content"].splitlines() if x not in copied)} for m in messages]
    value, _ = ask_json(llm, retry, SCHEMA, convert, stage=stage, usage=usage, max_tokens=max_tokens, reask=False)
    return value


def one_line(text: str) -> str:
    """Raw model text as an answer: the first non-empty line, without quotes around it."""
    for line in text.splitlines():
        if line.strip():
            return line.strip().strip('"').strip()
    return ""


def synthesize(
    llm: LLM,
    question: str,
    state: QueryState,
    config: AnswerConfig | None = None,
    *,
    natural: bool,
    chunks: Sequence[Chunk] = (),
    note: str = "",
    usage: Usage | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> Synthesis:
    """Write the answer; a reply that is not the expected JSON is used as raw text (no re-ask).
    The passages shown are those of ``chunks`` (best first) that fit the model's context."""
    config = config or AnswerConfig()
    messages, chunks = fit_passages(
        llm, lambda cs: render(question, state, natural=natural, chunks=cs, facts=config.facts,
                               notes=config.facts_as_notes, note=note),
        chunks,
        max_tokens=max_tokens, stage="answer", usage=usage)
    path = "facts+passages" if chunks else "facts"
    try:
        answer = ask_answer(llm, messages, _answer, stage="answer", usage=usage, max_tokens=max_tokens)
    except ParseError as e:
        # Raw prose is an answer; a JSON reply of the wrong shape ({"answer": null}) is none.
        raw = "" if e.raw.lstrip().startswith(("{", "[")) else one_line(e.raw)
        return Synthesis(raw, error=f"answer: {e}", path=path, chunks=tuple(chunks))
    return Synthesis(answer, path=path, chunks=tuple(chunks))


def reading(config: AnswerConfig, k_chunks: int, *, reached: bool) -> int:
    """How many passages the answer reads: ``config.passages`` when the chain reached its answer
    hop (the question's best and each hop's are among them); after a stop short of it, or a
    rejected plan, at least as many as chunk RAG reads (``k_chunks``)."""
    n = config.passages
    return n if reached or not n else max(n, k_chunks)


def answer_chunks(
    config: AnswerConfig, k_chunks: int, question_best: Sequence[Chunk], rounds: Sequence[Sequence[Chunk]], *,
    natural: bool, reached: bool,
) -> tuple[Chunk, ...]:
    """Passages for the answer: none after natural completion (the paper's path) unless
    ``passages_when_complete``; otherwise ``reading`` passages taken in turn from the
    question's own best passages and each round's retrieval, best first (so the answer reads
    the question's best passage and each hop's), the answer hop's first when
    ``config.answer_hop_first`` and the chain reached it; the paper's last-round chunks when
    ``config.passages`` is 0."""
    if not config.passages_after_stop or (natural and not config.passages_when_complete):
        return ()
    if not config.passages:
        return tuple(rounds[-1]) if rounds else ()
    n = reading(config, k_chunks, reached=reached)
    lists = [question_best, *rounds]
    if reached and config.answer_hop_first and rounds:
        lists = [rounds[-1], question_best, *rounds[:-1]]
    picked: dict[str, Chunk] = {}
    for rank in range(max(len(x) for x in lists)):
        for chunks in lists:
            if rank < len(chunks) and len(picked) < n:
                picked.setdefault(chunks[rank].id, chunks[rank])
    return tuple(picked.values())


def read_passages(
    llm: LLM, question: str, chunks: Sequence[Chunk], *, usage: Usage | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS, stage: str = "read",
) -> Synthesis:
    """Answer from ``chunks`` alone with the reading prompt chunk RAG uses; a reply that is not
    the expected JSON is used as the model wrote it. Only the passages (best first) that fit
    the model's context are read."""
    messages, chunks = fit_passages(llm, lambda cs: read_prompt(question, cs), chunks, max_tokens=max_tokens,
                                    stage=stage, usage=usage)
    try:
        answer, reasoning = ask_answer(llm, messages, _with_reasoning, stage=stage, usage=usage,
                                       max_tokens=max_tokens)
    except ParseError as e:
        raw = "" if e.raw.lstrip().startswith(("{", "[")) else e.raw.strip()
        return Synthesis(raw, error=f"{stage}: {e}", path="passages", chunks=tuple(chunks))
    return Synthesis(answer, path="passages", chunks=tuple(chunks), reasoning=reasoning)


def read_prompt(question: str, chunks: Sequence[Chunk]) -> list[Message]:
    passages = numbered_passages(chunks) if chunks else "(no passages: answer from what you know)"
    return load(READ_PROMPT).render(passages=passages, question=question.strip())


def _with_reasoning(data: Any) -> tuple[str, str]:
    if isinstance(data, str):  # a bare JSON string is the answer
        return " ".join(data.split()), ""
    return _answer(data), scalar_text(data.get("reasoning")) or ""
