"""HTTP answers to a refused caller, as the MCP authorization spec asks: 401 with a WWW-Authenticate
challenge pointing at the protected-resource metadata (RFC 9728), 403 insufficient_scope, 429 with
Retry-After; and that metadata document itself."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import Scope

from access import oauth_bearer
from access.credentials import AuthFailure
from access.refusals import Refusal

WELL_KNOWN_PATH = "/.well-known/oauth-protected-resource/mcp"


def public_base_url(scope: Scope) -> str:
    """The server's external base URL: MCP_PUBLIC_BASE_URL, else the request's scheme and Host."""
    configured: str = settings.MCP_PUBLIC_BASE_URL
    if configured:
        return configured.rstrip("/")
    host = Headers(scope=scope).get("host", "localhost")
    return f"{scope.get('scheme', 'http')}://{host}"


def resource_metadata_url(scope: Scope) -> str:
    return public_base_url(scope) + WELL_KNOWN_PATH


def protected_resource_metadata(scope: Scope) -> dict[str, Any]:
    """RFC 9728 metadata for /mcp: bearer tokens in the header only, scopes read and write."""
    base = public_base_url(scope)
    resource, servers = f"{base}/mcp", list(settings.MCP_AUTHORIZATION_SERVERS)
    if oauth_bearer.enabled():
        # Tokens of the built-in server are bound to its resource; it is the first to ask.
        resource, servers = oauth_bearer.resource(), [oauth_bearer.issuer(), *servers]
    return {
        "resource": resource,
        "authorization_servers": servers,
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["read", "write"],
        "resource_name": "Mnemosyne",
    }


def refusal_response(refusal: Refusal, *, metadata_url: str = "") -> JSONResponse:
    message = refusal.message
    headers: dict[str, str] = {}
    if refusal.failure in (AuthFailure.RATE_LIMITED, AuthFailure.TOOL_RATE_LIMITED, AuthFailure.THROTTLED):
        status, error = 429, "rate_limited"
        headers["Retry-After"] = str(refusal.retry_after or 60)
    elif refusal.failure in (AuthFailure.FORBIDDEN_TOOL, AuthFailure.INSUFFICIENT_SCOPE):
        status, error = 403, "insufficient_scope"
    else:
        status, error = 401, "invalid_token"
    if status != 429:
        challenge = 'Bearer realm="mnemosyne"'
        if metadata_url:
            challenge += f', resource_metadata="{metadata_url}"'
        if refusal.failure != AuthFailure.MISSING:
            challenge += f', error="{error}", error_description="{message}"'
        if status == 403 and refusal.tool:
            challenge += f', scope="{refusal.scope}"'
        headers["WWW-Authenticate"] = challenge
    return JSONResponse({"error": error, "error_description": message}, status_code=status, headers=headers)
