"""OAuth 2.1 sign-in (MCP_OAUTH=builtin): Mnemosyne as its own authorization server.

The HTTP endpoints are the MCP SDK's own (mcp.server.auth.routes: RFC 8414 metadata, /authorize,
/token, /register, /revoke; PKCE S256 only) on a provider backed by Django models (provider.py →
grants.py); the sign-in and consent pages are Django views (consent.py). Access tokens are bound to
this server's /mcp resource (RFC 8707) and resolve to the same Principal a `mnem_` token does
(scopes, and at most what the user reaches now), in auth/identify.py through auth/oauth_bearer.py.
"""
