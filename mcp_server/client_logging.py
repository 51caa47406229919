"""MCP logging for handshake-era clients (2025-11-25): `logging/setLevel` and what our tools log.

The level lives on the connection: an SSE session keeps it until it closes; on stateless
streamable HTTP every request is a connection of its own, so it starts at DEFAULT_LEVEL. On
2026-07-28 the client opts in per request through `_meta` instead, which the SDK enforces.
"""

from __future__ import annotations

from typing import Any, Final, get_args

from mcp.server.connection import allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.session import ServerSession
from mcp.types import (
    EmptyResult,
    LoggingLevel,
    LoggingMessageNotification,
    LoggingMessageNotificationParams,
    SetLevelRequestParams,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from mcp_server import sdk

LEVELS: Final[tuple[LoggingLevel, ...]] = get_args(LoggingLevel)  # least severe first
# Until a client asks for more, only what may need its attention.
DEFAULT_LEVEL: Final[LoggingLevel] = "warning"
LOGGER_NAME = "mnemosyne"
_STATE_KEY = "mnemosyne.log_level"


def level_of(session: ServerSession) -> LoggingLevel:
    level: LoggingLevel = sdk.connection_state(session).get(_STATE_KEY, DEFAULT_LEVEL)
    return level


async def set_level(ctx: ServerRequestContext[Any, Any], params: SetLevelRequestParams) -> EmptyResult:
    sdk.connection_state(ctx.session)[_STATE_KEY] = params.level
    return EmptyResult()


def wanted(ctx: Context, level: LoggingLevel) -> bool:
    request = ctx.request_context
    if request.session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return level in allowed_log_levels(request.session.protocol_version, request.meta)
    return LEVELS.index(level) >= LEVELS.index(level_of(request.session))


async def emit(ctx: Context, level: LoggingLevel, message: str) -> None:
    """Send `message` to the client on this request's stream, if its level is asked for."""
    if not wanted(ctx, level):
        return
    # A plain notification: ServerSession.send_log_message warns that logging is deprecated (from
    # 2026-07-28), which is not news for the 2025 clients this serves; `wanted` applies its gate.
    notification = LoggingMessageNotification(
        params=LoggingMessageNotificationParams(level=level, data=message, logger=LOGGER_NAME)
    )
    await ctx.request_context.session.send_notification(notification, related_request_id=ctx.request_id)


def install(server: MCPServer) -> None:
    """Serve logging/setLevel, which also declares the logging capability."""
    sdk.add_request_handler(server, "logging/setLevel", SetLevelRequestParams, set_level)
