"""Where Mnemosyne meets the MCP SDK beyond its plainest API, in one place, each with why.

- Tools are built with the SDK's public `Tool` and `FuncMetadata` constructors (no mutation after):
  the input schema is the tool's own strict model's, and the SDK hands the arguments through as
  sent (`SentArguments`), because the one tool-call path (tool_calls) validates them itself, the
  same way for every transport. Letting the SDK validate first would coerce ("false" → False for a
  boolean, from JSON in a string) before our strict check could refuse it.
- `logging/setLevel`: MCPServer has no hook for it; the SDK's docs point at the low-level
  server's `add_request_handler`.
- A handshake-era connection's log level is kept in `Connection.state`, the SDK's per-connection
  store for applications, which a request handler reaches only through its session.
- stdio (`run_stdio`): the SDK's stdio transport hands a line that is not a JSON-RPC message to the
  session as an exception, which its dispatcher drops (logged at debug level), so the client never
  hears of it. We run the low-level server as `MCPServer.run_stdio_async` does, with a relay in
  between that answers such a line with a JSON-RPC parse error (-32700) or invalid request (-32600).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from mcp.types import CallToolResult, ErrorData, InputRequiredResult, JSONRPCError
from mcp_types import INVALID_REQUEST, PARSE_ERROR
from pydantic import ValidationError, model_validator

from mcp_server.tools.spec import ToolSpec

ToolRunner = Callable[[Context, ToolSpec, dict[str, Any]], Awaitable[CallToolResult | InputRequiredResult]]


class SentArguments(ArgModelBase):
    """A tool call's arguments, untouched: the whole object becomes `sent`."""

    sent: dict[str, Any]

    @model_validator(mode="before")
    @classmethod
    def _wrap(cls, data: Any) -> dict[str, Any]:
        return {"sent": data if isinstance(data, dict) else {}}


def mcp_tool(spec: ToolSpec, run: ToolRunner, meta: dict[str, Any] | None = None) -> Tool:
    """The SDK's Tool for a spec: our schemas and hints, `meta` added to its `_meta`; calls go to
    `run(ctx, spec, arguments)`."""

    async def call(ctx: Context, sent: dict[str, Any]) -> CallToolResult | InputRequiredResult:
        return await run(ctx, spec, sent)

    return Tool(
        fn=call,
        name=spec.name,
        title=spec.title,
        description=spec.description,
        parameters=spec.input_schema,
        fn_metadata=FuncMetadata(arg_model=SentArguments, output_schema=spec.output_schema),
        is_async=True,
        context_kwarg="ctx",
        annotations=spec.annotations,
        meta={"version": spec.version, "writes": spec.writes, **(meta or {})},
    )


def add_request_handler(
    server: MCPServer, method: str, params_type: type[Any], handler: Callable[..., Awaitable[Any]]
) -> None:
    server._lowlevel_server.add_request_handler(method, params_type, handler)


def connection_state(session: ServerSession) -> dict[str, Any]:
    state: dict[str, Any] = session._connection.state
    return state


async def run_stdio(server: MCPServer) -> None:
    """Serve `server` over this process's stdin and stdout until end of input."""
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        relay_send, relay_receive = create_context_streams[SessionMessage | Exception](0)

        async def relay() -> None:
            async with relay_send:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        await write_stream.send(SessionMessage(_unreadable(item)))
                    else:
                        await relay_send.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(relay)
            await lowlevel.run(relay_receive, write_stream, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()


def _unreadable(exc: Exception) -> JSONRPCError:
    not_json = isinstance(exc, ValidationError) and any(
        error["type"] == "json_invalid" for error in exc.errors()
    )
    if not_json:
        error = ErrorData(code=PARSE_ERROR, message="Parse error: the line is not valid JSON")
    else:
        error = ErrorData(
            code=INVALID_REQUEST, message="Invalid request: the line is not one JSON-RPC message"
        )
    return JSONRPCError(jsonrpc="2.0", id=None, error=error)
