"""A question being answered for an HTTP client: its events as they come, its answer, and a
stop switch that ends the work at the engine's next step when the client goes away."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from t2rag.errors import T2RAGError
from t2rag.query.events import QueryEvent
from t2rag.result import Answer


class Cancelled(T2RAGError):
    """The client stopped waiting: the question is abandoned between two steps."""


def stop_switch(stopped: threading.Event) -> Any:
    """An event sink that passes nothing on and, once ``stopped`` is set, raises ``Cancelled``
    in the engine's thread at its next step."""
    def on_event(_: QueryEvent) -> None:
        if stopped.is_set():
            raise Cancelled("the client stopped waiting")
    return on_event


@dataclass
class Running:
    queue: asyncio.Queue[QueryEvent | None]
    task: asyncio.Future[Any] = field(init=False)
    stopped: threading.Event = field(default_factory=threading.Event)

    def sink(self, loop: asyncio.AbstractEventLoop) -> Any:
        """The engine's event sink: passes each event to the queue, or -- once stopped --
        raises ``Cancelled`` in the engine's thread, which frees the slot before the next LLM call."""
        check = stop_switch(self.stopped)

        def on_event(event: QueryEvent) -> None:
            check(event)
            loop.call_soon_threadsafe(self.queue.put_nowait, event)
        return on_event

    async def events(self) -> AsyncIterator[QueryEvent]:
        """Each event as it happens; a client that leaves mid-stream stops the work."""
        try:
            while (event := await self.queue.get()) is not None:
                yield event
        finally:
            if not self.task.done():
                self.stopped.set()

    async def finished(self) -> Answer:
        async for _ in self.events():
            pass
        return self.task.result()  # type: ignore[no-any-return]
