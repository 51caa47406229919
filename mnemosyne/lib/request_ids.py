"""A request id on every log line a request causes, and on its response.

The id is the request's X-Request-ID when it sends a sensible one (what a proxy or a client put
there, so logs can be joined across services), else a new one. It lives in a context variable,
which worker threads started with anyio (blocking.run) inherit, so the log lines of the ORM, the
search legs' caller and the tool-call path carry it too. `RequestIdFilter` puts it on each log
record as `request_id` ("-" outside a request).
"""

from __future__ import annotations

import contextvars
import logging
import re
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

HEADER = b"x-request-id"
_SENSIBLE = re.compile(r"[A-Za-z0-9._:\-]{1,128}")

current: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


class RequestIdMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sent = next((value for key, value in scope["headers"] if key == HEADER), b"").decode("latin-1")
        request_id = sent if _SENSIBLE.fullmatch(sent) else uuid.uuid4().hex
        token = current.set(request_id)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != HEADER]
                message = {**message, "headers": [*headers, (HEADER, request_id.encode("latin-1"))]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            current.reset(token)


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = current.get()
        return True
