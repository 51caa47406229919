"""Token writes (create, revoke) and the one read every MCP call makes: authenticate."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from mcp_server import tokens
from mcp_server.models import MCPAuditEvent, MCPToken

# last_used_at is written at most this often, so a busy token costs no write per call.
LAST_USED_RESOLUTION = timedelta(minutes=5)


class AuthFailure(enum.StrEnum):
    """The fixed reasons an authentication can fail (also the metric's label values)."""

    MISSING = "missing"
    INVALID = "invalid"
    EXPIRED = "expired"
    REVOKED = "revoked"
    FORBIDDEN_TOOL = "forbidden_tool"


@dataclass(frozen=True)
class AuthResult:
    token: MCPToken | None
    failure: AuthFailure | None

    @property
    def ok(self) -> bool:
        return self.failure is None


@transaction.atomic
def create_token(
    *,
    user: User,
    name: str,
    allowed_tools: list[str] | None = None,
    expires_at: datetime | None = None,
    actor: str = "system",
) -> tuple[MCPToken, str]:
    """Create a token and return it with the raw secret, which is never stored."""
    raw = tokens.generate_token()
    token = MCPToken.objects.create(
        user=user,
        name=name,
        digest=tokens.digest(raw),
        prefix=tokens.display_prefix(raw),
        allowed_tools=sorted(set(allowed_tools or [])),
        expires_at=expires_at,
    )
    MCPAuditEvent.objects.create(
        kind=MCPAuditEvent.Kind.TOKEN_CREATED,
        token=token,
        actor=actor,
        detail={"name": name, "user": user.get_username(), "tools": token.allowed_tools},
    )
    return token, raw


@transaction.atomic
def revoke_token(*, token: MCPToken, actor: str = "system") -> MCPToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        MCPAuditEvent.objects.create(
            kind=MCPAuditEvent.Kind.TOKEN_REVOKED, token=token, actor=actor, detail={"name": token.name}
        )
    return token


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
