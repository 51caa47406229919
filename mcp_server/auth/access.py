"""The transport-neutral caller: who is calling (identify), and whether it may do what it asks.

Every front door (HTTP, stdio, gRPC) resolves a Principal here once per request, from a credential:
- `mnem_…` tokens (credentials.authenticate): scopes, tool whitelist, libraries, rate limit, signing;
- `mnoa_…` access tokens of the built-in OAuth server (MCP_OAUTH=builtin; mcp_server/oauth): the
  scopes and libraries the user consented to; bound to this server's /mcp (RFC 8707);
- any other bearer token, when MCP_JWT_ISSUER is set: a JWT (jwt_bearer), with the scopes and
  libraries its claims grant; no whitelist, rate limit or signing (those are settings of our tokens);
- no credential, when MCP_ANONYMOUS_READ is on: scope "read" only, within MCP_ANONYMOUS_LIBRARIES;
- the local operator (stdio --local, or MCP_REQUIRE_AUTH=false): everything.
A credential that is present but invalid is never treated as absent.

Then `admit` decides, from the tools' own specs, whether the principal may call them (whitelist,
then the scope each needs: "write" for tools that write, "read" otherwise) or read library content
(resources, prompts, completions: "read"), and counts tool calls against a token's per-minute limit.
The decision is a Refusal (or None); each transport turns it into its own answer (HTTP 401/403/429,
a gRPC status, a tool error).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from django.conf import settings

from mcp_server.auth import actions, credentials, jwt_bearer, throttles, tokens
from mcp_server.auth.credentials import AuthFailure
from mcp_server.auth.principal import Kind, Principal
from mcp_server.metrics import AUTH_FAILURES, IDENTIFICATIONS
from mcp_server.oauth import config as oauth_config
from mcp_server.oauth import grants as oauth_grants
from mcp_server.tools import catalog
from mcp_server.tools.spec import ToolSpec
from mnemosyne import outages
from mnemosyne.library.models import Library
from mnemosyne.outages import Dependency

logger = logging.getLogger(__name__)

READ, WRITE = "read", "write"
# JSON-RPC methods that read library content without calling a tool.
READING_METHODS = frozenset({"resources/list", "resources/read", "completion/complete", "prompts/get"})

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
    AuthFailure.THROTTLED: "too many failed authentications from this address; retry later",
}


@dataclass(frozen=True)
class Refusal:
    failure: AuthFailure
    # The tool refused, when one was.
    tool: str = ""
    # Seconds to wait, when rate limited.
    retry_after: int | None = None
    # The scope the refused tool needs.
    scope: str = READ

    @property
    def message(self) -> str:
        if self.failure == AuthFailure.INSUFFICIENT_SCOPE and not self.tool:
            return "this token may not read library content through this method"
        return _MESSAGES[self.failure].format(tool=self.tool)


def required_scope(spec: ToolSpec | None) -> str:
    """The scope a tool needs; an unknown tool's call is let through to be answered as unknown."""
    return WRITE if spec is not None and spec.writes else READ


def local(actor: str = "local") -> Principal:
    """The operator on this machine: every scope, every library."""
    return Principal(kind=Kind.LOCAL, actor=actor, scopes=frozenset({READ, WRITE}), subject=actor)


def identify(credential: str | None) -> Principal | Refusal:
    """The caller behind a bearer credential (None: none was sent), or why there is none."""
    found = _identify(credential)
    if isinstance(found, Principal):
        IDENTIFICATIONS.labels(kind=found.kind.value).inc()
    else:
        AUTH_FAILURES.labels(reason=found.failure.value).inc()
    return found


def _identify(credential: str | None) -> Principal | Refusal:
    if not credential:
        if settings.MCP_ANONYMOUS_READ:
            return _anonymous()
        return Refusal(AuthFailure.MISSING)
    if credential.startswith(oauth_config.ACCESS_PREFIX) and oauth_config.enabled():
        return _oauth(credential)
    config = jwt_bearer.JWTConfig.from_settings()
    if credential.startswith(tokens.TOKEN_PREFIX) or config is None:
        result = credentials.authenticate(credential)
        if result.failure is not None or result.token is None:
            return Refusal(result.failure or AuthFailure.INVALID)
        token = result.token
        return Principal(
            kind=Kind.TOKEN,
            actor=token.user.get_username(),
            scopes=frozenset(token.scopes or []),
            token=token,
            library_ids=credentials.token_library_ids(token),
        )
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
    found = oauth_grants.authenticate(credential)
    if isinstance(found, AuthFailure):
        return Refusal(found)
    grant = found.grant
    return Principal(
        kind=Kind.OAUTH,
        actor=grant.user.get_username(),
        scopes=found.scopes,
        subject=f"oauth:{grant.pk}",
        library_ids=found.library_ids,
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


def authorize_tool(principal: Principal, name: str, spec: ToolSpec | None) -> Refusal | None:
    scope = required_scope(spec)
    if not principal.allows_tool(name):
        return Refusal(AuthFailure.FORBIDDEN_TOOL, name, scope=scope)
    if not principal.has_scope(scope):
        # Anonymous callers may only read: for anything else, the answer is "bring a token".
        failure = AuthFailure.MISSING if principal.is_anonymous else AuthFailure.INSUFFICIENT_SCOPE
        return Refusal(failure, name, scope=scope)
    return None


def authorize_reading(principal: Principal) -> Refusal | None:
    """Resources, prompts and completions read library content: scope "read" (no whitelist)."""
    return None if principal.has_scope(READ) else Refusal(AuthFailure.INSUFFICIENT_SCOPE)


def admit(
    principal: Principal, *, tools: Sequence[tuple[str, ToolSpec | None]] = (), reads: bool = False
) -> Refusal | None:
    """Whether the principal may make these calls; each tool call is counted against a token's
    per-minute limit (in PostgreSQL, shared by every worker and host). Refusals are counted by reason."""
    refusal = authorize_reading(principal) if reads else None
    for name, spec in tools:
        refusal = refusal or authorize_tool(principal, name, spec)
    if refusal is None and principal.token is not None:
        for _ in tools:
            wait = actions.take_rate_limit_slot(principal.token)
            if wait is not None:
                refusal = Refusal(AuthFailure.RATE_LIMITED, retry_after=wait)
                break
    if refusal is None:
        for name, _ in tools:
            wait = throttles.tool_wait(principal, name)
            if wait is not None:
                refusal = Refusal(AuthFailure.TOOL_RATE_LIMITED, name, retry_after=wait)
                break
    if refusal is not None:
        AUTH_FAILURES.labels(reason=refusal.failure.value).inc()
    return refusal


@dataclass(frozen=True)
class Admission:
    """The caller of the request being handled, and whether its transport already admitted it."""

    principal: Principal
    # True when the transport ran `admit` for this request (HTTP does, to answer 401/403/429).
    admitted: bool
    # "http", "sse", "stdio" or "grpc": a label for metrics and logs.
    transport: str


def decide(
    credential: str | None,
    *,
    tools: Sequence[str] = (),
    reads: bool = False,
    lists_tools: bool = False,
    transport: str,
    address: str = "",
) -> Admission | Refusal | None:
    """A request's admitted caller, why it is refused, or None when it needs no caller — for any
    transport with a credential per request (HTTP, gRPC).

    An address over its limit of failed authentications is refused (429) before its credential
    is even looked at, and each bad credential it sends counts (throttles.py). With
    MCP_REQUIRE_AUTH=false everyone is admitted: as the token it sends, else the local operator.
    """
    needs_caller = bool(tools) or reads or (lists_tools and credential is not None)
    if not needs_caller:
        return None
    throttled = settings.MCP_REQUIRE_AUTH and credential and throttles.blocked(throttles.AUTH, address)
    if throttled:
        return _throttled(throttled)
    found = None
    if credential or settings.MCP_REQUIRE_AUTH:
        found = identify(credential)
        outages.succeeded(Dependency.DATABASE)  # identifying the caller read it
        if credential and isinstance(found, Refusal) and found.failure in _BAD_CREDENTIAL:
            wait = throttles.failed(throttles.AUTH, address) if settings.MCP_REQUIRE_AUTH else None
            if wait is not None:
                return _throttled(wait)
    if not settings.MCP_REQUIRE_AUTH:
        principal = found if isinstance(found, Principal) else local("anonymous")
        return Admission(principal, admitted=True, transport=transport)
    if found is None or isinstance(found, Refusal):
        return found
    specs = [(name, catalog.spec_named(name)) for name in tools]
    refusal = admit(found, tools=specs, reads=reads)
    return refusal or Admission(found, admitted=True, transport=transport)


_BAD_CREDENTIAL = (AuthFailure.INVALID, AuthFailure.EXPIRED, AuthFailure.REVOKED)


def _throttled(wait: int) -> Refusal:
    AUTH_FAILURES.labels(reason=AuthFailure.THROTTLED.value).inc()
    return Refusal(AuthFailure.THROTTLED, retry_after=wait)


_CURRENT: ContextVar[Admission | None] = ContextVar("mnemosyne_admission", default=None)


@contextlib.contextmanager
def acting_as(admission: Admission | None) -> Iterator[None]:
    """Within the block (and the worker threads it starts), `current()` is this admission."""
    reset = _CURRENT.set(admission)
    try:
        yield
    finally:
        _CURRENT.reset(reset)


def current() -> Admission | None:
    return _CURRENT.get()
