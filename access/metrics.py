"""Prometheus metrics of the decision, served at /metrics with the tool calls' (mcp_server/metrics.py).
Labels never carry token or user ids."""

from __future__ import annotations

from prometheus_client import Counter

AUTH_FAILURES = Counter(
    "mcp_auth_failures",
    "Refused calls by reason (missing, invalid, expired, revoked, forbidden_tool, insufficient_scope, "
    "rate_limited, tool_rate_limited, changes_rate_limited, throttled, approval_pending, not_editor).",
    ["reason"],
)
IDENTIFICATIONS = Counter(
    "mcp_identifications",
    "Callers identified from a credential (one per request that needs a caller), by kind: token, jwt, "
    "anonymous, local.",
    ["kind"],
)
