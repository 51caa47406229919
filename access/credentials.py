"""Reading credentials: our `mnem_` tokens by digest (zulip's lib side; writes are in services.py).

A token's format is checked before any lookup, then one indexed query by digest; `last_used_at` is
written at most every LAST_USED_RESOLUTION, so a busy token costs no write per call.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from access import tokens
from access.models import MCPToken

# last_used_at is written at most this often, so a busy token costs no write per call.
LAST_USED_RESOLUTION = timedelta(minutes=5)


class AuthFailure(enum.StrEnum):
    """The fixed reasons a call can be refused (also the metric's label values)."""

    MISSING = "missing"
    INVALID = "invalid"
    EXPIRED = "expired"
    REVOKED = "revoked"
    FORBIDDEN_TOOL = "forbidden_tool"
    INSUFFICIENT_SCOPE = "insufficient_scope"
    RATE_LIMITED = "rate_limited"
    TOOL_RATE_LIMITED = "tool_rate_limited"
    CHANGES_RATE_LIMITED = "changes_rate_limited"
    THROTTLED = "throttled"
    APPROVAL_PENDING = "approval_pending"
    # Answered inside the protocol, not by an HTTP status: a tool that does not exist, a uid that
    # does not exist for this caller, a library it may read but not change.
    UNKNOWN_TOOL = "unknown_tool"
    NOT_FOUND = "not_found"
    NOT_EDITOR = "not_editor"


@dataclass(frozen=True)
class AuthResult:
    token: MCPToken | None
    failure: AuthFailure | None

    @property
    def ok(self) -> bool:
        return self.failure is None


def authenticate(raw: str | None, *, tool: str | None = None) -> AuthResult:
    """Check a bearer token (and, when given, that it may call `tool`)."""
    if not raw:
        return AuthResult(None, AuthFailure.MISSING)
    if not tokens.is_well_formed(raw):
        return AuthResult(None, AuthFailure.INVALID)
    token = MCPToken.objects.select_related("user").filter(digest=tokens.digest(raw)).first()
    if token is None or not token.user.is_active:
        return AuthResult(None, AuthFailure.INVALID)
    if token.is_revoked:
        return AuthResult(token, AuthFailure.REVOKED)
    now = timezone.now()
    if token.is_expired(now):
        return AuthResult(token, AuthFailure.EXPIRED)
    if tool is not None and not token.allows_tool(tool):
        return AuthResult(token, AuthFailure.FORBIDDEN_TOOL)
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        MCPToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return AuthResult(token, None)


def token_library_ids(token: MCPToken) -> frozenset[int] | None:
    """The library ids a token is confined to; None when it may see every library."""
    ids = frozenset(token.libraries.values_list("id", flat=True))
    return ids or None


def bearer(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer …` value (HTTP header or gRPC metadata), else None."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()
