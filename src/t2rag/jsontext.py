"""JSON text as files and replies hold it: strict parsing that fails only with JSONDecodeError,
and JSONL split at newlines only."""

from __future__ import annotations

import json
from typing import Any


def loads(text: str) -> Any:
    """``json.loads`` that fails with JSONDecodeError only: nesting too deep for the parser
    (thousands of ``[``) is malformed input like any other, not a crash."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None
    except json.JSONDecodeError:
        raise
    except ValueError as e:  # an integer of more than 4,300 digits: Python refuses to convert it
        raise json.JSONDecodeError(f"a value is out of range ({str(e)[:60]})", text, 0) from None


def jsonl_lines(text: str) -> list[str]:
    """The lines of a JSONL text: split at newlines only. ``str.splitlines`` also splits at
    U+2028, U+0085 and form feeds, which JSON strings may hold raw (``ensure_ascii=False``)."""
    return [line.removesuffix("\r") for line in text.split("\n")]
