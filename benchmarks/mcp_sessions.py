"""One light MCP client for every server the peers part measures: JSON-RPC over streamable HTTP with
httpx, a session when the server hands one out (FastMCP servers do; Mnemosyne's stateless endpoint
does not), answers as JSON or as server-sent events.

The load generator runs on the same two cores as the servers, so it is kept lean: no SDK session
machinery, no schema validation — the same cost for every server measured.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from benchmarks.load_results import LoadRun

PROTOCOL_VERSION = "2025-06-18"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
TIMEOUT_SECONDS = 120


def sse_payload(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a streamable-HTTP response (JSON, or the last SSE data line)."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return dict(response.json())
    data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    if not data:
        raise RuntimeError(f"no data line in the MCP response: {response.text[:500]!r}")
    return dict(json.loads(data[-1]))


class ToolFailed(RuntimeError):
    pass


def _initialize() -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mnemosyne-bench", "version": "1"},
            },
        }
    ).encode()


def call_body(tool: str, arguments: dict[str, Any], identifier: int) -> bytes:
    """A tools/call request's JSON-RPC body."""
    body = {
        "jsonrpc": "2.0",
        "id": identifier,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    return json.dumps(body).encode()


def _result(response: httpx.Response) -> dict[str, Any]:
    if response.status_code != 200:
        raise ToolFailed(f"HTTP {response.status_code}: {response.text[:160]}")
    message = sse_payload(response)
    result = message.get("result")
    if not isinstance(result, dict):
        raise ToolFailed(f"no result: {json.dumps(message)[:160]}")
    if result.get("isError"):
        raise ToolFailed(f"tool error: {json.dumps(result.get('content'))[:160]}")
    return result


class Session:
    """A client's session on one server (synchronous: loading and quality runs)."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._client = httpx.Client(headers=HEADERS, timeout=TIMEOUT_SECONDS)
        self._ids = itertools.count(1)
        response = self._client.post(url, content=_initialize())
        response.raise_for_status()
        if session := response.headers.get("mcp-session-id"):
            self._client.headers["mcp-session-id"] = session
        self._client.post(url, content=b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return _result(self._client.post(self._url, content=call_body(tool, arguments, next(self._ids))))

    def close(self) -> None:
        self._client.close()


async def drive(
    url: str,
    tool: str,
    arguments: Callable[[str], dict[str, Any]],
    queries: Sequence[str],
    *,
    clients: int,
    seconds: float,
    label: str,
) -> LoadRun:
    """`clients` sessions calling `tool` back to back for `seconds` (a closed loop), each query the
    next of a shuffled cycle."""
    run = LoadRun(label=label, workers=1, clients=clients, seconds=seconds)
    order = itertools.cycle(random.Random(clients).sample(list(queries), len(queries)))
    # A connection of its own for each client, as separate MCP clients have: one pool shared by
    # hundreds of connections spends the load generator's time on the pool (its latency, not the
    # server's, grew with the clients).
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    async with contextlib.AsyncExitStack() as stack:
        own = [
            await stack.enter_async_context(
                httpx.AsyncClient(headers=HEADERS, timeout=TIMEOUT_SECONDS, limits=limits)
            )
            for _ in range(clients)
        ]

        async def session_headers(client: httpx.AsyncClient) -> dict[str, str]:
            response = await client.post(url, content=_initialize())
            response.raise_for_status()
            session = response.headers.get("mcp-session-id")
            headers = {"mcp-session-id": session} if session else {}
            await client.post(
                url, content=b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', headers=headers
            )
            return headers

        sessions = await asyncio.gather(*(session_headers(client) for client in own))
        end = time.monotonic() + seconds

        async def one_client(client: httpx.AsyncClient, headers: dict[str, str]) -> None:
            for identifier in itertools.count(1):
                if time.monotonic() >= end:
                    return
                started = time.perf_counter()
                try:
                    response = await client.post(
                        url, content=call_body(tool, arguments(next(order)), identifier), headers=headers
                    )
                    if response.status_code == 503 and "retry-after" in response.headers:
                        # Shed (or the database down): told at once; a polite client waits, then calls again.
                        run.shed_ms.append((time.perf_counter() - started) * 1000)
                        await asyncio.sleep(float(response.headers["retry-after"]))
                        continue
                    _result(response)
                except (httpx.HTTPError, ValueError, RuntimeError) as exc:
                    failure = f"{type(exc).__name__}: {str(exc)[:120]}"
                    run.errors += 1
                    run.error_kinds[failure] = run.error_kinds.get(failure, 0) + 1
                else:
                    run.latencies_ms.append((time.perf_counter() - started) * 1000)

        started = time.monotonic()
        await asyncio.gather(
            *(one_client(client, headers) for client, headers in zip(own, sessions, strict=True))
        )
        run.seconds = time.monotonic() - started
    return run
