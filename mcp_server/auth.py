"""Bearer-token checks at the HTTP layer, so a refused call is a real 401/403.

Listing tools needs no token; every `tools/call` needs a valid one that may
call that tool. The token is read from the Authorization header only (never
the query string). MCP_REQUIRE_AUTH=false turns the check off for local
development.
"""

from __future__ import annotations

import json
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_server.metrics import AUTH_FAILURES
from mcp_server.services import AuthFailure, AuthResult, authenticate

_MESSAGES = {
    AuthFailure.MISSING: "this tool call needs a bearer token (Authorization: Bearer mnem_…)",
    AuthFailure.INVALID: "the bearer token is not valid",
    AuthFailure.EXPIRED: "the bearer token has expired",
    AuthFailure.REVOKED: "the bearer token has been revoked",
    AuthFailure.FORBIDDEN_TOOL: "this token may not call the tool {tool!r}",
}


def called_tools(body: bytes) -> list[str]:
    """Names of the tools a JSON-RPC message (or batch) calls; [] when none or unparseable."""
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return []  # the transport answers malformed JSON with the spec's parse error
    messages = payload if isinstance(payload, list) else [payload]
    names = []
    for message in messages:
        if isinstance(message, dict) and message.get("method") == "tools/call":
            params = message.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            names.append(name if isinstance(name, str) else "")
    return names


def bearer_token(headers: Headers) -> str | None:
    value = headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def _check(raw: str | None, tools: list[str]) -> tuple[AuthResult, str]:
    close_old_connections()
    try:
        result = authenticate(raw)
        if not result.ok:
            return result, ""
        for tool in tools:
            assert result.token is not None
            if not result.token.allows_tool(tool):
                return AuthResult(result.token, AuthFailure.FORBIDDEN_TOOL), tool
        return result, ""
    finally:
        close_old_connections()


def refusal(failure: AuthFailure, tool: str = "") -> JSONResponse:
    message = _MESSAGES[failure].format(tool=tool)
    if failure == AuthFailure.FORBIDDEN_TOOL:
        status, error = 403, "insufficient_scope"
    else:
        status, error = 401, "invalid_token"
    challenge = 'Bearer realm="mnemosyne"'
    if failure != AuthFailure.MISSING:
        challenge += f', error="{error}", error_description="{message}"'
    return JSONResponse(
        {"error": error, "error_description": message},
        status_code=status,
        headers={"WWW-Authenticate": challenge},
    )


class ToolCallAuthMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not settings.MCP_REQUIRE_AUTH:
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        tools = called_tools(body)
        if tools:
            result, tool = await sync_to_async(_check, thread_sensitive=False)(
                bearer_token(Headers(scope=scope)), tools
            )
            if result.failure is not None:
                AUTH_FAILURES.labels(reason=result.failure.value).inc()
                await refusal(result.failure, tool)(scope, receive, send)
                return
        await self.app(scope, _replay(body, receive), send)


async def _read_body(receive: Receive) -> bytes:
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


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            message: dict[str, Any] = {"type": "http.request", "body": body, "more_body": False}
            return message
        return await receive()

    return replay
