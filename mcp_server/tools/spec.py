"""What a tool is: strict arguments, a handler given the caller, a typed result and its rendering.

Every tool's arguments are a pydantic model (`Arguments`) in strict mode with unknown arguments
forbidden: "no" is not false, true is not 1, 1.5 is not an integer. A description on every field
(a test checks) becomes the JSON schema clients see. The handler is `handler(caller, args)`, or
`handler(caller, args, page)` for a tool that pages (the registry decodes and checks its cursor).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.types import ImageContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
# Writes that replace or remove what is there, and that a repeated identical call does not repeat.
DESTRUCTIVE_IDEMPOTENT_WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)


class Arguments(BaseModel):
    """Base of every tool's arguments: strict types, unknown arguments refused."""

    model_config = ConfigDict(strict=True, extra="forbid")


class ArgumentError(Exception):
    """Arguments the schema accepts but the tool cannot (e.g. both of two alternatives): invalid params."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    arguments: type[Arguments]
    result: type[BaseModel]
    # handler(caller, args) -> result, or handler(caller, args, page) when `pages`.
    handler: Callable[..., BaseModel]
    render: Callable[[Any], str]
    # Content blocks beyond the text rendering, e.g. the image of an image chunk.
    attachments: Callable[[Any], list[ImageContent]] | None = None
    annotations: ToolAnnotations = field(default_factory=lambda: READ_ONLY.model_copy())
    # Changes the libraries: access control asks for the write scope by this flag.
    writes: bool = False
    # Takes `cursor` and returns `next_cursor`; the registry decodes one and signs the other.
    pages: bool = False
    # Raised when the tool's arguments or result change shape.
    version: str = "1.0"

    @functools.cached_property
    def input_schema(self) -> dict[str, Any]:
        return self.arguments.model_json_schema(by_alias=True)

    @functools.cached_property
    def output_schema(self) -> dict[str, Any]:
        return self.result.model_json_schema(by_alias=True)
