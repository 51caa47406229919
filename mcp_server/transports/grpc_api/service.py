"""The gRPC ToolService: the same tools through the one tool-call path, in the seed's contract.

Parameters arrive as strings and are converted to each tool's types from its own JSON schema
(integers, numbers, booleans `true`/`false`, JSON arrays and objects; an empty string for an
optional parameter means "not given"); the converted arguments then pass the same strict
validation as every transport. `output` is the structured result as JSON. Errors in the seed's own
words: `success=false` with "Missing required parameter: query", "Tool 'x' not found", or the
argument error naming the parameter. The bearer token travels in `authorization` metadata; each
call is decided once (access/decision.py) and a refusal answered as its gRPC status: UNAUTHENTICATED
(no, or a bad, token), PERMISSION_DENIED (scope or whitelist), RESOURCE_EXHAUSTED (rate limits);
an unknown tool, a uid the caller cannot see or a library it may not change is `success=false`.
"""

from __future__ import annotations

import json
from typing import Any

import grpc

from access import decision
from access.credentials import bearer
from access.decision import Allowed, Asked
from access.refusals import Refusal, clip
from mcp_server import tool_calls
from mcp_server.tools import catalog
from mcp_server.tools.spec import ToolSpec
from mcp_server.transports.grpc_api import tool_service_pb2 as pb
from mcp_server.transports.grpc_api import tool_service_pb2_grpc as pb_grpc
from mnemosyne.lib import blocking

TRANSPORT = "grpc"


class ParameterError(ValueError):
    """A parameter that cannot be converted to its tool's type; the message names it."""


class ToolService(pb_grpc.ToolServiceServicer):
    def ListTools(self, request: pb.Empty, context: grpc.ServicerContext) -> pb.ToolList:
        decided = self._decide(context, Asked(lists_tools=True))
        principal = decided.principal if isinstance(decided, Allowed) else None
        tools = [
            pb.Tool(name=spec.name, description=spec.description, parameters=_parameters(spec))
            for spec in catalog.TOOL_SPECS
            if principal is None or decision.may_call(principal, spec)
        ]
        return pb.ToolList(tools=tools)

    def CallTool(self, request: pb.CallToolRequest, context: grpc.ServicerContext) -> pb.CallToolResponse:
        spec = catalog.spec_named(request.toolName)
        sent = dict(request.parameters)
        decided = self._decide(context, Asked(tool=request.toolName, spec=spec, arguments=sent))
        if isinstance(decided, Refusal):
            if decided.unknown_tool:
                return pb.CallToolResponse(
                    success=False, message=f"Tool {clip(request.toolName)!r} not found"
                )
            return pb.CallToolResponse(
                success=False, message=f"Error executing tool {decided.tool}: {decided.message}"
            )
        assert isinstance(decided, Allowed) and spec is not None
        try:
            arguments = convert(spec, sent)
        except ParameterError as exc:
            return pb.CallToolResponse(success=False, message=str(exc))
        call = tool_calls.ToolCall(allowed=decided, spec=spec, arguments=arguments)
        try:
            answer = blocking.bracketed(tool_calls.execute, call)
        except tool_calls.InvalidToolArguments as exc:
            return pb.CallToolResponse(success=False, message=str(exc))
        except blocking.Unavailable as exc:
            context.abort(grpc.StatusCode.UNAVAILABLE, exc.error.message)
        output = json.dumps(answer.structured, ensure_ascii=False) if answer.structured is not None else ""
        return pb.CallToolResponse(success=not answer.is_error, message=answer.text, output=output)

    @staticmethod
    def _decide(context: grpc.ServicerContext, asked: Asked) -> Allowed | Refusal | None:
        """The one decision for this call; a refusal with a status aborts the call with it."""
        try:
            decided = blocking.bracketed(
                decision.decide, _bearer(context), asked, transport=TRANSPORT, address=context.peer()
            )
        except blocking.Unavailable as exc:
            context.abort(grpc.StatusCode.UNAVAILABLE, exc.error.message)
        if isinstance(decided, Refusal) and decided.grpc_status is not None:
            if decided.retry_after:
                context.set_trailing_metadata((("retry-after", str(decided.retry_after)),))
            context.abort(grpc.StatusCode[decided.grpc_status], decided.message)
        return decided


def convert(spec: ToolSpec, parameters: dict[str, str]) -> dict[str, Any]:
    """The tool's arguments from string parameters, by its input schema."""
    schema = spec.input_schema
    properties: dict[str, Any] = schema.get("properties", {})
    for name in schema.get("required", []):
        if parameters.get(name, "") == "":
            raise ParameterError(f"Missing required parameter: {name}")
    arguments: dict[str, Any] = {}
    for name, raw in parameters.items():
        if name not in properties:
            arguments[name] = raw  # refused by the tool's strict validation, by name
            continue
        if raw == "" and name not in schema.get("required", []):
            continue
        arguments[name] = _value(name, raw, properties[name])
    return arguments


def _value(name: str, raw: str, schema: dict[str, Any]) -> Any:
    kinds = [option.get("type") for option in schema.get("anyOf", [schema])]
    kinds = [kind for kind in kinds if kind not in (None, "null")]
    kind = kinds[0] if kinds else "string"
    if kind == "string":
        return raw
    if kind == "integer":
        try:
            return int(raw)
        except ValueError:
            raise ParameterError(f"{name}: {clip(raw, 50)!r} is not an integer") from None
    if kind == "number":
        try:
            return float(raw)
        except ValueError:
            raise ParameterError(f"{name}: {clip(raw, 50)!r} is not a number") from None
    if kind == "boolean":
        if raw.strip().lower() in ("true", "false"):
            return raw.strip().lower() == "true"
        raise ParameterError(f"{name}: must be true or false")
    try:
        return json.loads(raw)
    except ValueError:
        raise ParameterError(f"{name}: must be JSON (an {kind})") from None


def _parameters(spec: ToolSpec) -> dict[str, str]:
    schema = spec.input_schema
    required = set(schema.get("required", []))
    described = {}
    for name, prop in schema.get("properties", {}).items():
        kinds = [option.get("type") for option in prop.get("anyOf", [prop])]
        kind = "/".join(str(kind) for kind in kinds if kind not in (None, "null")) or "string"
        need = "required" if name in required else f"optional, default {json.dumps(prop.get('default'))}"
        described[name] = f"{kind}, {need}: {prop.get('description', '')}".strip()
    return described


def _bearer(context: grpc.ServicerContext) -> str | None:
    for key, value in context.invocation_metadata():
        if key.lower() == "authorization" and isinstance(value, str):
            return bearer(value)
    return None
