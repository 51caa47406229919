"""Talking to the server under test: the official MCP client, and raw JSON-RPC over HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import httpx
import httpx2
from mcp import ClientSession
from mcp.client.session import LoggingFnT
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.mcp_server import in_process

T = TypeVar("T")
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
# A 2026-07-28 client's capabilities that declare the Tasks extension.
TASKS: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


@contextlib.asynccontextmanager
async def mcp_session(
    base: str, token: str | None, transport: str, *, logging_callback: LoggingFnT | None = None
) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if transport == "streamable-http":
        async with (
            _http_client(base, headers) as http,
            streamable_http_client(f"{base}/mcp/", http_client=http) as streams,
            ClientSession(streams[0], streams[1], logging_callback=logging_callback) as session,
        ):
            await session.initialize()
            yield session
    else:
        async with (
            sse_client(f"{base}/mcp/sse/", headers=headers, timeout=30) as streams,
            ClientSession(streams[0], streams[1], logging_callback=logging_callback) as session,
        ):
            await session.initialize()
            yield session


def _http_client(
    base: str, headers: dict[str, str]
) -> contextlib.AbstractAsyncContextManager[httpx2.AsyncClient]:
    """A client for the server at `base`; for in_process.BASE, one the app answers in-process."""
    if base == in_process.BASE:
        return in_process.asgi_http2(headers)
    return httpx2.AsyncClient(headers=headers, timeout=30)


def call_all(base: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Each call's result, or the MCPError it raised, in order, over one streamable HTTP session."""

    async def scenario() -> list[Any]:
        out: list[Any] = []
        async with mcp_session(base, token, "streamable-http") as session:
            for name, arguments in calls:
                try:
                    out.append(await session.call_tool(name, arguments))
                except MCPError as exc:
                    out.append(exc)
        return out

    return run(scenario)


def run(scenario: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(asyncio.wait_for(scenario(), timeout=120))


def rpc(method: str, params: dict[str, Any] | None = None, id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}}


def modern(
    method: str, params: dict[str, Any], name: str | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2026-07-28 request: no initialize; the version and capabilities ride in every request."""
    meta = {
        **params.get("_meta", {}),
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    }
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return rpc(method, {**params, "_meta": meta}), headers


def post(
    base: str, body: Any, token: str | None = None, *, headers: dict[str, str] | None = None
) -> httpx.Response:
    sent = {**JSON_HEADERS, **(headers or {})}
    if token:
        sent["Authorization"] = f"Bearer {token}"
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    if base == in_process.BASE:

        async def in_this_process() -> httpx.Response:
            async with in_process.asgi_client() as client:
                response = await client.post("/mcp/", content=content, headers=sent)
                await response.aread()
                return response

        return run(in_this_process)
    return httpx.post(f"{base}/mcp/", content=content, headers=sent, timeout=60)


def answer(
    method: str,
    params: dict[str, Any],
    token: str,
    base: str,
    version: str = LEGACY,
    capabilities: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One request's JSON-RPC answer over HTTP: on 2025-11-25 (named in its header), or as a
    2026-07-28 request whose `_meta` declares `capabilities` (TASKS by default)."""
    headers = {"MCP-Protocol-Version": version}
    if version == MODERN:
        headers["Mcp-Method"] = method
        if method == "tools/call":
            headers["Mcp-Name"] = params["name"]
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": TASKS if capabilities is None else capabilities,
        }
        params = {**params, "_meta": meta}
    return sse_payload(post(base, rpc(method, params), token, headers=headers))


def sse_payload(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response, whether it came as JSON or as one server-sent event."""
    if response.headers["content-type"].startswith("application/json"):
        return dict(response.json())
    data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    return dict(json.loads(data[-1]))
