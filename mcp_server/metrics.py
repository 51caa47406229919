"""Prometheus metrics of tool calls, served at /metrics (access/metrics.py has the decision's).
Labels never carry token or user ids."""

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
