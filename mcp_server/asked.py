"""What one MCP request asks, for the decision (access/decision.py): from its JSON-RPC method and
params, as the HTTP gate reads them from the body and the stdio transport from the SDK's context.
The tool a tools/call names is looked up here, once, in the catalog."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from access.decision import READING_METHODS, Asked
from mcp_server.tools import catalog

# The task methods of 2026-07-28 (mcp_tasks.py) and of 2025-11-25 (legacy_tasks.py).
TASK_METHODS = frozenset({"tasks/get", "tasks/cancel", "tasks/update", "tasks/result", "tasks/list"})


def asked_of(method: object, params: Mapping[str, Any] | None) -> Asked:
    params = params or {}
    if method == "tools/call":
        name = params.get("name")
        name = name if isinstance(name, str) else ""
        arguments = params.get("arguments")
        return Asked(
            tool=name,
            spec=catalog.spec_named(name),
            arguments=arguments if isinstance(arguments, Mapping) else {},
        )
    # Following one's own tasks (mcp_tasks.py) is reading: the caller must be known to see them.
    reads = method in READING_METHODS or method in TASK_METHODS
    return Asked(reads=reads, lists_tools=method == "tools/list")


def needs_caller(method: str) -> bool:
    return method in ("tools/call", "tools/list") or method in READING_METHODS or method in TASK_METHODS
