"""The MCP server: our tools, resources, prompts, completions and logging on the SDK's MCPServer.

Every method that reads the libraries does so inside the caller's library boundary: tools in their
handlers (tools.registry), resources, prompts and completions in library_boundary_middleware.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from django.conf import settings
from django.db import close_old_connections
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    ListToolsResult,
    PaginatedRequestParams,
    Resource,
)

from mcp_server import client_logging, completions, principals, prompts, resources
from mcp_server.read_auth import READING_METHODS
from mcp_server.tools.collections import GET_COLLECTION_CONFIG, LIST_TOPICS
from mcp_server.tools.concepts import GET_CONCEPT_NEIGHBORS, LIST_CONCEPTS
from mcp_server.tools.items import DELETE_ITEM, UPSERT_ITEM
from mcp_server.tools.library import GET_CHUNK, LIST_COLLECTIONS, LIST_ITEMS, LIST_LIBRARIES
from mcp_server.tools.registry import ToolSpec, build_tool
from mcp_server.tools.search import SEARCH
from mnemosyne.library.selectors import library_boundary

SERVER_NAME = "mnemosyne"
SERVER_VERSION = "0.1.0"

TOOL_SPECS: tuple[ToolSpec, ...] = (
    SEARCH,
    GET_CHUNK,
    LIST_LIBRARIES,
    LIST_COLLECTIONS,
    LIST_ITEMS,
    LIST_TOPICS,
    LIST_CONCEPTS,
    GET_CONCEPT_NEIGHBORS,
    GET_COLLECTION_CONFIG,
    UPSERT_ITEM,
    DELETE_ITEM,
)
TOOL_NAMES = frozenset(spec.name for spec in TOOL_SPECS)
WRITE_TOOLS = frozenset(spec.name for spec in TOOL_SPECS if spec.writes)

INSTRUCTIONS = (
    "Mnemosyne is a retrieval engine over the user's document libraries. It returns ranked evidence "
    "with citations; you do the synthesis. Typical flow: list_libraries to see what exists (list_topics "
    "and list_concepts show what a library covers), search (optionally narrowed by library_uid or "
    "collection_uid) to find relevant chunks, get_chunk for a chunk's full text and neighbours. Cite the "
    "chunk_uid of every chunk you rely on; the prompt cite-sources spells this out. upsert_item and "
    "delete_item change the libraries and need a token allowed to write."
)


def callable_tools(raw_token: str | None) -> frozenset[str] | None:
    """The tools a bearer token may call; None (the whole surface) without a valid token."""
    close_old_connections()
    try:
        principal = principals.identify(raw_token).principal if raw_token else None
        if principal is None:
            return None
        return frozenset(
            spec.name
            for spec in TOOL_SPECS
            if principal.allows_tool(spec.name) and principal.has_scope("write" if spec.writes else "read")
        )
    finally:
        close_old_connections()


def _bearer(ctx: ServerRequestContext[Any, Any]) -> str | None:
    headers = getattr(ctx.request, "headers", None)
    scheme, _, raw = (headers.get("authorization", "") if headers is not None else "").partition(" ")
    return raw.strip() if scheme.lower() == "bearer" and raw.strip() else None


def caller_boundary(raw_token: str | None) -> frozenset[int] | None:
    """The libraries the caller may see (None: every library), as for a tool call."""
    close_old_connections()
    try:
        if raw_token is None and not settings.MCP_REQUIRE_AUTH:
            return None
        principal = principals.identify(raw_token).principal
        if principal is None:
            if settings.MCP_REQUIRE_AUTH:
                # The HTTP middleware let it through a moment ago: revoked or expired meanwhile.
                raise MCPError(INVALID_REQUEST, "the bearer token is no longer valid")
            return None
        return principal.library_boundary()
    finally:
        close_old_connections()


async def library_boundary_middleware(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """Resources, completions and prompts read inside the caller's libraries, as tools do.

    The handlers run in worker threads, which inherit the boundary (a context variable) from here.
    """
    if ctx.method not in READING_METHODS:
        return await call_next(ctx)
    boundary = await anyio.to_thread.run_sync(caller_boundary, _bearer(ctx))
    with library_boundary(boundary):
        return await call_next(ctx)


class MnemosyneServer(MCPServer):
    async def _handle_list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        # Without a token the whole surface is listed; with one, only what it may call.
        raw_token = _bearer(ctx)
        tools = await self.list_tools()
        if raw_token is None:
            return ListToolsResult(tools=tools)
        allowed = await anyio.to_thread.run_sync(callable_tools, raw_token)
        return ListToolsResult(tools=tools if allowed is None else [t for t in tools if t.name in allowed])

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        # The spec's answer to an unknown tool is a protocol error naming it, not a tool result.
        if name not in TOOL_NAMES:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}")
        return await super().call_tool(name, arguments, context)

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Context[Any, Any] | None = None
    ) -> GetPromptResult | InputRequiredResult:
        # Invalid params, named, rather than the SDK's generic error for an unknown prompt or argument.
        prompt = next((p for p in await self.list_prompts() if p.name == name), None)
        if prompt is None:
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {name}")
        missing = [a.name for a in prompt.arguments or [] if a.required and a.name not in (arguments or {})]
        if missing:
            raise MCPError(
                INVALID_PARAMS, f"Missing required arguments for prompt {name}: {', '.join(missing)}"
            )
        return await super().get_prompt(name, arguments, context)

    async def list_resources(self) -> list[Resource]:
        fixed = await super().list_resources()
        return fixed + await anyio.to_thread.run_sync(resources.library_resources)


def build_server() -> MnemosyneServer:
    server = MnemosyneServer(
        name=SERVER_NAME,
        title="Mnemosyne",
        version=SERVER_VERSION,
        instructions=INSTRUCTIONS,
        tools=[build_tool(spec) for spec in TOOL_SPECS],
    )
    resources.register(server)
    prompts.register(server)
    completions.register(server)
    client_logging.install(server)
    server.middleware.append(library_boundary_middleware)
    return server
