"""The gRPC ToolService: the same tools through the one tool-call path, in the seed's contract.

Parameters arrive as strings and are converted to each tool's types from its own JSON schema
(integers, numbers, booleans `true`/`false`, JSON arrays and objects; an empty string for an
optional parameter means "not given"); the converted arguments then pass the same strict
validation as every transport. `output` is the structured result as JSON. Errors in the seed's own
words: `success=false` with "Missing required parameter: query", "Tool 'x' not found", or the
argument error naming the parameter. The bearer token travels in `authorization` metadata; a
refusal is a gRPC status: UNAUTHENTICATED (no, or a bad, token), PERMISSION_DENIED (scope or
whitelist), RESOURCE_EXHAUSTED (rate limits).
"""

from __future__ import annotations

import json
from typing import Any

import grpc

from mcp_server import blocking, tool_calls
from mcp_server.auth import access
from mcp_server.auth.access import Admission, Refusal
from mcp_server.auth.credentials import AuthFailure
from mcp_server.tools import catalog
from mcp_server.tools.spec import ToolSpec
from mcp_server.transports.grpc_api import tool_service_pb2 as pb
from mcp_server.transports.grpc_api import tool_service_pb2_grpc as pb_grpc

TRANSPORT = "grpc"

_STATUS = {
    AuthFailure.FORBIDDEN_TOOL: grpc.StatusCode.PERMISSION_DENIED,
    AuthFailure.INSUFFICIENT_SCOPE: grpc.StatusCode.PERMISSION_DENIED,
    AuthFailure.RATE_LIMITED: grpc.StatusCode.RESOURCE_EXHAUSTED,
    AuthFailure.TOOL_RATE_LIMITED: grpc.StatusCode.RESOURCE_EXHAUSTED,
    AuthFailure.THROTTLED: grpc.StatusCode.RESOURCE_EXHAUSTED,
}


class ParameterError(ValueError):
    """A parameter that cannot be converted to its tool's type; the message names it."""


class ToolService(pb_grpc.ToolServiceServicer):
    def ListTools(self, request: pb.Empty, context: grpc.ServicerContext) -> pb.ToolList:
        credential = _bearer(context)
        decided = blocking.bracketed(
            access.decide, credential, lists_tools=True, transport=TRANSPORT, address=context.peer()
        )
        if isinstance(decided, Refusal):
            _abort(context, decided)
        principal = decided.principal if isinstance(decided, Admission) else None
        tools = [
            pb.Tool(name=spec.name, description=spec.description, parameters=_parameters(spec))
            for spec in catalog.TOOL_SPECS
            if principal is None or access.authorize_tool(principal, spec.name, spec) is None
        ]
        return pb.ToolList(tools=tools)

    def CallTool(self, request: pb.CallToolRequest, context: grpc.ServicerContext) -> pb.CallToolResponse:
        spec = catalog.spec_named(request.toolName)
        if spec is None:
            return pb.CallToolResponse(
                success=False, message=f"Tool {tool_calls.clip(request.toolName)!r} not found"
            )
        decided = blocking.bracketed(
            access.decide, _bearer(context), tools=(spec.name,), transport=TRANSPORT, address=context.peer()
        )
        if isinstance(decided, Refusal):
            _abort(context, decided)
        assert isinstance(decided, Admission)
        try:
            arguments = convert(spec, dict(request.parameters))
        except ParameterError as exc:
            return pb.CallToolResponse(success=False, message=str(exc))
        call = tool_calls.ToolCall(
            principal=decided.principal,
            tool=spec.name,
            arguments=arguments,
            transport=TRANSPORT,
            admitted=decided.admitted,
        )
        try:
            answer = blocking.bracketed(tool_calls.execute, call)
        except tool_calls.InvalidToolArguments as exc:
            return pb.CallToolResponse(success=False, message=str(exc))
        except tool_calls.CallRefused as exc:
            _abort(context, exc.refusal)
        except blocking.Unavailable as exc:
            context.abort(grpc.StatusCode.UNAVAILABLE, exc.error.message)
        output = json.dumps(answer.structured, ensure_ascii=False) if answer.structured is not None else ""
        return pb.CallToolResponse(success=not answer.is_error, message=answer.text, output=output)


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
            raise ParameterError(f"{name}: {tool_calls.clip(raw, 50)!r} is not an integer") from None
    if kind == "number":
        try:
            return float(raw)
        except ValueError:
            raise ParameterError(f"{name}: {tool_calls.clip(raw, 50)!r} is not a number") from None
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
            scheme, _, token = value.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


def _abort(context: grpc.ServicerContext, refusal: Refusal) -> None:
    status = _STATUS.get(refusal.failure, grpc.StatusCode.UNAUTHENTICATED)
    if refusal.retry_after:
        context.set_trailing_metadata((("retry-after", str(refusal.retry_after)),))
    context.abort(status, refusal.message)
