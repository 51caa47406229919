"""Blocking work (the ORM, the model) run off the event loop, with Django's connection hygiene.

Django closes stale or expired connections around each request (request_started/finished); our
handlers run in worker threads outside any Django request, so every piece of blocking work a
transport starts is bracketed here, once, the same way. A database that cannot be reached comes
out as Unavailable, a protocol error saying so (logged once per outage, mnemosyne.lib.outages); the
bracket's closing check drops the broken connection, so the next request reconnects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

import anyio.to_thread
from django.db import InterfaceError, OperationalError, close_old_connections
from mcp.shared.exceptions import MCPError

from mnemosyne.lib import cancellation, outages
from mnemosyne.lib.outages import Dependency

P = ParamSpec("P")
T = TypeVar("T")

# JSON-RPC's range for server errors: a dependency is unavailable (over HTTP: 503, Retry-After).
UNAVAILABLE = -32000


class Unavailable(MCPError):
    """A dependency (the database) cannot be reached; the message says which and to try again."""

    def __init__(self, message: str) -> None:
        super().__init__(UNAVAILABLE, message)


def bracketed(work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run `work` on this thread between two connection checks (stale replaced, expired closed)."""
    close_old_connections()
    try:
        return work(*args, **kwargs)
    except (OperationalError, InterfaceError) as exc:
        raise Unavailable(outages.failed(Dependency.DATABASE, exc)) from None
    finally:
        close_old_connections()


async def run(work: Callable[..., T], *args: object) -> T:
    """Run `work(*args)` in a worker thread, bracketed; context variables (the caller) go with it."""
    return await anyio.to_thread.run_sync(bracketed, work, *args)


async def run_cancellable(work: Callable[..., T], *args: object) -> T:
    """As `run`, for a call its caller may cancel: the thread cannot be stopped, so cancelling the
    awaiting task cancels the work's token (lib/cancellation.py) — the work withdraws from what it
    waits on and ends early — and the cancellation goes on once the thread is done."""
    token = cancellation.Token()
    outcome: list[T] = []
    failure: list[Exception] = []

    async def in_thread() -> None:
        try:
            outcome.append(await anyio.to_thread.run_sync(bracketed, work, *args))
        except Exception as exc:
            failure.append(exc)
        finally:
            waiting.cancel_scope.cancel()

    async with anyio.create_task_group() as waiting:
        with cancellation.of(token):
            waiting.start_soon(in_thread)
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            if not outcome and not failure:
                token.cancel()
            raise
    if failure:
        raise failure[0]
    return outcome[0]
