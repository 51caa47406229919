"""Who is calling: one of our tokens, a JWT from the identity provider, or nobody (anonymous reads).

`identify` is the one check every MCP path makes (the HTTP middlewares, tools/list, the tool
handlers, resources, prompts and completions), so a caller meets the same rules everywhere:

- `mnem_…` tokens (services.authenticate): scopes, tool whitelist, libraries, rate limit, signing;
- any other bearer token, when MCP_JWT_ISSUER is set: a JWT (jwt_bearer), with the scopes and
  libraries its claims grant; no whitelist, rate limit or signing (those are settings of our tokens);
- no Authorization header, when MCP_ANONYMOUS_READ is on: scope "read" only, within
  MCP_ANONYMOUS_LIBRARIES if set. A token that is present but invalid is never treated as absent.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass

from django.conf import settings

from mcp_server import jwt_bearer, services, tokens
from mcp_server.models import MCPToken
from mcp_server.services import AuthFailure
from mnemosyne.library.models import Library

logger = logging.getLogger(__name__)


class Kind(enum.StrEnum):
    TOKEN = "token"
    JWT = "jwt"
    ANONYMOUS = "anonymous"


@dataclass(frozen=True)
class Principal:
    kind: Kind
    # Who, in audit rows: the token owner's username, "jwt:<sub>", or "anonymous".
    actor: str
    scopes: frozenset[str]
    token: MCPToken | None = None
    # Which caller an approval belongs to when there is no token row: "jwt:<sub>", "anonymous".
    subject: str = ""
    # For JWT and anonymous callers: the library uids they are confined to (None: every library).
    library_uids: frozenset[str] | None = None

    @property
    def is_anonymous(self) -> bool:
        return self.kind == Kind.ANONYMOUS

    def allows_tool(self, tool: str) -> bool:
        return self.token is None or self.token.allows_tool(tool)

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes

    def library_boundary(self) -> frozenset[int] | None:
        """The library ids this caller may see; None for every library. Unknown uids confer nothing."""
        if self.token is not None:
            return services.library_boundary_of(self.token)
        if self.library_uids is None:
            return None
        return frozenset(Library.objects.filter(uid__in=self.library_uids).values_list("id", flat=True))


@dataclass(frozen=True)
class Identification:
    principal: Principal | None
    failure: AuthFailure | None


def _of_token(token: MCPToken) -> Principal:
    return Principal(
        kind=Kind.TOKEN, actor=token.user.get_username(), scopes=frozenset(token.scopes or []), token=token
    )


def anonymous() -> Principal:
    confined = getattr(settings, "MCP_ANONYMOUS_LIBRARIES", [])
    return Principal(
        kind=Kind.ANONYMOUS,
        actor="anonymous",
        scopes=frozenset({"read"}),
        subject="anonymous",
        library_uids=frozenset(confined) if confined else None,
    )


def identify(raw: str | None) -> Identification:
    """The caller behind a bearer token (None: no Authorization header), or why there is none."""
    if not raw:
        if getattr(settings, "MCP_ANONYMOUS_READ", False):
            return Identification(anonymous(), None)
        return Identification(None, AuthFailure.MISSING)
    config = jwt_bearer.JWTConfig.from_settings()
    if raw.startswith(tokens.TOKEN_PREFIX) or config is None:
        result = services.authenticate(raw)
        if result.failure is not None or result.token is None:
            return Identification(None, result.failure or AuthFailure.INVALID)
        return Identification(_of_token(result.token), None)
    try:
        verified = jwt_bearer.verify(raw, config, jwt_bearer.jwks_cache(config))
    except jwt_bearer.JWTRejected as exc:
        logger.info("bearer JWT refused: %s", exc)
        return Identification(None, AuthFailure.EXPIRED if exc.expired else AuthFailure.INVALID)
    subject = f"jwt:{verified.subject}"
    return Identification(
        Principal(
            kind=Kind.JWT,
            actor=subject,
            scopes=verified.scopes,
            subject=subject,
            library_uids=verified.library_uids,
        ),
        None,
    )
