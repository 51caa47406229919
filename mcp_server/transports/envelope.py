"""The JSON-RPC envelope of a request body, checked before anything acts on it.

A body that is not JSON is a parse error (-32700); one that is not a single JSON-RPC 2.0 message —
null, a batch (MCP 2025-06-18 dropped batching), another `jsonrpc` version, no method, an id of
the wrong type, params that are not an object — is an invalid request (-32600). Params nested
deeper than MAX_DEPTH or holding a NUL character (which no PostgreSQL text or JSON value may
hold) are invalid params (-32602), named by their path. Each message is short: it names what is
wrong, never echoes the body.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mcp_types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR

# Deeper than any MCP request needs (a tool's arguments are a few levels deep).
MAX_DEPTH = 32
# A path to a bad value is cut to this many characters in a message.
MAX_PATH_CHARS = 120


@dataclass(frozen=True)
class Rejected:
    """Why a body is refused: a JSON-RPC error code and a short message; the id when one was read."""

    code: int
    message: str
    id: str | int | None = None

    def payload(self) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.message}}


def check(body: bytes) -> dict[str, Any] | Rejected:
    """The message the body holds, or why it is refused."""
    try:
        message: Any = json.loads(body)
    except RecursionError:
        return Rejected(INVALID_REQUEST, f"Invalid request: nested more than {MAX_DEPTH} levels deep")
    except (UnicodeDecodeError, ValueError):
        return Rejected(PARSE_ERROR, "Parse error: the body is not valid JSON")
    if isinstance(message, list):
        return Rejected(INVALID_REQUEST, "Invalid request: batches are not supported; send one message")
    if not isinstance(message, dict):
        return Rejected(INVALID_REQUEST, "Invalid request: a JSON-RPC message must be an object")
    identifier = message.get("id")
    known_id = identifier if isinstance(identifier, str | int) and not isinstance(identifier, bool) else None
    if message.get("jsonrpc") != "2.0":
        return Rejected(INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"', known_id)
    if "id" in message and known_id is None:
        return Rejected(INVALID_REQUEST, 'Invalid request: "id" must be a string or an integer')
    method = message.get("method")
    if method is None:
        if known_id is not None and ("result" in message or "error" in message):
            return message  # the client's answer to a request of the server's
        return Rejected(INVALID_REQUEST, 'Invalid request: "method" is missing', known_id)
    if not isinstance(method, str):
        return Rejected(INVALID_REQUEST, 'Invalid request: "method" must be a string', known_id)
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        return Rejected(INVALID_PARAMS, 'Invalid params: "params" must be an object', known_id)
    problem = _problem(params) if params is not None else None
    if problem is not None:
        return Rejected(INVALID_PARAMS, f"Invalid params: {problem}", known_id)
    return message


def _problem(params: dict[str, Any]) -> str | None:
    """What is wrong with params — too deep, or a NUL character — with the path to it."""
    stack: list[tuple[Any, str, int]] = [(params, "params", 1)]
    while stack:
        value, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"{_cut(path)} is nested more than {MAX_DEPTH} levels deep"
        if isinstance(value, str):
            if "\x00" in value:
                return f"{_cut(path)} contains a NUL character"
        elif isinstance(value, dict):
            for key, item in value.items():
                if "\x00" in key:
                    return f"a key in {_cut(path)} contains a NUL character"
                stack.append((item, f"{path}.{key}", depth + 1))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{index}]", depth + 1) for index, item in enumerate(value))
    return None


def _cut(path: str) -> str:
    return path if len(path) <= MAX_PATH_CHARS else path[: MAX_PATH_CHARS - 1] + "…"
