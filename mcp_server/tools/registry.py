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
  Django does around a request.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
from django.db import close_old_connections
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, ValidationError

from mcp_server import client_logging
from mcp_server.cursors import InvalidCursor
from mcp_server.metrics import TOOL_DURATION, TOOL_INVOCATIONS
from mnemosyne.graph import GraphError
from mnemosyne.library.errors import LibraryError
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


def _run(spec: ToolSpec, kwargs: dict[str, Any]) -> _Answer:
    """The tool, its text and its attachments: all in a worker thread, where the ORM may run."""
    close_old_connections()
    try:
        result = spec.fn(**kwargs)
        attachments = spec.attachments(result) if spec.attachments else []
        return _Answer(result, spec.render(result), attachments)
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
        close_old_connections()


def _instrumented(spec: ToolSpec) -> Callable[..., Any]:
    async def call(ctx: Context, **kwargs: Any) -> CallToolResult:
        started = time.perf_counter()
        status = "error"
        try:
            answer = await anyio.to_thread.run_sync(functools.partial(_run, spec, kwargs))
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
        meta = _elapsed(started)
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
