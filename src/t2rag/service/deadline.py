"""An HTTP/1.1 protocol for uvicorn with a read deadline: a client must send each whole request
(headers and body) within ``read_timeout`` seconds of starting it, or the connection is closed.

Without it, connections that send half a header and stop are held forever; on an open
binding anyone can exhaust the server that way before any token is checked.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


class ReadDeadlineH11(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request is not whole in time."""

    read_timeout: float = 30.0  # set per server by ``with_read_timeout``

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._deadline: asyncio.TimerHandle | None = None
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
            self._disarm()  # the request is whole: the answer may take as long as it takes
        elif self._deadline is None:
            self._arm()  # the next request on a kept-alive connection has started

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._deadline = self.loop.call_later(self.read_timeout, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if self.conn.their_state not in (h11.DONE, h11.MUST_CLOSE) and not self.transport.is_closing():
            self.transport.close()


def with_read_timeout(seconds: float) -> Any:
    """The protocol class for uvicorn's ``http=`` option with this read deadline."""
    return type("ReadDeadline", (ReadDeadlineH11,), {"read_timeout": seconds})
