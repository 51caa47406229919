"""The settings of who may call what: MCP's HTTP surface, bearer tokens and JWTs, OAuth 2.1, single
sign-on, library grants, abuse limits and load shedding. Part of mnemosyne/project/settings.py (which
star-imports it after the local settings file is read); every value from the environment.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from mnemosyne.project import tuning
from mnemosyne.project.env import envbool, envchoice, envcounts, envfloat, envint, envlist, envstr

_TUNED = tuning.from_environment()  # as settings.py read it

MCP_REQUIRE_AUTH = envbool("MCP_REQUIRE_AUTH", True)
# Origins a browser-based MCP client may send (DNS-rebinding check);
# empty: http(s) on any port of ALLOWED_HOSTS.
MCP_ALLOWED_ORIGINS = envlist("MCP_ALLOWED_ORIGINS", [])
# Largest MCP request body in bytes (413 above); bounds upsert_item uploads, base64 adding a third.
MCP_MAX_REQUEST_BODY_BYTES = envint("MCP_MAX_REQUEST_BODY_BYTES", 4 * 1024 * 1024, minimum=1024)
# External base URL (https://mcp.example.com) for the protected-resource metadata a 401 points at;
# empty: the request's scheme and Host.
MCP_PUBLIC_BASE_URL = envstr("MCP_PUBLIC_BASE_URL", "")
# Bearer JWTs from an identity provider (off unless MCP_JWT_ISSUER is set): a token that is not one
# of ours (mnem_…) is checked against the IdP's JWKS, its issuer and audience (see docs/operations.md).
MCP_JWT_ISSUER = envstr("MCP_JWT_ISSUER", "").strip()
MCP_JWT_AUDIENCE = envstr("MCP_JWT_AUDIENCE", "").strip()
MCP_JWT_JWKS_URL = envstr("MCP_JWT_JWKS_URL", "").strip()
# Asymmetric only: a shared-secret (HS*) or "none" algorithm would let a JWKS key be used as a secret.
_JWT_ASYMMETRIC = {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
# Named in any case ("rs256", "EDDSA"), as PyJWT spells them.
MCP_JWT_ALGORITHMS = [
    {name.upper(): name for name in _JWT_ASYMMETRIC}.get(name.upper(), name)
    for name in envlist("MCP_JWT_ALGORITHMS", ["RS256", "ES256"])
]
MCP_JWT_SCOPE_CLAIM = envstr("MCP_JWT_SCOPE_CLAIM", "scope").strip()
MCP_JWT_LIBRARIES_CLAIM = envstr("MCP_JWT_LIBRARIES_CLAIM", "mnemosyne_libraries").strip()
MCP_JWT_JWKS_CACHE_SECONDS = envint("MCP_JWT_JWKS_CACHE_SECONDS", 300, minimum=1, maximum=86_400)
# An unknown key id refetches the JWKS (key rotation) at most this often, so bogus kids cannot flood the IdP.
MCP_JWT_JWKS_MIN_REFETCH_SECONDS = int(_TUNED["MCP_JWT_JWKS_MIN_REFETCH_SECONDS"])
MCP_JWT_HTTP_TIMEOUT = envfloat("MCP_JWT_HTTP_TIMEOUT", 3.0, minimum=0.1, maximum=60.0)
MCP_JWT_LEEWAY_SECONDS = envint("MCP_JWT_LEEWAY_SECONDS", 30, minimum=0, maximum=600)
if MCP_JWT_ISSUER and not (MCP_JWT_AUDIENCE and MCP_JWT_JWKS_URL):
    raise ImproperlyConfigured("MCP_JWT_ISSUER needs MCP_JWT_AUDIENCE and MCP_JWT_JWKS_URL")
if not set(MCP_JWT_ALGORITHMS) <= _JWT_ASYMMETRIC or not MCP_JWT_ALGORITHMS:
    raise ImproperlyConfigured(
        f"MCP_JWT_ALGORITHMS must name asymmetric algorithms ({', '.join(sorted(_JWT_ASYMMETRIC))}), "
        f"got {MCP_JWT_ALGORITHMS!r}"
    )
# OAuth authorization servers listed in that metadata (issuer URLs); default: the JWT issuer, if any.
MCP_AUTHORIZATION_SERVERS = envlist("MCP_AUTHORIZATION_SERVERS", [MCP_JWT_ISSUER] if MCP_JWT_ISSUER else [])
# OAuth 2.1 sign-in with Mnemosyne as its own authorization server (access/oauth): "builtin", or
# "off". Its issuer is MCP_PUBLIC_BASE_URL (else http://127.0.0.1:PORT); users sign in with their
# Django account at /oauth/login/ and consent to scopes and libraries.
MCP_OAUTH = envchoice("MCP_OAUTH", "off", ["off", "builtin"])
MCP_OAUTH_ACCESS_TOKEN_SECONDS = envint("MCP_OAUTH_ACCESS_TOKEN_SECONDS", 3600, minimum=60, maximum=86_400)
MCP_OAUTH_REFRESH_TOKEN_SECONDS = envint(
    "MCP_OAUTH_REFRESH_TOKEN_SECONDS", 30 * 86_400, minimum=3600, maximum=365 * 86_400
)
# Client ID metadata documents (a client_id that is an https URL) are fetched only from public
# addresses unless this is on (an intranet whose clients publish their documents internally).
MCP_OAUTH_PRIVATE_CLIENT_DOCUMENTS = envbool("MCP_OAUTH_PRIVATE_CLIENT_DOCUMENTS", False)
# Who may see which library (access/library_access.py): "open" (every active user reads
# every library; a token's scopes decide writes) or "grants" (a person reaches only the libraries
# granted to them or their groups: manage.py grant, the admin; superusers everything). The policy is
# the one recorded in the database (manage.py access_policy); this is only a fresh database's first
# choice, and a server whose value disagrees with the record refuses to start. Unset ("") follows
# the record (open when none).
LIBRARY_ACCESS = (
    envchoice("LIBRARY_ACCESS", "open", ["open", "grants"]) if envstr("LIBRARY_ACCESS", "") else ""
)
# Single sign-on (access/single_sign_on.py), on when OIDC_ISSUER is set: people sign in to
# the admin, the OAuth consent page and the console with the organisation's OpenID Connect provider.
OIDC_ISSUER = envstr("OIDC_ISSUER", "").strip()
# Default: OIDC_ISSUER + /.well-known/openid-configuration.
OIDC_DISCOVERY_URL = envstr("OIDC_DISCOVERY_URL", "").strip()
OIDC_CLIENT_ID = envstr("OIDC_CLIENT_ID", "").strip()
# Empty: a public client (PKCE alone); else sent with HTTP basic authentication.
OIDC_CLIENT_SECRET = envstr("OIDC_CLIENT_SECRET", "")
OIDC_SCOPES = envlist("OIDC_SCOPES", ["openid", "email", "profile"])
OIDC_USERNAME_CLAIM = envstr("OIDC_USERNAME_CLAIM", "preferred_username").strip()
# A list of group names; each sign-in sets the person's provider-managed Django groups to it.
OIDC_GROUPS_CLAIM = envstr("OIDC_GROUPS_CLAIM", "groups").strip()
# Provider groups whose members get the admin (staff) or everything (superuser); empty: left alone.
OIDC_STAFF_GROUPS = envlist("OIDC_STAFF_GROUPS", [])
OIDC_SUPERUSER_GROUPS = envlist("OIDC_SUPERUSER_GROUPS", [])
OIDC_PROVIDER_NAME = envstr("OIDC_PROVIDER_NAME", "your organisation")
OIDC_HTTP_TIMEOUT = envfloat("OIDC_HTTP_TIMEOUT", 5.0, minimum=0.1, maximum=60.0)
# false: only single sign-on (local password forms are hidden and refused).
OIDC_LOCAL_PASSWORDS = envbool("OIDC_LOCAL_PASSWORDS", True)
if OIDC_ISSUER and not OIDC_CLIENT_ID:
    raise ImproperlyConfigured("OIDC_ISSUER needs OIDC_CLIENT_ID")
if not OIDC_LOCAL_PASSWORDS and not OIDC_ISSUER:
    raise ImproperlyConfigured("OIDC_LOCAL_PASSWORDS=false needs OIDC_ISSUER (nobody could sign in)")
AUTHENTICATION_BACKENDS = (["django.contrib.auth.backends.ModelBackend"] if OIDC_LOCAL_PASSWORDS else []) + [
    "access.single_sign_on.SessionOnly"
]
# Without a token, read tools and resources may be used (scope read only), optionally only within
# these library uids. Off by default; write tools always need a token.
MCP_ANONYMOUS_READ = envbool("MCP_ANONYMOUS_READ", False)
MCP_ANONYMOUS_LIBRARIES = envlist("MCP_ANONYMOUS_LIBRARIES", [])
# Tools that run only once an administrator approves the exact call (e.g. "delete_item").
MCP_APPROVAL_REQUIRED_TOOLS = envlist("MCP_APPROVAL_REQUIRED_TOOLS", [])
# Abuse limits (access/throttles.py), per minute, shared by every worker: calls of one tool by
# one caller (the local operator excepted); failed authentications, and failed admin logins, from
# one client address. 0 switches a limit off.
MCP_TOOL_RATE_LIMITS = envcounts("MCP_TOOL_RATE_LIMITS", {"upsert_item": 30, "delete_item": 30})
# Changes one person makes through the console in a minute (uploads, deletions, re-reads), its own
# door's limit: apart from the tools' above (0 switches it off).
CONSOLE_CHANGES_PER_MINUTE = envint("CONSOLE_CHANGES_PER_MINUTE", 60, minimum=0)
# A server-sent event stream (GET /mcp/, /mcp/sse/) that carries nothing but keep-alive pings for
# this long is closed (0: never).
MCP_STREAM_IDLE_SECONDS = envint("MCP_STREAM_IDLE_SECONDS", 600, minimum=0)
# A stream opened without a credential (listing tools needs none) is closed after this long, idle
# or not (0: never).
MCP_STREAM_UNAUTHENTICATED_SECONDS = envint("MCP_STREAM_UNAUTHENTICATED_SECONDS", 60, minimum=0)
# Load shedding (mcp_server/transports/admission.py): calls that do work (tools, resource reads,
# prompts, completions) one server process works on at once over streamable HTTP (0: no bound), and
# how many more may queue for a place; a call that finds the queue full is answered 503 busy at once.
MCP_MAX_CALLS = envint("MCP_MAX_CALLS", 32, minimum=0)
MCP_MAX_WAITING_CALLS = envint("MCP_MAX_WAITING_CALLS", 64, minimum=0)
MCP_AUTH_FAILURES_PER_MINUTE = envint("MCP_AUTH_FAILURES_PER_MINUTE", 20, minimum=0)
ADMIN_LOGIN_FAILURES_PER_MINUTE = envint("ADMIN_LOGIN_FAILURES_PER_MINUTE", 5, minimum=0)
