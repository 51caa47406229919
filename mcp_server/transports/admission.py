"""How many calls a server process works on at once, and what happens to the rest: load shedding.

A call that does work (a tool call, a resource read, a prompt, a completion) takes one of
MCP_MAX_CALLS places before anything else is done for it. When all are taken it queues for one,
behind at most MCP_MAX_WAITING_CALLS others; a call that finds the queue full is answered at once
with HTTP 503, `Retry-After`, and a JSON-RPC error saying the server is busy — before its caller is
decided, so a refused call costs the server almost nothing and its client hears so in milliseconds.
Under an overload the admitted calls answer within what the places and the queue hold (on two
cores about 60 searches a second: 96 calls, about 1.6 s), and the others are told to come back
instead of piling up until their clients give up.

Handshakes, pings and listings are not counted: they are cheap and a client needs them to learn
that it should retry. The places and the queue are per process (each uvicorn worker has its own).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from mcp_server.metrics import CALLS_IN_PROGRESS, CALLS_SHED

# The methods that take a place.
WORK_METHODS = frozenset({"tools/call", "resources/read", "prompts/get", "completion/complete"})
# What a refused call is told to wait before trying again, in seconds.
RETRY_AFTER_SECONDS = 1


class Busy(Exception):
    """Every place taken and the queue full."""

    def __init__(self, places: int, waiting: int) -> None:
        super().__init__(
            f"the server is busy: {places} calls in progress and {waiting} waiting; "
            f"retry after {RETRY_AFTER_SECONDS} s"
        )


class Admission:
    def __init__(self, places: int, waiting: int) -> None:
        self.places = places
        self.waiting = waiting
        self._queued = 0
        # Made on first use, inside the server's event loop.
        self._semaphore: anyio.Semaphore | None = None

    @asynccontextmanager
    async def place(self) -> AsyncIterator[None]:
        """Hold a place for the body of the `async with`; Busy at once if none is free and the
        queue is full."""
        if self.places <= 0:
            yield
            return
        if self._semaphore is None:
            self._semaphore = anyio.Semaphore(self.places)
        semaphore = self._semaphore
        try:
            semaphore.acquire_nowait()
        except anyio.WouldBlock:
            if self._queued >= self.waiting:
                CALLS_SHED.inc()
                raise Busy(self.places, self._queued) from None
            # One event loop: the count needs no lock.
            self._queued += 1
            try:
                await semaphore.acquire()
            finally:
                self._queued -= 1
        CALLS_IN_PROGRESS.inc()
        try:
            yield
        finally:
            CALLS_IN_PROGRESS.dec()
            semaphore.release()
