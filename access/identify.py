"""Who is calling: a Principal from a credential, or the reason there is none.

- `mnem_…` tokens (credentials.authenticate): scopes, tool whitelist, libraries, rate limit, signing;
- `mnoa_…` access tokens of the built-in OAuth server (oauth_bearer): the scopes and libraries the
  user consented to, bound to this server's /mcp (RFC 8707);
- any other bearer token, when MCP_JWT_ISSUER is set: a JWT (jwt_bearer), with the scopes and
  libraries its claims grant (its issuer decides: no person here stands behind it);
- a browser session of a signed-in person (the admin, the console): `of_user`;
- no credential, when MCP_ANONYMOUS_READ is on: scope "read" only, within MCP_ANONYMOUS_LIBRARIES;
- the local operator (stdio --local, or MCP_REQUIRE_AUTH=false): everything.

A token, an OAuth grant and a session act with at most their owner's *current* reach
(library_access.reach_of, read now), narrowed by the credential's own libraries. A credential that
is present but invalid is never treated as absent.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from access import credentials, jwt_bearer, oauth_bearer, tokens
from access.credentials import AuthFailure
from access.library_access import OPEN, Reach, policy, reach_of
from access.metrics import AUTH_FAILURES, IDENTIFICATIONS
from access.principal import Kind, Principal
from access.refusals import Refusal
from mnemosyne.library.models import Library

logger = logging.getLogger(__name__)

READ, WRITE = "read", "write"


def local(actor: str = "local") -> Principal:
    """The operator on this machine: every scope, every library."""
    return Principal(
        kind=Kind.LOCAL, actor=actor, scopes=frozenset({READ, WRITE}), subject=actor, managed_ids=None
    )


def identify(credential: str | None) -> Principal | Refusal:
    """The caller behind a bearer credential (None: none was sent), or why there is none."""
    found = _identify(credential)
    if isinstance(found, Principal):
        IDENTIFICATIONS.labels(kind=found.kind.value).inc()
    else:
        AUTH_FAILURES.labels(reason=found.failure.value).inc()
    return found


def of_user(user: AbstractBaseUser | AnonymousUser) -> Principal | Refusal:
    """A person signed in with a browser session: reads what they reach; writes where they are an
    editor (under LIBRARY_ACCESS=open: staff write, others read)."""
    if not user.is_authenticated or not user.is_active:
        return Refusal(AuthFailure.MISSING)
    reach = reach_of(user)
    writes = policy() != OPEN or bool(getattr(user, "is_staff", False))
    scopes = frozenset({READ, WRITE} if writes else {READ})
    name = user.get_username()
    return _acting(Kind.SESSION, name, scopes, reach, subject=f"session:{name}")


def _identify(credential: str | None) -> Principal | Refusal:
    if not credential:
        if settings.MCP_ANONYMOUS_READ:
            return _anonymous()
        return Refusal(AuthFailure.MISSING)
    if credential.startswith(oauth_bearer.ACCESS_PREFIX) and oauth_bearer.enabled():
        return _oauth(credential)
    config = jwt_bearer.JWTConfig.from_settings()
    if credential.startswith(tokens.TOKEN_PREFIX) or config is None:
        result = credentials.authenticate(credential)
        if result.failure is not None or result.token is None:
            return Refusal(result.failure or AuthFailure.INVALID)
        token = result.token
        reach = reach_of(token.user).narrowed(credentials.token_library_ids(token))
        scopes = frozenset(token.scopes or [])
        return _acting(Kind.TOKEN, token.user.get_username(), scopes, reach, token=token)
    try:
        verified = jwt_bearer.verify(credential, config, jwt_bearer.jwks_cache(config))
    except jwt_bearer.JWTRejected as exc:
        logger.info("bearer JWT refused: %s", exc)
        return Refusal(AuthFailure.EXPIRED if exc.expired else AuthFailure.INVALID)
    subject = f"jwt:{verified.subject}"
    return Principal(
        kind=Kind.JWT,
        actor=subject,
        scopes=verified.scopes,
        subject=subject,
        library_ids=_library_ids(verified.library_uids),
    )


def _oauth(credential: str) -> Principal | Refusal:
    found = oauth_bearer.authenticate(credential)
    if isinstance(found, AuthFailure):
        return Refusal(found)
    grant = found.grant
    reach = reach_of(grant.user).narrowed(found.library_ids)
    return _acting(Kind.OAUTH, grant.user.get_username(), found.scopes, reach, subject=f"oauth:{grant.pk}")


def _acting(
    kind: Kind, actor: str, scopes: frozenset[str], reach: Reach, *, token=None, subject: str = ""
) -> Principal:
    return Principal(
        kind=kind,
        actor=actor,
        scopes=scopes,
        token=token,
        subject=subject,
        library_ids=reach.readable,
        editable_ids=reach.editable,
        managed_ids=reach.managed,
    )


def _anonymous() -> Principal:
    confined = settings.MCP_ANONYMOUS_LIBRARIES
    return Principal(
        kind=Kind.ANONYMOUS,
        actor="anonymous",
        scopes=frozenset({READ}),
        subject="anonymous",
        library_ids=_library_ids(frozenset(confined) if confined else None),
    )


def _library_ids(uids: frozenset[str] | None) -> frozenset[int] | None:
    """Library uids to ids; unknown uids confer nothing (an empty set sees nothing)."""
    if uids is None:
        return None
    return frozenset(Library.objects.filter(uid__in=uids).values_list("id", flat=True))
