"""Turning plain typed functions into MCP tools with our house rules.

- arguments are a pydantic model with extra="forbid": unknown arguments are
  refused with an invalid-params error that names them (the schema says
  additionalProperties: false);
- results are a pydantic model (structuredContent, with an outputSchema) plus a
  short text rendering for clients that only show text;
- a LibraryError (unknown uid, bad value) becomes a tool error with its message;
- every result carries the elapsed milliseconds in `_meta`, every tool its
  version (and whether it writes) in its own `_meta`;
- every call is counted and timed, logged to the client (notifications/message,
  see client_logging), and the thread's database connection is recycled the way
  Django does around a request;
- the caller is identified again from the Authorization header (principals.identify:
  one indexed query for our tokens, a cached-key signature check for a JWT) in the
  worker thread, so the tool reads only inside the caller's libraries
  (selectors.library_boundary), and every write-tool call leaves an audit row
  naming the caller (token owner or "jwt:<sub>") with its outcome.
"""

from __future__ import annotations

import functools
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
from django.conf import settings
from django.db import close_old_connections
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, ValidationError

from mcp_server import client_logging, principals, services, tokens
from mcp_server.cursors import InvalidCursor
from mcp_server.metrics import AUTH_FAILURES, TOOL_DURATION, TOOL_INVOCATIONS
from mcp_server.models import MCPToken
from mcp_server.principals import Principal
from mnemosyne.graph import GraphError
from mnemosyne.library import selectors
from mnemosyne.library.errors import LibraryError, NotFound
from mnemosyne.library.models import Chunk, Item
from mnemosyne.library.selectors import library_boundary
from mnemosyne.storage import StorageError

logger = logging.getLogger(__name__)

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
# Writes that replace or remove what is there, and that a repeated identical call does not repeat.
DESTRUCTIVE_IDEMPOTENT_WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)


def describe_validation_error(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        if error["type"] == "extra_forbidden":
            problems.append(f"{field}: unknown argument")
        elif error["type"] == "missing":
            problems.append(f"{field}: required argument missing")
        else:
            problems.append(f"{field}: {error['msg']}")
    return "; ".join(problems)


class StrictFuncMetadata(FuncMetadata):
    """Argument validation whose failures are JSON-RPC invalid-params errors naming the field."""

    tool_name: str = ""

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        try:
            return super().validate_arguments(arguments_to_validate)
        except ValidationError as exc:
            raise MCPError(
                INVALID_PARAMS,
                f"Invalid arguments for tool {self.tool_name}: {describe_validation_error(exc)}",
            ) from None


@dataclass(frozen=True)
class ToolSpec:
    fn: Callable[..., BaseModel]
    name: str
    title: str
    description: str
    render: Callable[[Any], str]
    # Content blocks beyond the text rendering, e.g. the image of an image chunk.
    attachments: Callable[[Any], list[ImageContent]] | None = None
    annotations: ToolAnnotations = field(default_factory=lambda: READ_ONLY.model_copy())
    # Changes the libraries: access control can ask a token for a write scope by this flag.
    writes: bool = False
    # Raised when the tool's arguments or result change shape.
    version: str = "1.0"


class ArgumentError(Exception):
    """Arguments the schema accepts but the tool cannot (e.g. both of two alternatives): invalid params."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")


class _Failure(Exception):
    """A refused call: becomes a tool result with isError and the message."""


@dataclass(frozen=True)
class _Answer:
    result: BaseModel
    text: str
    attachments: list[ImageContent]
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Signing:
    """What a signed result needs from the request: the arguments as sent, nonce and timestamp."""

    arguments: dict[str, Any]
    nonce: str | None
    timestamp: str | None


def _caller(raw_token: str | None) -> Principal | None:
    """The caller (the HTTP middleware has checked it); refuses when one is needed and gone."""
    if raw_token is None and not settings.MCP_REQUIRE_AUTH:
        return None
    principal = principals.identify(raw_token).principal
    if principal is None and settings.MCP_REQUIRE_AUTH:
        raise _Failure("the bearer token is no longer valid")
    return principal


def _run(
    spec: ToolSpec,
    kwargs: dict[str, Any],
    raw_token: str | None = None,
    approval_id: str | None = None,
    signing: _Signing | None = None,
) -> _Answer:
    """The tool, its text and its attachments: all in a worker thread, where the ORM may run."""
    close_old_connections()
    caller = None
    outcome = "error"
    try:
        caller = _caller(raw_token)
        token = caller.token if caller is not None else None
        with library_boundary(caller.library_boundary() if caller is not None else None):
            _check_uids_visible(kwargs)
            _check_approval(spec.name, caller, kwargs, approval_id)
            nonce, timestamp = _check_nonce(token, signing)
            result = spec.fn(**kwargs)
            attachments = spec.attachments(result) if spec.attachments else []
            meta = {}
            if token is not None and token.sign_results and signing is not None:
                meta[tokens.SIGNATURE_META_KEY] = tokens.signature_block(
                    key=token.digest,
                    tool=spec.name,
                    arguments=signing.arguments,
                    result=result.model_dump(mode="json"),
                    nonce=nonce,
                    timestamp=timestamp,
                )
            answer = _Answer(result, spec.render(result), attachments, meta)
        outcome = "ok"
        return answer
    except InvalidCursor as exc:
        raise MCPError(INVALID_PARAMS, f"Invalid arguments for tool {spec.name}: cursor: {exc}") from None
    except ArgumentError as exc:
        raise MCPError(INVALID_PARAMS, f"Invalid arguments for tool {spec.name}: {exc}") from None
    except LibraryError as exc:
        raise _Failure(str(exc)) from exc
    except StorageError:
        logger.exception("chunk store failure in tool %s", spec.name)
        raise _Failure("the chunk store is unavailable right now; try again shortly") from None
    except GraphError:
        logger.exception("graph store failure in tool %s", spec.name)
        raise _Failure("the concept graph is unavailable right now; try again shortly") from None
    finally:
        if spec.writes:
            _audit_write(caller, spec.name, outcome, kwargs)
        close_old_connections()


APPROVAL_HEADER = "mcp-approval-id"
NONCE_HEADER = "mcp-request-nonce"
TIMESTAMP_HEADER = "mcp-request-timestamp"


def _check_nonce(token: MCPToken | None, signing: _Signing | None) -> tuple[str, int]:
    """The nonce and timestamp a signed result carries: the request's (checked), else fresh ones."""
    now = int(time.time())
    if token is None or not token.sign_results or signing is None or not signing.nonce:
        return secrets.token_hex(16), now
    try:
        timestamp = int(signing.timestamp or "")
    except ValueError:
        raise _Failure("Mcp-Request-Timestamp must be Unix seconds when Mcp-Request-Nonce is sent") from None
    if not tokens.timestamp_is_fresh(timestamp, now):
        raise _Failure("the request timestamp is more than five minutes off the server's clock")
    if len(signing.nonce) > 128 or not services.remember_nonce(token=token, nonce=signing.nonce):
        raise _Failure("this nonce was already used in the last five minutes (or is over 128 characters)")
    return signing.nonce, timestamp


def _check_approval(
    tool: str, caller: Principal | None, kwargs: dict[str, Any], approval_id: str | None
) -> None:
    """A tool in MCP_APPROVAL_REQUIRED_TOOLS runs only on an approved request for this very call, once.

    The approval belongs to the caller who asked: the same token, or the same JWT subject.
    """
    if tool not in getattr(settings, "MCP_APPROVAL_REQUIRED_TOOLS", []):
        return
    token = caller.token if caller is not None else None
    subject = caller.subject if caller is not None else ""
    if approval_id and services.use_approval(
        uid=approval_id, token=token, subject=subject, tool=tool, arguments=kwargs
    ):
        return
    AUTH_FAILURES.labels(reason=services.AuthFailure.APPROVAL_PENDING.value).inc()
    if approval_id:
        raise _Failure(
            f"approval {approval_id!r} is not an approved, unused approval of this call "
            "(same token, tool and arguments); call without it to ask again"
        )
    request = services.request_approval(token=token, subject=subject, tool=tool, arguments=kwargs)
    raise _Failure(
        f"{tool} needs an administrator's approval: request {request.uid} is pending. Once it is "
        f"approved, call again with the same arguments and the HTTP header Mcp-Approval-Id: "
        f"{request.uid} (it works once)."
    )


def _check_uids_visible(kwargs: dict[str, Any]) -> None:
    """Every uid argument must lie inside the caller's libraries: outside is the same as missing.

    The tools' own lookups honour the boundary too; this check also covers writes (delete_item)
    whose service looks the item up itself.
    """
    if selectors.visible_library_ids() is None:
        return
    for argument, kind, queryset in (
        ("library_uid", "library", None),
        ("collection_uid", "collection", None),
        ("item_uid", "item", selectors.within_boundary(Item.objects.all(), "collection__library_id")),
        ("chunk_uid", "chunk", selectors.within_boundary(Chunk.objects.all(), "library_id")),
    ):
        uid = kwargs.get(argument)
        if not isinstance(uid, str):
            continue
        if kind == "library":
            selectors.get_library(uid)
        elif kind == "collection":
            selectors.get_collection(uid)
        elif queryset is not None and not queryset.filter(uid=uid).exists():
            raise NotFound(kind, uid)


def _audit_write(caller: Principal | None, tool: str, outcome: str, kwargs: dict[str, Any]) -> None:
    try:
        services.record_write_call(
            token=caller.token if caller is not None else None,
            actor=caller.actor if caller is not None else None,
            tool=tool,
            outcome=outcome,
            arguments=kwargs,
        )
    except Exception:
        logger.exception("could not record the audit row for %s", tool)


def _header(ctx: Context, name: str) -> str | None:
    headers = ctx.headers if ctx._request_context is not None else None
    return (headers or {}).get(name) or None


def _signing(ctx: Context) -> _Signing | None:
    if ctx._request_context is None:
        return None
    params = ctx.request_context.params or {}
    sent = params.get("arguments") if isinstance(params, Mapping) else None
    return _Signing(
        arguments=dict(sent or {}),
        nonce=_header(ctx, NONCE_HEADER),
        timestamp=_header(ctx, TIMESTAMP_HEADER),
    )


def _bearer(ctx: Context) -> str | None:
    value = _header(ctx, "authorization") or ""
    scheme, _, raw = value.partition(" ")
    return raw.strip() or None if scheme.lower() == "bearer" else None


def _instrumented(spec: ToolSpec) -> Callable[..., Any]:
    async def call(ctx: Context, **kwargs: Any) -> CallToolResult:
        started = time.perf_counter()
        status = "error"
        try:
            answer = await anyio.to_thread.run_sync(
                functools.partial(
                    _run, spec, kwargs, _bearer(ctx), _header(ctx, APPROVAL_HEADER), _signing(ctx)
                )
            )
            status = "ok"
        except _Failure as exc:
            message = f"Error executing tool {spec.name}: {exc}"
            await client_logging.emit(ctx, "warning", message)
            return CallToolResult(
                content=[TextContent(type="text", text=message)], is_error=True, _meta=_elapsed(started)
            )
        finally:
            TOOL_INVOCATIONS.labels(tool=spec.name, status=status).inc()
            TOOL_DURATION.labels(tool=spec.name).observe(time.perf_counter() - started)
        meta = {**_elapsed(started), **answer.meta}
        await client_logging.emit(ctx, "info", f"{spec.name} answered in {meta['elapsed_ms']} ms")
        summary = answer.text.splitlines()[0] if answer.text else ""
        await client_logging.emit(ctx, "debug", f"{spec.name}: {summary}")
        return CallToolResult(
            content=[TextContent(type="text", text=answer.text), *answer.attachments],
            structured_content=answer.result.model_dump(mode="json"),
            _meta=meta,
        )

    return call


def _elapsed(started: float) -> dict[str, Any]:
    return {"elapsed_ms": round((time.perf_counter() - started) * 1000, 2)}


def build_tool(spec: ToolSpec) -> Tool:
    # Arguments and the output schema come from the plain function; the call goes through the wrapper.
    tool = Tool.from_function(
        spec.fn,
        name=spec.name,
        title=spec.title,
        description=spec.description,
        annotations=spec.annotations,
        meta={"version": spec.version, "writes": spec.writes},
        structured_output=True,
    )
    loose = tool.fn_metadata.arg_model
    strict: type[ArgModelBase] = type(
        f"{spec.name}_arguments",
        (loose,),
        {"model_config": ConfigDict(extra="forbid", arbitrary_types_allowed=True), "__module__": __name__},
    )
    tool.fn_metadata = StrictFuncMetadata(
        arg_model=strict,
        output_schema=tool.fn_metadata.output_schema,
        output_model=tool.fn_metadata.output_model,
        wrap_output=tool.fn_metadata.wrap_output,
        tool_name=spec.name,
    )
    tool.parameters = strict.model_json_schema(by_alias=True)
    tool.fn = _instrumented(spec)
    tool.is_async = True
    tool.context_kwarg = "ctx"
    return tool
