"""Writes of the MCP surface, each in one transaction (zulip's actions): tokens, audit rows, rate
windows, approvals and nonces. Reads of credentials are in credentials.py.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils import timezone

from access import tokens
from access.library_access import credential_problem
from access.models import SCOPES, MCPApprovalRequest, MCPAuditEvent, MCPNonce, MCPToken
from mnemosyne.library.models import Library

ACTOR_LENGTH = 150  # MCPAuditEvent.actor's max_length


@transaction.atomic
def create_token(
    *,
    user: User,
    name: str,
    allowed_tools: list[str] | None = None,
    expires_at: datetime | None = None,
    scopes: list[str] | None = None,
    libraries: list[Library] | None = None,
    rate_limit_per_minute: int | None = None,
    sign_results: bool = False,
    actor: str = "system",
    address: str = "",
) -> tuple[MCPToken, str]:
    """Create a token and return it with the raw secret, which is never stored.

    Without `scopes` the token may only read: writing is granted explicitly. Under
    LIBRARY_ACCESS=grants a token may not give more than its owner has (ValueError saying why).
    """
    chosen = sorted(set(scopes if scopes is not None else ["read"]))
    unknown = set(chosen) - set(SCOPES)
    if unknown:
        raise ValueError(f"unknown scope(s): {', '.join(sorted(unknown))}")
    asked = frozenset(library.pk for library in libraries) if libraries else None
    problem = credential_problem(user, chosen, asked)
    if problem is not None:
        raise ValueError(problem)
    raw = tokens.generate_token()
    token = MCPToken.objects.create(
        user=user,
        name=name,
        digest=tokens.digest(raw),
        prefix=tokens.display_prefix(raw),
        allowed_tools=sorted(set(allowed_tools or [])),
        expires_at=expires_at,
        scopes=chosen,
        rate_limit_per_minute=rate_limit_per_minute,
        sign_results=sign_results,
        created_by=actor,
    )
    if libraries:
        token.libraries.set(libraries)
    MCPAuditEvent.objects.create(
        kind=MCPAuditEvent.Kind.TOKEN_CREATED,
        token=token,
        actor=actor,
        address=address[:64],
        detail={
            "name": name,
            "user": user.get_username(),
            "tools": token.allowed_tools,
            "scopes": chosen,
            "libraries": sorted(library.uid for library in libraries or []),
            "rate_limit_per_minute": rate_limit_per_minute,
        },
    )
    return token, raw


@transaction.atomic
def extend_token(*, token: MCPToken, days: int, actor: str = "system") -> MCPToken:
    """Push the expiry `days` past now (or past the current expiry, if later)."""
    base = max(timezone.now(), token.expires_at) if token.expires_at else timezone.now()
    token.expires_at = base + timedelta(days=days)
    token.save(update_fields=["expires_at"])
    MCPAuditEvent.objects.create(
        kind=MCPAuditEvent.Kind.TOKEN_EXTENDED,
        token=token,
        actor=actor,
        detail={"name": token.name, "expires_at": token.expires_at.isoformat()},
    )
    return token


def record_write_call(
    *,
    token: MCPToken | None,
    tool: str,
    outcome: str,
    arguments: dict[str, object],
    actor: str | None = None,
    transport: str = "",
) -> None:
    """Audit a write-tool call: who (the token's owner, or `actor`, e.g. "jwt:<sub>"), what (tool,
    argument names), the outcome; and, for a write not made through MCP, where ("console")."""
    who = actor or (token.user.get_username() if token is not None else "anonymous")
    # Argument names only (not values: they may be whole documents).
    detail: dict[str, object] = {
        "tool": tool,
        "outcome": outcome,
        "arguments": sorted(k for k, v in arguments.items() if v is not None),
    }
    if transport:
        detail["transport"] = transport
    if len(who) > ACTOR_LENGTH:
        detail["actor"] = who  # in full, where the column would cut it
    MCPAuditEvent.objects.create(
        kind=MCPAuditEvent.Kind.WRITE_TOOL_CALL, token=token, actor=who[:ACTOR_LENGTH], detail=detail
    )


def take_throttle_slot(key: str, limit: int, now: datetime | None = None) -> int | None:
    """Count one event under `key` (abuse limits, throttles.py) against `limit` per minute; seconds
    to wait when over it, else None."""
    return _take_slot("mcp_server_mcpthrottlewindow", "key", key[:200], limit, now)


def take_rate_limit_slot(token: MCPToken, now: datetime | None = None) -> int | None:
    """Count a call against the token's per-minute limit; seconds to wait when over it, else None."""
    if not token.rate_limit_per_minute:
        return None
    return _take_slot("mcp_server_mcpratewindow", "token_id", token.pk, token.rate_limit_per_minute, now)


def _take_slot(table: str, key_column: str, key: str | int, limit: int, now: datetime | None) -> int | None:
    """Count one event in `key`'s fixed one-minute window of `table`: one statement in PostgreSQL,
    so every worker and host shares the count. The first event of a new minute clears the table's
    finished windows (every key's), so it holds about one row per key active this minute."""
    now = now or timezone.now()
    window = now.replace(second=0, microsecond=0)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({key_column}, window_start, count) VALUES (%s, %s, 1) "
            f"ON CONFLICT ({key_column}, window_start) DO UPDATE "
            f"SET count = {table}.count + 1 RETURNING count",
            [key, window],
        )
        row = cursor.fetchone()
        assert row is not None
        if row[0] == 1:
            cursor.execute(f"DELETE FROM {table} WHERE window_start < %s", [window])
    return None if row[0] <= limit else max(1, 60 - now.second)


@transaction.atomic
def revoke_token(*, token: MCPToken, actor: str = "system", address: str = "") -> MCPToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        MCPAuditEvent.objects.create(
            kind=MCPAuditEvent.Kind.TOKEN_REVOKED,
            token=token,
            actor=actor,
            address=address[:64],
            detail={"name": token.name},
        )
    return token


# Approvals for sensitive tools (MCP_APPROVAL_REQUIRED_TOOLS): request, decide, use once.
APPROVAL_PREVIEW_CHARS = 2000


def arguments_digest(arguments: dict[str, Any]) -> str:
    canonical = json.dumps(arguments, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def request_approval(
    *, token: MCPToken | None, tool: str, arguments: dict[str, Any], subject: str = ""
) -> MCPApprovalRequest:
    """Record a pending call; `subject` names a caller without a token row (e.g. "jwt:<sub>")."""
    preview = json.dumps(arguments, sort_keys=True, default=str)
    return MCPApprovalRequest.objects.create(
        token=token,
        subject=subject,
        tool=tool,
        arguments_digest=arguments_digest(arguments),
        arguments_preview=preview[:APPROVAL_PREVIEW_CHARS],
    )


@transaction.atomic
def decide_approval(*, request: MCPApprovalRequest, approve: bool, actor: str) -> MCPApprovalRequest:
    """Approve or reject a pending request; a decided one stays as it is."""
    MCPApprovalRequest.objects.filter(pk=request.pk, status=MCPApprovalRequest.Status.PENDING).update(
        status=MCPApprovalRequest.Status.APPROVED if approve else MCPApprovalRequest.Status.REJECTED,
        decided_by=actor,
        decided_at=timezone.now(),
    )
    request.refresh_from_db()
    return request


def use_approval(
    *, uid: str, token: MCPToken | None, tool: str, arguments: dict[str, Any], subject: str = ""
) -> bool:
    """Spend an approved request on this very call (same caller, tool, arguments); True at most once."""
    return bool(
        MCPApprovalRequest.objects.filter(
            uid=uid,
            token=token,
            subject=subject,
            tool=tool,
            arguments_digest=arguments_digest(arguments),
            status=MCPApprovalRequest.Status.APPROVED,
        ).update(status=MCPApprovalRequest.Status.USED)
    )


def remember_nonce(*, token: MCPToken, nonce: str, now: datetime | None = None) -> bool:
    """Record a request nonce; False when the token used it within the last five minutes (a replay)."""
    now = now or timezone.now()
    window = timedelta(seconds=tokens.NONCE_WINDOW_SECONDS)
    MCPNonce.objects.filter(token=token, seen_at__lt=now - window).delete()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO mcp_server_mcpnonce (token_id, nonce, seen_at) VALUES (%s, %s, %s) "
            "ON CONFLICT (token_id, nonce) DO NOTHING RETURNING id",
            [token.pk, nonce, now],
        )
        return cursor.fetchone() is not None
