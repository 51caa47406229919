"""The built-in authorization server's own limits and redirect rules (no database). Where it lives
and the shape of its access tokens are access/oauth_bearer.py's, which /mcp checks."""

from __future__ import annotations

from urllib.parse import urlsplit

SCOPES = ("read", "write")
CODE_SECONDS = 300
# A consent page left open longer than this must be started again from the client.
CONSENT_SECONDS = 600
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
# Schemes a redirect URI may never have: they run code or read local data in the user's browser.
_FORBIDDEN_SCHEMES = frozenset(
    {"javascript", "data", "file", "vbscript", "about", "blob", "ftp", "ws", "wss"}
)


def is_loopback(host: str | None) -> bool:
    return (host or "").strip("[]").lower() in LOOPBACK_HOSTS


def redirect_uri_problem(uri: str) -> str | None:
    """Why a client may not register this redirect URI (OAuth 2.1 §2.3.1, RFC 8252), or None."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if not scheme:
        return f"redirect URI {uri!r} is not absolute"
    if parts.fragment:
        return f"redirect URI {uri!r} must not have a fragment"
    if scheme in _FORBIDDEN_SCHEMES:
        return f"redirect URI scheme {scheme!r} is not allowed"
    if scheme in ("http", "https") and not parts.hostname:
        return f"redirect URI {uri!r} has no host"
    if scheme == "http" and not is_loopback(parts.hostname):
        return f"redirect URI {uri!r}: plain http is allowed only on the loopback interface; use https"
    return None
