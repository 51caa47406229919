"""The HTTP layer in front of the MCP transports: the body read once, parsed once, the caller asked once.

For each POST to an MCP endpoint, the gate reads the body (within the body limit applied outside
it) and parses it, answering a body that is not one well-formed JSON-RPC message itself
(envelope.py: HTTP 400 with -32700, -32600 or -32602), then:

- when the request calls tools or reads library content (resources, prompts, completions), or
  lists tools with a bearer token, it asks the one place that decides (access/decision.py), once —
  a refusal with an HTTP status is answered here as 401/403/429 (challenges), so a refused call
  never reaches the MCP server;
- it leaves the decision on the request (`request.state`), where the MCP handlers find it
  (server.caller_middleware): the caller, or a refusal answered inside the protocol;
- on streamable HTTP, a call that does work first takes one of the process's places
  (admission.py), queueing for one; a call that finds the queue full is answered 503 busy;
- on stateless streamable HTTP, it routes a request that carries a progress token to the streaming
  (SSE) session manager and the rest to the JSON-response one: a JSON answer skips the event
  stream's machinery (about 3 ms a call) and only requests that can be sent notifications need it.

The token is read from the Authorization header only (never the query string). Initialize, ping,
tools/list without a token, notifications and logging/setLevel need no caller.
MCP_REQUIRE_AUTH=false admits everyone as the local operator (or as the token it sends).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from django.conf import settings
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from access import decision
from access.credentials import bearer
from access.decision import Asked
from access.refusals import Refusal
from mcp_server.asked import asked_of
from mcp_server.server import DECISION_STATE
from mcp_server.transports import challenges, envelope, streams
from mcp_server.transports.admission import RETRY_AFTER_SECONDS, WORK_METHODS, Admission, Busy
from mnemosyne.lib import blocking, outages

_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.encode("ascii")


def client_address(scope: Scope) -> str:
    """The client's address as uvicorn reports it (behind a trusted proxy: X-Forwarded-For's)."""
    client = scope.get("client")
    return str(client[0]) if client else ""


class MCPGate:
    """Wraps an MCP transport app (`app`); for stateless streamable HTTP also its JSON-response twin."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        transport: str,
        json_app: ASGIApp | None = None,
        admission: Admission | None = None,
    ) -> None:
        self.app = app
        self.json_app = json_app
        self.transport = transport
        self.admission = admission

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            await self._stream(scope, receive, send)
            return
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        message = envelope.check(body)
        if isinstance(message, envelope.Rejected):
            await JSONResponse(message.payload(), status_code=400)(scope, receive, send)
            return
        if self.admission is None or message.get("method") not in WORK_METHODS:
            await self._post(scope, receive, send, body, message)
            return
        try:
            async with self.admission.place():
                await self._post(scope, receive, send, body, message)
        except Busy as exc:
            await busy(message, str(exc))(scope, receive, send)

    async def _post(
        self, scope: Scope, receive: Receive, send: Send, body: bytes, message: dict[str, Any]
    ) -> None:
        asked = asked_of(message.get("method"), message.get("params"))
        try:
            decided = await blocking.run(self._decide, scope, asked)
        except blocking.Unavailable as exc:
            await unavailable(message, exc.error.message)(scope, receive, send)
            return
        if isinstance(decided, Refusal) and decided.http_status is not None:
            metadata_url = challenges.resource_metadata_url(scope)
            await challenges.refusal_response(decided, metadata_url=metadata_url)(scope, receive, send)
            return
        if isinstance(decided, decision.Allowed):
            decided = dataclasses.replace(decided, base_url=challenges.public_base_url(scope))
        if decided is not None:
            scope.setdefault("state", {})[DECISION_STATE] = decided
        app = self.app
        if self.json_app is not None and _handshake_era(scope) and not wants_progress(message):
            app = self.json_app
        await app(scope, replay_body(body, receive), send)

    def _decide(self, scope: Scope, asked: Asked) -> decision.Allowed | Refusal | None:
        credential = bearer(Headers(scope=scope).get("authorization"))
        return decision.decide(credential, asked, transport=self.transport, address=client_address(scope))

    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A GET opens a server-sent event stream. Without a credential (listing tools needs none) it
        ends after MCP_STREAM_UNAUTHENTICATED_SECONDS; with one, the credential must be valid (401
        otherwise, counted against the address like any bad token), and the stream ends once it has
        carried nothing but keep-alive pings for MCP_STREAM_IDLE_SECONDS."""
        credential = bearer(Headers(scope=scope).get("authorization"))
        if credential is not None and settings.MCP_REQUIRE_AUTH:
            try:
                decided = await blocking.run(self._decide, scope, Asked(reads=True))
            except blocking.Unavailable as exc:
                await unavailable({}, exc.error.message)(scope, receive, send)
                return
            if isinstance(decided, Refusal):
                metadata_url = challenges.resource_metadata_url(scope)
                await challenges.refusal_response(decided, metadata_url=metadata_url)(scope, receive, send)
                return
        idle = settings.MCP_STREAM_IDLE_SECONDS
        lifetime = settings.MCP_STREAM_UNAUTHENTICATED_SECONDS if credential is None else 0
        await streams.bounded(self.app, scope, receive, send, idle_seconds=idle, lifetime_seconds=lifetime)


def unavailable(message: dict[str, Any], reason: str) -> JSONResponse:
    """503 with Retry-After and a JSON-RPC error naming what is down."""
    identifier = message.get("id")
    return JSONResponse(
        {"jsonrpc": "2.0", "id": identifier, "error": {"code": blocking.UNAVAILABLE, "message": reason}},
        status_code=503,
        headers={"Retry-After": str(outages.RETRY_AFTER_SECONDS)},
    )


def busy(message: dict[str, Any], reason: str) -> JSONResponse:
    """503 with Retry-After and a JSON-RPC error saying the server is busy (transports/admission.py)."""
    return JSONResponse(
        {
            "jsonrpc": "2.0",
            "id": message.get("id"),
            "error": {"code": blocking.UNAVAILABLE, "message": reason},
        },
        status_code=503,
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


def wants_progress(message: dict[str, Any]) -> bool:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and meta.get("progressToken") is not None


def _handshake_era(scope: Scope) -> bool:
    # 2026-07-28 requests take the SDK's own path, which answers JSON until a handler notifies.
    version = next((value for key, value in scope["headers"] if key == _VERSION_HEADER), None)
    return version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS


async def read_body(receive: Receive) -> bytes:
    # The body limit is enforced by the RequestBodyLimitMiddleware outside this one.
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def replay_body(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
