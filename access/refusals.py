"""A refused request: the reason, the words for the caller, and the status each transport answers.

HTTP answers 401 (no, or a bad, credential: with a challenge), 403 (whitelist, scope) or 429 (rate
limits) before the MCP server sees the request; gRPC answers UNAUTHENTICATED, PERMISSION_DENIED or
RESOURCE_EXHAUSTED. What is answered inside the protocol on every transport: an unknown tool (a
JSON-RPC invalid-params error; gRPC `success=false`, "Tool 'x' not found"), a uid that does not
exist for this caller and a library it may read but not change (a tool error, worded exactly as for
a uid that does not exist at all).
"""

from __future__ import annotations

from dataclasses import dataclass

from access.credentials import AuthFailure

READ, WRITE = "read", "write"
# A name or uid quoted back is cut to this many characters.
QUOTE_CHARS = 200

_MESSAGES = {
    AuthFailure.MISSING: "this tool call needs a bearer token (Authorization: Bearer mnem_…)",
    AuthFailure.INVALID: "the bearer token is not valid",
    AuthFailure.EXPIRED: "the bearer token has expired",
    AuthFailure.REVOKED: "the bearer token has been revoked",
    AuthFailure.FORBIDDEN_TOOL: "this token may not call the tool {tool!r}",
    AuthFailure.INSUFFICIENT_SCOPE: "this token lacks the scope the tool {tool!r} needs",
    AuthFailure.RATE_LIMITED: "this token is over its rate limit; retry later",
    AuthFailure.TOOL_RATE_LIMITED: (
        "this caller is over its per-minute limit for the tool {tool!r}; retry later"
    ),
    AuthFailure.CHANGES_RATE_LIMITED: "you are over your per-minute limit of changes here; retry later",
    AuthFailure.THROTTLED: "too many failed authentications from this address; retry later",
    AuthFailure.UNKNOWN_TOOL: "Unknown tool: {tool}",
}

_HTTP = {
    AuthFailure.MISSING: 401,
    AuthFailure.INVALID: 401,
    AuthFailure.EXPIRED: 401,
    AuthFailure.REVOKED: 401,
    AuthFailure.FORBIDDEN_TOOL: 403,
    AuthFailure.INSUFFICIENT_SCOPE: 403,
    AuthFailure.RATE_LIMITED: 429,
    AuthFailure.TOOL_RATE_LIMITED: 429,
    AuthFailure.CHANGES_RATE_LIMITED: 429,
    AuthFailure.THROTTLED: 429,
}
_GRPC = {401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED"}


def clip(text: str, limit: int = QUOTE_CHARS) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


@dataclass(frozen=True)
class Refusal:
    failure: AuthFailure
    # The tool refused, when one was.
    tool: str = ""
    # Seconds to wait, when rate limited.
    retry_after: int | None = None
    # The scope the refused tool needs.
    scope: str = READ
    # The words, when they name a library or uid (not found, not an editor).
    detail: str = ""

    @property
    def message(self) -> str:
        if self.detail:
            return self.detail
        if self.failure == AuthFailure.INSUFFICIENT_SCOPE and not self.tool:
            return "this token may not read library content through this method"
        return _MESSAGES[self.failure].format(
            tool=clip(self.tool) if self.failure == AuthFailure.UNKNOWN_TOOL else self.tool
        )

    @property
    def http_status(self) -> int | None:
        """401, 403 or 429; None: answered inside the protocol (as a tool error or invalid params)."""
        return _HTTP.get(self.failure)

    @property
    def grpc_status(self) -> str | None:
        """The name of a grpc.StatusCode; None: answered as `success=false`."""
        status = self.http_status
        return None if status is None else _GRPC[status]

    @property
    def unknown_tool(self) -> bool:
        return self.failure == AuthFailure.UNKNOWN_TOOL
