"""Prompt budget: a prompt that carries passages keeps, best first, only as many as fit the model's context."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from t2rag.llm.base import LLM
from t2rag.types import Chunk, Message, Usage

# Characters per token, on the safe side: BPE vocabularies such as Qwen's average about 4 on
# English prose, less on names and numbers. The backends expose no tokenizer to count with
# (llama.cpp's server API has none in xllamacpp), so prompts are sized by characters.
CHARS_PER_TOKEN = 3.0
MESSAGE_OVERHEAD = 8  # role markers and separators of the chat template, per message
MIN_CUT_CHARS = 200  # a passage cut shorter than this is not worth reading


def context_tokens(llm: LLM) -> int | None:
    """The backend's context window in tokens, or None when it does not say (no trimming)."""
    n = getattr(llm, "context_tokens", None)
    return n if isinstance(n, int) and n > 0 else None


def estimate_tokens(messages: Sequence[Message]) -> int:
    return sum(int(len(m["content"]) / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD for m in messages)


def fit_passages(
    llm: LLM,
    render: Callable[[Sequence[Chunk]], list[Message]],
    chunks: Sequence[Chunk],
    *,
    max_tokens: int,
    stage: str,
    usage: Usage | None = None,
) -> tuple[list[Message], tuple[Chunk, ...]]:
    """``render(kept)`` for the longest prefix of ``chunks`` whose prompt, plus ``max_tokens``
    for the reply, fits the context; when not even the first passage fits, the first one cut
    to the room left. Passages left out are counted in ``usage`` under ``stage``."""
    kept = tuple(chunks)
    limit = context_tokens(llm)
    if limit is None or not kept:
        return render(kept), kept
    room = limit - max_tokens
    while kept and estimate_tokens(render(kept)) > room:
        kept = kept[:-1]
    cut = 0
    if not kept:
        spare = int((room - estimate_tokens(render(()))) * CHARS_PER_TOKEN) - len(chunks[0].title) - 1
        if spare >= MIN_CUT_CHARS:
            kept, cut = (dataclasses.replace(chunks[0], text=chunks[0].text[:spare]),), 1
    left_out = len(chunks) - len(kept) + cut
    if usage is not None and left_out:
        usage.note_trimmed(stage, left_out)
    return render(kept), kept
