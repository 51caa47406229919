"""Access tokens of the built-in OAuth server (MCP_OAUTH=builtin) presented to /mcp: their shape,
the resource they are bound to (RFC 8707), and the one lookup that accepts or refuses one.

The authorization server itself (sign-in, consent, codes, refresh) is access/oauth; this is
the part identification needs, so that the caller is decided without it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone

from access import tokens
from access.credentials import LAST_USED_RESOLUTION, AuthFailure
from access.models import OAuthGrant
from access.models import OAuthToken as TokenRow

ACCESS_PREFIX = "mnoa_"
REFRESH_PREFIX = "mnor_"


def enabled() -> bool:
    return bool(settings.MCP_OAUTH == "builtin")


def issuer() -> str:
    """The issuer URL: MCP_PUBLIC_BASE_URL, else this machine on PORT."""
    configured: str = settings.MCP_PUBLIC_BASE_URL
    return (configured or f"http://127.0.0.1:{settings.PORT}").rstrip("/")


def resource() -> str:
    """The RFC 8707 resource every token is bound to: this server's MCP endpoint."""
    return issuer() + "/mcp"


def is_this_resource(value: str | None) -> bool:
    return value is not None and value.rstrip("/") == resource()


def token_row(raw: str, kind: str) -> TokenRow | None:
    return (
        TokenRow.objects.select_related("grant", "grant__client", "grant__user")
        .filter(digest=tokens.digest(raw), kind=kind)
        .first()
    )


@dataclass(frozen=True)
class Bearer:
    """A live access token's grant, as identification needs it."""

    grant: OAuthGrant
    scopes: frozenset[str]
    library_ids: frozenset[int] | None


def authenticate(raw: str) -> Bearer | AuthFailure:
    """An access token presented to /mcp: live, unexpired, of a live grant, bound to this resource."""
    row = token_row(raw, TokenRow.Kind.ACCESS)
    if row is None or not row.grant.user.is_active:
        return AuthFailure.INVALID
    grant = row.grant
    if grant.is_revoked or row.retired_at is not None:
        return AuthFailure.REVOKED
    now = timezone.now()
    if row.expires_at <= now:
        return AuthFailure.EXPIRED
    if not is_this_resource(grant.resource):
        return AuthFailure.INVALID
    if grant.last_used_at is None or now - grant.last_used_at >= LAST_USED_RESOLUTION:
        OAuthGrant.objects.filter(pk=grant.pk).update(last_used_at=now)
    ids = frozenset(grant.libraries.values_list("id", flat=True))
    return Bearer(grant, frozenset(row.scopes) & frozenset(grant.scopes), ids or None)
