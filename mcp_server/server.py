"""The MCP server: our tools, resources, prompts, completions and logging on the SDK's MCPServer.

The caller of each request comes from its transport, resolved once: over HTTP the gate
(http_gate) has identified and admitted it and left it on the request; on stdio `caller_source`
resolves it. `caller_middleware` makes it the current caller for the handlers, checks access for
the methods that read library content when the transport has not, lists only the tools the caller
may call, and sets its library boundary around resources, prompts and completions. Tool calls go
to the one tool-call path (tool_calls.execute).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio.to_thread
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    Resource,
    TextContent,
)

from mcp_server import blocking, client_logging, completions, prompts, resources, sdk, tool_calls
from mcp_server.auth import access
from mcp_server.auth.access import Admission, Refusal
from mcp_server.auth.principal import Principal
from mcp_server.tool_calls import ToolAnswer, ToolCall
from mcp_server.tools import catalog
from mcp_server.tools.spec import ToolSpec
from mnemosyne.library.selectors import library_boundary

SERVER_NAME = "mnemosyne"
SERVER_VERSION = "0.1.0"
# Where the HTTP gate leaves the request's Admission (request.state, i.e. the ASGI scope's "state").
ADMISSION_STATE = "mnemosyne_admission"
APPROVAL_HEADER = "mcp-approval-id"
NONCE_HEADER = "mcp-request-nonce"
TIMESTAMP_HEADER = "mcp-request-timestamp"

# Resolves the caller of a request on a transport without an HTTP gate (stdio), per request.
CallerSource = Callable[[], Principal | Refusal]

INSTRUCTIONS = (
    "Mnemosyne is a retrieval engine over the user's document libraries. It returns ranked evidence "
    "with citations; you do the synthesis. Typical flow: list_libraries to see what exists (list_topics "
    "and list_concepts show what a library covers), search (optionally narrowed by library_uid or "
    "collection_uid) to find relevant chunks, get_chunk for a chunk's full text and neighbours. Cite the "
    "chunk_uid of every chunk you rely on; the prompt cite-sources spells this out. upsert_item and "
    "delete_item change the libraries and need a token allowed to write."
)


def admission_of(ctx: ServerRequestContext[Any, Any]) -> Admission | None:
    """The Admission the HTTP gate left on this request, if any."""
    state = getattr(ctx.request, "state", None)
    found = getattr(state, ADMISSION_STATE, None) if state is not None else None
    return found if isinstance(found, Admission) else None


def caller_middleware(source: CallerSource | None, transport: str) -> Any:
    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        return await _with_caller(ctx, call_next, source, transport)

    return middleware


async def _with_caller(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext, source: CallerSource | None, transport: str
) -> HandlerResult:
    admission = admission_of(ctx)
    if admission is None and source is not None and _needs_caller(ctx.method):
        found = await blocking.run(source)
        if isinstance(found, Refusal):
            raise MCPError(INVALID_REQUEST, found.message)
        admission = Admission(found, admitted=False, transport=transport)
    reading = ctx.method in access.READING_METHODS
    if reading and admission is not None and not admission.admitted:
        refusal = await blocking.run(lambda: access.admit(admission.principal, reads=True))
        if refusal is not None:
            raise MCPError(INVALID_REQUEST, refusal.message)
    if reading and admission is None and source is not None:
        raise MCPError(INVALID_REQUEST, "this method needs a caller")
    boundary = admission.principal.library_ids if admission is not None else None
    with access.acting_as(admission), library_boundary(boundary):
        result = await call_next(ctx)
    if ctx.method == "tools/list" and admission is not None and isinstance(result, dict):
        # Without a caller the whole surface is listed; with one, only what it may call.
        principal = admission.principal
        result["tools"] = [
            tool
            for tool in result.get("tools", [])
            if access.authorize_tool(principal, tool["name"], catalog.spec_named(tool["name"])) is None
        ]
    return result


def _needs_caller(method: str) -> bool:
    return method in ("tools/call", "tools/list") or method in access.READING_METHODS


async def run_tool(ctx: Context, spec: ToolSpec, sent: dict[str, Any]) -> CallToolResult:
    """An MCP tools/call, through the one tool-call path."""
    admission = access.current()
    if admission is None:
        raise MCPError(INVALID_REQUEST, "this tool call has no caller")
    headers = ctx.headers or {}
    call = ToolCall(
        principal=admission.principal,
        tool=spec.name,
        arguments=sent,
        transport=admission.transport,
        admitted=admission.admitted,
        approval_id=headers.get(APPROVAL_HEADER) or None,
        nonce=headers.get(NONCE_HEADER) or None,
        timestamp=headers.get(TIMESTAMP_HEADER) or None,
    )
    try:
        answer = await blocking.run(tool_calls.execute, call)
    except tool_calls.InvalidToolArguments as exc:
        raise MCPError(INVALID_PARAMS, str(exc)) from None
    except tool_calls.CallRefused as exc:
        answer = ToolAnswer(f"Error executing tool {spec.name}: {exc}", None, is_error=True)
    if answer.is_error:
        await client_logging.emit(ctx, "warning", answer.text)
    else:
        await client_logging.emit(ctx, "info", f"{spec.name} answered in {answer.meta['elapsed_ms']} ms")
        summary = answer.text.splitlines()[0] if answer.text else ""
        await client_logging.emit(ctx, "debug", f"{spec.name}: {summary}")
    return CallToolResult(
        content=[TextContent(type="text", text=answer.text), *answer.attachments],
        structured_content=answer.structured,
        is_error=answer.is_error,
        _meta=answer.meta,
    )


class MnemosyneServer(MCPServer):
    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        # The spec's answer to an unknown tool is a protocol error naming it, not a tool result.
        if name not in catalog.TOOL_NAMES:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {tool_calls.clip(name)}")
        return await super().call_tool(name, arguments, context)

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Context[Any, Any] | None = None
    ) -> GetPromptResult | InputRequiredResult:
        # Invalid params, named, rather than the SDK's generic error for an unknown prompt or argument.
        prompt = next((p for p in await self.list_prompts() if p.name == name), None)
        if prompt is None:
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {tool_calls.clip(name)}")
        missing = [a.name for a in prompt.arguments or [] if a.required and a.name not in (arguments or {})]
        if missing:
            raise MCPError(
                INVALID_PARAMS, f"Missing required arguments for prompt {name}: {', '.join(missing)}"
            )
        return await super().get_prompt(name, arguments, context)

    async def list_resources(self) -> list[Resource]:
        fixed = await super().list_resources()
        # library_resources reads as resources do: on a worker thread, bracketed (resources._reading).
        return fixed + await anyio.to_thread.run_sync(resources.library_resources)


def build_server(*, caller_source: CallerSource | None = None, transport: str = "http") -> MnemosyneServer:
    """The MCP server; `caller_source` resolves the caller of a transport without an HTTP gate."""
    server = MnemosyneServer(
        name=SERVER_NAME,
        title="Mnemosyne",
        version=SERVER_VERSION,
        instructions=INSTRUCTIONS,
        tools=[sdk.mcp_tool(spec, run_tool) for spec in catalog.TOOL_SPECS],
        middleware=[caller_middleware(caller_source, transport)],
    )
    resources.register(server)
    prompts.register(server)
    completions.register(server)
    client_logging.install(server)
    return server
