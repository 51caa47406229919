"""Reading an ASGI request body once and handing it on, for middleware that looks inside it."""

from __future__ import annotations

from typing import Any

from starlette.types import Message, Receive


async def read_body(receive: Receive) -> bytes:
    # The body limit is enforced by the RequestBodyLimitMiddleware outside this one.
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def replay_body(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            message: dict[str, Any] = {"type": "http.request", "body": body, "more_body": False}
            return message
        return await receive()

    return replay
