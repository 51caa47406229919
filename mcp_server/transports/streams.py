"""Server-sent event streams that end: one that has carried nothing but keep-alive pings (SSE
comment lines, `: ping …`) for an idle bound is closed, and one opened without a credential is
closed after a fixed lifetime, so held-open streams cannot pile up. Clients reconnect when they
need a stream again (streamable HTTP's GET stream is optional; a legacy SSE client opens a new
session)."""

from __future__ import annotations

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# How often the watchdog looks, at most.
CHECK_SECONDS = 5.0


async def bounded(
    app: ASGIApp,
    scope: Scope,
    receive: Receive,
    send: Send,
    *,
    idle_seconds: float,
    lifetime_seconds: float = 0,
) -> None:
    """Run `app` for this request; end its response once it goes `idle_seconds` without data other
    than SSE comments, or once it is `lifetime_seconds` old. 0 means no such bound."""
    if idle_seconds <= 0 and lifetime_seconds <= 0:
        await app(scope, receive, send)
        return
    opened = last_data = anyio.current_time()
    started = ended = False

    async def watched_send(message: Message) -> None:
        nonlocal last_data, started, ended
        if message["type"] == "http.response.start":
            started = True
        elif message["type"] == "http.response.body":
            body = message.get("body", b"")
            if body and not body.lstrip().startswith(b":"):
                last_data = anyio.current_time()
            ended = not message.get("more_body", False)
        await send(message)

    def over(now: float) -> bool:
        idle = idle_seconds > 0 and now - last_data >= idle_seconds
        old = lifetime_seconds > 0 and now - opened >= lifetime_seconds
        return idle or old

    bounds = [bound for bound in (idle_seconds, lifetime_seconds) if bound > 0]
    async with anyio.create_task_group() as group:

        async def watchdog() -> None:
            while True:
                await anyio.sleep(min(CHECK_SECONDS, min(bounds) / 2))
                if over(anyio.current_time()):
                    group.cancel_scope.cancel()
                    return

        group.start_soon(watchdog)
        await app(scope, receive, watched_send)
        group.cancel_scope.cancel()
    if started and not ended:
        await send({"type": "http.response.body", "body": b"", "more_body": False})
