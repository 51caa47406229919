"""Stateless streamable HTTP: answer with one JSON body unless the request can be sent notifications.

A 2025-era request to the stateless endpoint is a connection of its own, so the only messages it
can be sent besides its answer are request-scoped notifications: progress, when the request
carries a progress token, and log messages at the connection's level, which on a fresh
connection is `warning` (a failing tool, whose answer says the same). The spec lets a server
answer a request with either `application/json` or `text/event-stream`; the JSON answer skips
the event stream's machinery and costs about 3 ms less per call (docs/benchmarks.md).

So a POST whose JSON-RPC request carries `_meta.progressToken` goes to the streaming (SSE)
session manager, as does everything that is not a 2025-era POST (GET, DELETE, and 2026-07-28
requests, whose SDK path already answers JSON until the handler emits a notification); the rest
goes to the JSON-response session manager. Both serve the same MCP server.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_server.request_body import read_body, replay_body

_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.encode("ascii")


def wants_progress(body: bytes) -> bool:
    """Whether the JSON-RPC request in `body` asks for progress notifications."""
    try:
        message: Any = json.loads(body)
    except ValueError:
        return False
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and meta.get("progressToken") is not None


def _handshake_era(scope: Scope) -> bool:
    version = next((value for key, value in scope["headers"] if key == _VERSION_HEADER), None)
    return version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS


class ResponseModeRouter:
    """Routes each stateless streamable-HTTP request to the streaming or the JSON-response app."""

    def __init__(self, streaming: ASGIApp, plain: ASGIApp) -> None:
        self.streaming = streaming
        self.plain = plain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not _handshake_era(scope):
            await self.streaming(scope, receive, send)
            return
        body = await read_body(receive)
        app = self.streaming if wants_progress(body) else self.plain
        await app(scope, replay_body(body, receive), send)
