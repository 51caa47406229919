"""Turning plain typed functions into MCP tools with our house rules.

- arguments are a pydantic model with extra="forbid": unknown arguments are
  refused with an invalid-params error that names them (the schema says
  additionalProperties: false);
- results are a pydantic model (structuredContent, with an outputSchema) plus a
  short text rendering for clients that only show text;
- a LibraryError (unknown uid, bad value) becomes a tool error with its message;
- every call is counted and timed, and the thread's database connection is
  recycled the way Django does around a request.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import close_old_connections
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, ValidationError

from mcp_server.cursors import InvalidCursor
from mcp_server.metrics import TOOL_DURATION, TOOL_INVOCATIONS
from mnemosyne.library.errors import LibraryError
from mnemosyne.storage import StorageError

logger = logging.getLogger(__name__)

TOOLS_VERSION = "1.0"

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
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


def _instrumented(spec: ToolSpec) -> Callable[..., CallToolResult]:
    @functools.wraps(spec.fn)
    def call(**kwargs: Any) -> CallToolResult:
        started = time.perf_counter()
        status = "error"
        close_old_connections()
        try:
            result = spec.fn(**kwargs)
            status = "ok"
        except InvalidCursor as exc:
            raise MCPError(INVALID_PARAMS, f"Invalid arguments for tool {spec.name}: cursor: {exc}") from None
        except LibraryError as exc:
            raise ToolError(str(exc)) from exc
        except StorageError:
            logger.exception("chunk store failure in tool %s", spec.name)
            raise ToolError("the chunk store is unavailable right now; try again shortly") from None
        finally:
            elapsed = time.perf_counter() - started
            TOOL_INVOCATIONS.labels(tool=spec.name, status=status).inc()
            TOOL_DURATION.labels(tool=spec.name).observe(elapsed)
            close_old_connections()
        return CallToolResult(
            content=[
                TextContent(type="text", text=spec.render(result)),
                *(spec.attachments(result) if spec.attachments else []),
            ],
            structured_content=result.model_dump(mode="json"),
            _meta={"elapsed_ms": round(elapsed * 1000, 2)},
        )

    return call


def build_tool(spec: ToolSpec) -> Tool:
    tool = Tool.from_function(
        _instrumented(spec),
        name=spec.name,
        title=spec.title,
        description=spec.description,
        annotations=spec.annotations,
        meta={"version": TOOLS_VERSION},
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
    return tool
