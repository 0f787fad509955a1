"""Extraction shared among builds: chunks leased a batch at a time, a bounded number in flight."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from t2rag.index.store import Store
from t2rag.types import Chunk, OpenIERecord

# Several builds on one PostgreSQL index lease the chunks they extract (``Store.claim``): a lease
# outlives a killed worker by this long, and a worker waiting on others' chunks looks again this often.
LEASE_S = float(os.environ.get("T2RAG_LEASE_S", "300"))
LEASE_POLL_S = 2.0


def extract_leased(store: Store, todo: list[Chunk], extract: Callable[[Chunk], OpenIERecord], *, worker: str,
                   workers: int) -> Iterator[OpenIERecord]:
    """Extract ``todo`` a few chunks at a time, each batch leased first (``Store.claim``), so
    several builds writing to one PostgreSQL index share the work: a chunk another worker
    holds is left to it, and looked at again once every claimable chunk is done -- finished
    by then, or free again because that worker died and its lease expired. ``workers`` chunks
    are extracted at once; a lease covers one chunk's time per slot."""
    batch = workers  # leased just before extraction
    store.release_dead(socket.gethostname())
    while todo:
        skipped: list[Chunk] = []
        for i in range(0, len(todo), batch):
            part = todo[i : i + batch]
            mine = store.claim([c.id for c in part], worker, LEASE_S)
            skipped += [c for c in part if c.id not in mine]
            yield from run_bounded(extract, [c for c in part if c.id in mine], workers)
        if not skipped:
            return
        unextracted = {c.id for c in store.chunks_without_openie()}
        todo = [c for c in skipped if c.id in unextracted]
        if todo:
            time.sleep(LEASE_POLL_S)


def run_bounded(fn: Callable[[Chunk], OpenIERecord], items: list[Chunk], workers: int) -> Iterator[OpenIERecord]:
    """Map ``fn`` over ``items`` with at most ``workers`` in flight, yielding as they finish."""
    if workers <= 1:
        for c in items:
            yield fn(c)
        return
    with ThreadPoolExecutor(workers) as pool:
        it = iter(items)
        running: set[Future[OpenIERecord]] = set()
        for c in it:
            running.add(pool.submit(fn, c))
            if len(running) >= workers:
                break
        while running:
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for f in done:
                yield f.result()
                nxt = next(it, None)
                if nxt is not None:
                    running.add(pool.submit(fn, nxt))
