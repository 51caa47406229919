"""Prometheus metrics of tool calls, served at /metrics (access/metrics.py has the decision's).
Labels never carry token or user ids."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

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
CALLS_IN_PROGRESS = Gauge(
    "mcp_calls_in_progress",
    "Calls holding one of the process's MCP_MAX_CALLS places (transports/admission.py).",
    multiprocess_mode="livesum",
)
CALLS_SHED = Counter(
    "mcp_calls_shed",
    "Calls answered 503 busy: every place taken and MCP_MAX_WAITING_CALLS queued (transports/admission.py).",
)
