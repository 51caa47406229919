"""Bearer-token checks for the requests that read the libraries without calling a tool.

ToolCallAuthMiddleware guards tools/call. Resources (chunk text, item outlines, library names),
completions (names and uids) and prompts (which resolve library names) read the same data, so they
need a valid token too. Server metadata stays public: initialize, ping, tools/list, prompts/list,
resources/templates/list. Any valid token with the "read" scope may read; its tool whitelist does
not apply here. A token confined to some libraries is refused these methods (403) for now: they do
not apply the library boundary yet, and refusing keeps the rest invisible.
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
from mcp_server.request_body import read_body, replay_body
from mcp_server.services import AuthFailure, AuthResult, authenticate

READING_METHODS = frozenset({"resources/list", "resources/read", "completion/complete", "prompts/get"})


def reads_libraries(body: bytes) -> bool:
    """Whether a JSON-RPC message (or batch) asks for library content; False when unparseable."""
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return False  # the transport answers malformed JSON with the spec's parse error
    messages = payload if isinstance(payload, list) else [payload]
    return any(isinstance(m, dict) and m.get("method") in READING_METHODS for m in messages)


def _check(raw: str | None) -> AuthResult:
    close_old_connections()
    try:
        result = authenticate(raw)
        token = result.token
        if result.ok and token is not None and (not token.has_scope("read") or token.libraries.exists()):
            return AuthResult(token, AuthFailure.INSUFFICIENT_SCOPE)
        return result
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
            result = await sync_to_async(_check, thread_sensitive=False)(bearer_token(Headers(scope=scope)))
            if result.failure is not None:
                AUTH_FAILURES.labels(reason=result.failure.value).inc()
                await refusal(result.failure, metadata_url=resource_metadata_url(scope))(scope, receive, send)
                return
        await self.app(scope, replay_body(body, receive), send)
