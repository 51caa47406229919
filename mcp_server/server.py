"""The MCP server: our tools, resources, prompts, completions and logging on the SDK's MCPServer.

Each request arrives decided by its transport, once (access/decision.py): over HTTP the gate
(transports/http_gate.py) has decided and left the decision on the request; on stdio
(transports/stdio.py) `caller_middleware` decides here, asking `caller_source` who is calling at
every request. The middleware makes the decision current for the handlers, answers a refusal
that belongs inside the protocol (an unknown tool, a uid the caller cannot see, a library it may
not change), lists only the tools the caller may call, and sets its library boundary around
resources, prompts and completions. Tool calls go to the one tool-call path (tool_calls.execute).

Beside them, on the SDK's hooks: the evidence app (MCP Apps, evidence_app.py) and long uploads as
tasks (mcp_tasks.py) as extensions, 2026-07-28's cache hints (cache_hints.py), and a deletion the
person confirms first (confirmations.py), its request state sealed with a key every worker shares.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import anyio.to_thread
from django.utils.crypto import salted_hmac
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.request_state import RequestStateSecurity
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
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from access import decision
from access.decision import Allowed
from access.principal import Principal
from access.refusals import Refusal, clip
from mcp_server import (
    cache_hints,
    client_logging,
    completions,
    confirmations,
    evidence_app,
    legacy_tasks,
    mcp_tasks,
    prompts,
    resources,
    sdk,
    tool_calls,
)
from mcp_server.asked import asked_of, needs_caller
from mcp_server.tool_calls import ToolCall
from mcp_server.tools import catalog
from mcp_server.tools.spec import ToolSpec
from mnemosyne.lib import blocking
from mnemosyne.library.selectors import library_boundary

SERVER_NAME = "mnemosyne"
SERVER_VERSION = "0.1.0"
# Where the HTTP gate leaves the request's decision (request.state, i.e. the ASGI scope's "state").
DECISION_STATE = "mnemosyne_decision"
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
    "chunk_uid of every chunk you rely on; the prompt cite-sources spells this out. upsert_item, "
    "delete_item and sync_source change the libraries and need a token allowed to write; "
    "run_evaluation and reembed_library are for a library's managers."
)


def decision_of(ctx: ServerRequestContext[Any, Any]) -> Allowed | Refusal | None:
    """The decision the HTTP gate left on this request, if any."""
    state = getattr(ctx.request, "state", None)
    found = getattr(state, DECISION_STATE, None) if state is not None else None
    return found if isinstance(found, Allowed | Refusal) else None


def caller_middleware(source: CallerSource | None, transport: str) -> Any:
    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        return await _with_caller(ctx, call_next, source, transport)

    return middleware


async def _with_caller(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext, source: CallerSource | None, transport: str
) -> HandlerResult:
    decided = decision_of(ctx)
    if decided is None and source is not None and needs_caller(ctx.method):
        decided = await blocking.run(_decide, source, ctx.method, ctx.params, transport)
    if isinstance(decided, Refusal):
        return _refused(ctx, decided)
    allowed = decided
    boundary = allowed.principal.library_ids if allowed is not None else None
    with decision.acting_as(allowed), library_boundary(boundary):
        result = await call_next(ctx)
    if ctx.method == "tools/list" and allowed is not None and isinstance(result, dict):
        # Without a caller the whole surface is listed; with one, only what it may call.
        principal = allowed.principal
        result["tools"] = [tool for tool in result.get("tools", []) if _may_call(principal, tool.get("name"))]
    modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
    if ctx.method == "resources/read" and modern and isinstance(result, dict) and "contents" in result:
        # The hint for what was read (cache_hints.py); the fields exist from 2026-07-28 on.
        result = cache_hints.stamp_resource(result, str((ctx.params or {}).get("uri", "")))
    return result


def _decide(source: CallerSource, method: str, params: Any, transport: str) -> Allowed | Refusal:
    """For a transport without a gate (stdio): who is calling now, and whether it may."""
    found = source()
    if isinstance(found, Refusal):
        return found
    return decision.check_call(found, asked_of(method, params), transport=transport)


def _may_call(principal: Principal, name: object) -> bool:
    spec = catalog.spec_named(name) if isinstance(name, str) else None
    return spec is not None and decision.may_call(principal, spec)


def _refused(ctx: ServerRequestContext[Any, Any], refusal: Refusal) -> HandlerResult:
    """A refusal as the protocol answers it: an unknown tool is invalid params; a uid the caller
    cannot see, or a library it may not change, is the tool's error; the rest (a transport
    without HTTP statuses) an invalid request naming the reason."""
    if refusal.unknown_tool:
        raise MCPError(INVALID_PARAMS, refusal.message)
    if ctx.method == "tools/call" and refusal.http_status is None:
        text = f"Error executing tool {refusal.tool}: {refusal.message}"
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
    raise MCPError(INVALID_REQUEST, refusal.message)


async def run_tool(
    ctx: Context, spec: ToolSpec, sent: dict[str, Any]
) -> CallToolResult | InputRequiredResult:
    """An MCP tools/call, through the one tool-call path (a deletion confirmed by the person first,
    when the client can ask: confirmations.py)."""
    allowed = decision.current()
    if allowed is None or allowed.spec is not spec:
        raise MCPError(INVALID_REQUEST, "this tool call has no caller")
    instead = await confirmations.gate(ctx, allowed.principal, spec, sent)
    if instead is not None:
        return instead
    headers = ctx.headers or {}
    call = ToolCall(
        allowed=allowed,
        spec=spec,
        arguments=sent,
        approval_id=headers.get(APPROVAL_HEADER) or None,
        nonce=headers.get(NONCE_HEADER) or None,
        timestamp=headers.get(TIMESTAMP_HEADER) or None,
    )
    try:
        answer = await blocking.run_cancellable(tool_calls.execute, call)
    except tool_calls.InvalidToolArguments as exc:
        raise MCPError(INVALID_PARAMS, str(exc)) from None
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
    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Context[Any, Any] | None = None
    ) -> GetPromptResult | InputRequiredResult:
        # Invalid params, named, rather than the SDK's generic error for an unknown prompt or argument.
        prompt = next((p for p in await self.list_prompts() if p.name == name), None)
        if prompt is None:
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {clip(name)}")
        missing = [a.name for a in prompt.arguments or [] if a.required and a.name not in (arguments or {})]
        if missing:
            raise MCPError(
                INVALID_PARAMS, f"Missing required arguments for prompt {name}: {', '.join(missing)}"
            )
        return await super().get_prompt(name, arguments, context)

    async def read_resource(
        self, uri: Any, context: Context[Any, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        # A page picture carries its size in points, which the SDK's templates cannot say per page.
        page = resources.page_reference(str(uri))
        if page is not None:
            return [await anyio.to_thread.run_sync(resources.page_contents, *page)]
        return await super().read_resource(uri, context)

    async def list_resources(self) -> list[Resource]:
        fixed = await super().list_resources()
        # library_resources reads as resources do: on a worker thread, bracketed (resources._reading).
        return fixed + await anyio.to_thread.run_sync(resources.library_resources)


def _request_state_key() -> bytes:
    return salted_hmac("mnemosyne.request_state", "", algorithm="sha256").digest()


def build_server(*, caller_source: CallerSource | None = None, transport: str = "http") -> MnemosyneServer:
    """The MCP server; `caller_source` resolves the caller of a transport without an HTTP gate."""
    server = MnemosyneServer(
        name=SERVER_NAME,
        title="Mnemosyne",
        version=SERVER_VERSION,
        instructions=INSTRUCTIONS,
        tools=[
            sdk.mcp_tool(spec, run_tool, evidence_app.tool_meta(spec.name)) for spec in catalog.TOOL_SPECS
        ],
        middleware=[caller_middleware(caller_source, transport), legacy_tasks.middleware],
        extensions=[evidence_app.extension(), mcp_tasks.Tasks()],
        cache_hints=cache_hints.BY_METHOD,
        # Sealed with a key every worker shares (any worker answers a stateless retry).
        request_state_security=RequestStateSecurity(keys=[_request_state_key()], audience=SERVER_NAME),
    )
    resources.register(server)
    prompts.register(server)
    completions.register(server)
    client_logging.install(server)
    return server
