"""Grants, codes and tokens in PostgreSQL (only digests of codes and tokens are stored).

A grant is one sign-in: what a user consented to for a client. Its code is used once — a code
presented twice revokes the grant and everything issued from it (RFC 6749 §4.1.2). Refreshing
retires the old access and refresh tokens and issues new ones; a retired refresh token presented
again revokes the grant (OAuth 2.1 §4.3.1: refresh token reuse means it was stolen).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from mcp.shared.auth import OAuthToken

from access import oauth_bearer, tokens
from access.models import OAuthClient, OAuthCode, OAuthGrant
from access.models import OAuthToken as TokenRow
from access.oauth import config
from mnemosyne.library.models import Library


@dataclass(frozen=True)
class Consent:
    client_id: str
    scopes: list[str]
    redirect_uri: str
    redirect_uri_provided_explicitly: bool
    code_challenge: str
    resource: str


# Codes and tokens this long past their expiry are deleted (at the next consent).
EXPIRED_KEPT = timedelta(days=1)


def consent(user: User, given: Consent, libraries: Iterable[Library]) -> str:
    """Record the user's consent as a grant; the authorization code for it (raw, returned once)."""
    client = OAuthClient.objects.get(client_id=given.client_id)
    code = tokens.generate_token(prefix="")
    long_ago = timezone.now() - EXPIRED_KEPT
    OAuthCode.objects.filter(expires_at__lt=long_ago).delete()
    TokenRow.objects.filter(expires_at__lt=long_ago).delete()
    with transaction.atomic():
        grant = OAuthGrant.objects.create(
            user=user, client=client, scopes=sorted(given.scopes), resource=given.resource
        )
        grant.libraries.set(list(libraries))
        OAuthCode.objects.create(
            digest=tokens.digest(code),
            grant=grant,
            code_challenge=given.code_challenge,
            redirect_uri=given.redirect_uri,
            redirect_uri_provided_explicitly=given.redirect_uri_provided_explicitly,
            expires_at=timezone.now() + timedelta(seconds=config.CODE_SECONDS),
        )
    return code


def find_code(client_id: str, code: str) -> OAuthCode | None:
    """A code of this client that was never used; a used one revokes its grant (a replay)."""
    row = (
        OAuthCode.objects.select_related("grant", "grant__client")
        .filter(digest=tokens.digest(code), grant__client__client_id=client_id)
        .first()
    )
    if row is None or row.grant.is_revoked:
        return None
    if row.used_at is not None:
        revoke_grant(row.grant)
        return None
    return row


def exchange_code(code_digest: str) -> OAuthToken | None:
    """Use the code (once: a concurrent second exchange finds it used) for a first pair of tokens."""
    with transaction.atomic():
        used = OAuthCode.objects.filter(digest=code_digest, used_at__isnull=True).update(
            used_at=timezone.now()
        )
        if not used:
            return None
        grant = OAuthCode.objects.select_related("grant").get(digest=code_digest).grant
        return _issue(grant, grant.scopes)


def find_refresh(client_id: str, raw: str) -> TokenRow | None:
    row = oauth_bearer.token_row(raw, TokenRow.Kind.REFRESH)
    if row is None or row.grant.client.client_id != client_id or row.grant.is_revoked:
        return None
    if row.retired_at is not None:
        revoke_grant(row.grant)
        return None
    return row


def refresh(row: TokenRow, scopes: list[str]) -> OAuthToken | None:
    """Rotate: retire this refresh token and the grant's live access tokens, issue a new pair."""
    now = timezone.now()
    with transaction.atomic():
        retired = TokenRow.objects.filter(pk=row.pk, retired_at__isnull=True).update(retired_at=now)
        if not retired:
            return None
        TokenRow.objects.filter(grant=row.grant, kind=TokenRow.Kind.ACCESS, retired_at__isnull=True).update(
            retired_at=now
        )
        return _issue(row.grant, [scope for scope in scopes if scope in row.grant.scopes])


def find_token(raw: str) -> TokenRow | None:
    """An access or refresh token, live or not (for /revoke)."""
    kind = TokenRow.Kind.ACCESS if raw.startswith(oauth_bearer.ACCESS_PREFIX) else TokenRow.Kind.REFRESH
    return oauth_bearer.token_row(raw, kind)


def revoke_grant(grant: OAuthGrant) -> None:
    OAuthGrant.objects.filter(pk=grant.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())


def _issue(grant: OAuthGrant, scopes: list[str]) -> OAuthToken:
    access = tokens.generate_token(oauth_bearer.ACCESS_PREFIX)
    refresh_token = tokens.generate_token(oauth_bearer.REFRESH_PREFIX)
    now = timezone.now()
    access_seconds = settings.MCP_OAUTH_ACCESS_TOKEN_SECONDS
    TokenRow.objects.bulk_create(
        [
            TokenRow(
                digest=tokens.digest(access),
                grant=grant,
                kind=TokenRow.Kind.ACCESS,
                scopes=scopes,
                expires_at=now + timedelta(seconds=access_seconds),
            ),
            TokenRow(
                digest=tokens.digest(refresh_token),
                grant=grant,
                kind=TokenRow.Kind.REFRESH,
                scopes=scopes,
                expires_at=now + timedelta(seconds=settings.MCP_OAUTH_REFRESH_TOKEN_SECONDS),
            ),
        ]
    )
    return OAuthToken(
        access_token=access,
        token_type="Bearer",
        expires_in=access_seconds,
        refresh_token=refresh_token,
        scope=" ".join(scopes),
    )


def expires_at(row: TokenRow) -> int:
    return int(row.expires_at.timestamp())
