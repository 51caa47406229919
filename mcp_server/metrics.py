"""Prometheus metrics served at /metrics. Labels never carry token or user ids."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

TOOL_INVOCATIONS = Counter(
    "mcp_tool_invocations",
    "MCP tool calls by tool and outcome (ok, error).",
    ["tool", "status"],
)
TOOL_DURATION = Histogram(
    "mcp_tool_duration_seconds",
    "Time spent in MCP tool handlers.",
    ["tool"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
AUTH_FAILURES = Counter(
    "mcp_auth_failures",
    "Refused MCP calls by reason (missing, invalid, expired, revoked, forbidden_tool, insufficient_scope, "
    "rate_limited, approval_pending).",
    ["reason"],
)
IDENTIFICATIONS = Counter(
    "mcp_identifications",
    "Callers identified from a credential (one per request that needs a caller), by kind: token, jwt, "
    "anonymous, local.",
    ["kind"],
)
