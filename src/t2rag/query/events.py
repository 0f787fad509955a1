"""Query events: what the engine reports while it works, for progress lines, streams and viewers.

One question yields, in order: ``decomposition``; per round ``round`` (what is searched),
``evidence`` (what came back) and ``bindings`` (what the model bound, and what was dropped
and why); then ``answer``. Every event serializes to a flat JSON object with its ``kind``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["decomposition", "round", "evidence", "bindings", "answer"]


@dataclass(frozen=True)
class QueryEvent:
    kind: Kind
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.data}


EventSink = Callable[[QueryEvent], None]


def _triple(t: list[str]) -> str:
    return "(" + " | ".join(t) + ")"


def describe(event: QueryEvent) -> str:
    """One short line for a terminal."""
    d = event.data
    if event.kind == "decomposition":
        note = " (the question itself: no usable triples)" if d.get("fallback") else ""
        return f"decomposed into {len(d['triples'])} triple(s){note}: " + "; ".join(map(_triple, d["triples"]))
    if event.kind == "round":
        what = "; ".join(map(_triple, d["searched"])) if d["searched"] else "the question"
        return f"round {d['round']}: searching {what}"
    if event.kind == "evidence":
        titles = ", ".join(dict.fromkeys(c["title"] for c in d["chunks"]))
        return f"round {d['round']}: {len(d['propositions'])} facts from {len(d['chunks'])} passages ({titles})"
    if event.kind == "bindings":
        if d.get("mode") == "read":
            return f"round {d['round']}: last hop, read by the answer step (no resolve call)"
        bound = ", ".join(f"{b['placeholder']} = {b['value']}" for b in d["bindings"]) or "nothing bound"
        dropped = f"; {len(d['dropped'])} dropped" if d["dropped"] else ""
        return f"round {d['round']}: {bound}{dropped}"
    checked = f" (asked again: {d['check']})" if d.get("check") else ""
    return f"answer ({d['termination']}, from {d['answer_path']}): {d['answer']}{checked}"
