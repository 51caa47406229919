"""Access for people and machines: who the caller is, what it may read and change, and the records
of it (tokens, JWTs, OAuth 2.1, library grants, single sign-on, approvals, nonces and signed
results). `decision.py` is the one place that decides; the MCP surface (mcp_server/) and the
console (console/) both ask it, and neither decides anything itself."""
