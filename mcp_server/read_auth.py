"""Bearer-token checks for the requests that read the libraries without calling a tool.

ToolCallAuthMiddleware guards tools/call. Resources (chunk text, item outlines, library names),
completions (names and uids) and prompts (which resolve library names) read the same data, so they
need a caller too (principals.identify: a token, a JWT, or anonymous when MCP_ANONYMOUS_READ is on).
Server metadata stays public: initialize, ping, tools/list, prompts/list, resources/templates/list.
Any caller with the "read" scope may read (else 403); a token's tool whitelist does not apply here.
What the caller then sees is cut to its libraries by server.library_boundary_middleware.
MCP_REQUIRE_AUTH=false turns the check off, as for tools.
"""

from __future__ import annotations

import json

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_server.auth import bearer_token, refusal, resource_metadata_url
from mcp_server.metrics import AUTH_FAILURES
from mcp_server.principals import identify
from mcp_server.request_body import read_body, replay_body
from mcp_server.services import AuthFailure

READING_METHODS = frozenset({"resources/list", "resources/read", "completion/complete", "prompts/get"})


def reads_libraries(body: bytes) -> bool:
    """Whether a JSON-RPC message (or batch) asks for library content; False when unparseable."""
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return False  # the transport answers malformed JSON with the spec's parse error
    messages = payload if isinstance(payload, list) else [payload]
    return any(isinstance(m, dict) and m.get("method") in READING_METHODS for m in messages)


def _check(raw: str | None) -> AuthFailure | None:
    close_old_connections()
    try:
        found = identify(raw)
        if found.principal is not None and not found.principal.has_scope("read"):
            return AuthFailure.INSUFFICIENT_SCOPE
        return found.failure
    finally:
        close_old_connections()


class LibraryReadAuthMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not settings.MCP_REQUIRE_AUTH:
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        if reads_libraries(body):
            failure = await sync_to_async(_check, thread_sensitive=False)(bearer_token(Headers(scope=scope)))
            if failure is not None:
                AUTH_FAILURES.labels(reason=failure.value).inc()
                await refusal(failure, metadata_url=resource_metadata_url(scope))(scope, receive, send)
                return
        await self.app(scope, replay_body(body, receive), send)
