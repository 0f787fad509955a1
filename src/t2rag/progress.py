"""The index-build progress bar on stderr: chunks done, triples, failures, tokens, ETA."""

from __future__ import annotations

import sys
from typing import Any

from t2rag.index.builder import BuildProgress


class BuildBar:
    """A ``progress`` callback for ``TripleIndex.add``. The bar appears on the first update,
    so an error raised before any work prints no empty bar in front of it."""

    def __init__(self, desc: str = "index", *, disable: bool = False, leave: bool = True) -> None:
        self._opts = {"desc": desc, "disable": disable, "leave": leave}
        self._bar: Any = None

    def __call__(self, p: BuildProgress) -> None:
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(unit="chunk", file=sys.stderr, dynamic_ncols=True, **self._opts)
        bar = self._bar
        bar.total = p.chunks_total
        t = p.usage.total()
        bar.set_postfix(triples=p.triples, failed=p.failures, tokens=t.prompt_tokens + t.completion_tokens,
                        refresh=False)
        bar.update(p.chunks_done - bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> BuildBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
