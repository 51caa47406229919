"""Bearer-token checks at the HTTP layer, so a refused call is a real 401/403.

Listing tools needs no token; every `tools/call` needs a caller (principals.identify: one of our
tokens, a JWT from the configured identity provider, or, with MCP_ANONYMOUS_READ, nobody) that may
call that tool: the tool is in its whitelist (else 403 forbidden_tool), it has the scope the tool
needs (write tools need "write", the rest "read"; else 403 insufficient_scope, or 401 for an
anonymous caller) and it is under its per-minute limit (else 429 with Retry-After; our tokens only).
A 401 points at the protected-resource metadata, as the MCP authorization spec asks. The token is
read from the Authorization header only (never the query string). MCP_REQUIRE_AUTH=false turns the
check off for local development.
"""

from __future__ import annotations

import json
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_server.metrics import AUTH_FAILURES
from mcp_server.principals import identify
from mcp_server.request_body import read_body, replay_body
from mcp_server.services import AuthFailure, take_rate_limit_slot

WELL_KNOWN_PATH = "/.well-known/oauth-protected-resource/mcp"

_MESSAGES = {
    AuthFailure.MISSING: "this tool call needs a bearer token (Authorization: Bearer mnem_…)",
    AuthFailure.INVALID: "the bearer token is not valid",
    AuthFailure.EXPIRED: "the bearer token has expired",
    AuthFailure.REVOKED: "the bearer token has been revoked",
    AuthFailure.FORBIDDEN_TOOL: "this token may not call the tool {tool!r}",
    AuthFailure.INSUFFICIENT_SCOPE: "this token lacks the scope the tool {tool!r} needs",
    AuthFailure.RATE_LIMITED: "this token is over its rate limit; retry later",
}


def required_scope(tool: str) -> str:
    from mcp_server.server import WRITE_TOOLS  # the server imports the tools; keep this module light

    return "write" if tool in WRITE_TOOLS else "read"


def public_base_url(scope: Scope) -> str:
    """The server's external base URL: MCP_PUBLIC_BASE_URL, else the request's scheme and Host."""
    configured: str = getattr(settings, "MCP_PUBLIC_BASE_URL", "")
    if configured:
        return configured.rstrip("/")
    host = Headers(scope=scope).get("host", "localhost")
    return f"{scope.get('scheme', 'http')}://{host}"


def resource_metadata_url(scope: Scope) -> str:
    return public_base_url(scope) + WELL_KNOWN_PATH


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


def _check(raw: str | None, tools: list[str]) -> tuple[AuthFailure | None, str, int | None]:
    """Why the call is refused (None: it is not), the tool refused (if any) and, when rate limited,
    seconds to wait."""
    close_old_connections()
    try:
        found = identify(raw)
        principal = found.principal
        if principal is None:
            return found.failure, "", None
        for tool in tools:
            if not principal.allows_tool(tool):
                return AuthFailure.FORBIDDEN_TOOL, tool, None
            if not principal.has_scope(required_scope(tool)):
                # Anonymous callers may only read: for anything else, the answer is "bring a token".
                failure = AuthFailure.MISSING if principal.is_anonymous else AuthFailure.INSUFFICIENT_SCOPE
                return failure, tool, None
        if principal.token is not None:
            for _ in tools:
                wait = take_rate_limit_slot(principal.token)
                if wait is not None:
                    return AuthFailure.RATE_LIMITED, "", wait
        return None, "", None
    finally:
        close_old_connections()


def refusal(
    failure: AuthFailure, tool: str = "", *, metadata_url: str = "", retry_after: int | None = None
) -> JSONResponse:
    message = _MESSAGES[failure].format(tool=tool)
    if failure == AuthFailure.INSUFFICIENT_SCOPE and not tool:
        message = "this token may not read library content through this method"
    headers: dict[str, str] = {}
    if failure == AuthFailure.RATE_LIMITED:
        status, error = 429, "rate_limited"
        headers["Retry-After"] = str(retry_after or 60)
    elif failure in (AuthFailure.FORBIDDEN_TOOL, AuthFailure.INSUFFICIENT_SCOPE):
        status, error = 403, "insufficient_scope"
    else:
        status, error = 401, "invalid_token"
    if status != 429:
        challenge = 'Bearer realm="mnemosyne"'
        if metadata_url:
            challenge += f', resource_metadata="{metadata_url}"'
        if failure != AuthFailure.MISSING:
            challenge += f', error="{error}", error_description="{message}"'
        if status == 403 and tool:
            challenge += f', scope="{required_scope(tool)}"'
        headers["WWW-Authenticate"] = challenge
    return JSONResponse({"error": error, "error_description": message}, status_code=status, headers=headers)


def protected_resource_metadata(scope: Scope) -> dict[str, Any]:
    """RFC 9728 metadata for /mcp: bearer tokens in the header only, scopes read and write."""
    base = public_base_url(scope)
    servers: list[str] = list(getattr(settings, "MCP_AUTHORIZATION_SERVERS", []) or [])
    return {
        "resource": f"{base}/mcp",
        "authorization_servers": servers,
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["read", "write"],
        "resource_name": "Mnemosyne",
    }


class ToolCallAuthMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not settings.MCP_REQUIRE_AUTH:
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        tools = called_tools(body)
        if tools:
            failure, tool, wait = await sync_to_async(_check, thread_sensitive=False)(
                bearer_token(Headers(scope=scope)), tools
            )
            if failure is not None:
                AUTH_FAILURES.labels(reason=failure.value).inc()
                response = refusal(failure, tool, metadata_url=resource_metadata_url(scope), retry_after=wait)
                await response(scope, receive, send)
                return
        await self.app(scope, replay_body(body, receive), send)
