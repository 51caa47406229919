"""Transports: stateless streamable HTTP on two workers, Host/Origin checks, body limits, versions."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcp_server.tools.catalog import TOOL_SPECS
from mnemosyne.library.models import Chunk, Collection, Library
from tests.mcp_server.clients import mcp_session, modern, post, rpc, run, sse_payload

pytestmark = pytest.mark.django_db(transaction=True)


def initialize(version: str = "2025-11-25") -> dict[str, Any]:
    return rpc(
        "initialize",
        {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
    )


def test_a_foreign_origin_or_host_is_refused(live_server_url: str) -> None:
    port = live_server_url.rsplit(":", 1)[1]
    foreign = post(live_server_url, initialize(), headers={"Origin": "http://evil.example.com"})
    assert foreign.status_code == 403 and "Origin" in foreign.text
    rebound = post(live_server_url, initialize(), headers={"Host": "evil.example.com"})
    # Refused before anything answers (the SDK's own check answered 421 further in).
    assert rebound.status_code == 400 and "Host" in rebound.text
    local = post(live_server_url, initialize(), headers={"Origin": f"http://localhost:{port}"})
    assert local.status_code == 200


def test_configured_origins_replace_the_ones_derived_from_allowed_hosts(configured_server_url: str) -> None:
    port = configured_server_url.rsplit(":", 1)[1]
    allowed = post(configured_server_url, initialize(), headers={"Origin": "https://app.example.com"})
    assert allowed.status_code == 200
    refused = post(configured_server_url, initialize(), headers={"Origin": f"http://127.0.0.1:{port}"})
    assert refused.status_code == 403


def test_a_body_over_the_limit_is_refused_with_413(live_server_url: str, configured_server_url: str) -> None:
    padding = "x" * (4 * 1024 * 1024)
    body = rpc("tools/call", {"name": "search", "arguments": {"query": padding}})
    assert post(live_server_url, body).status_code == 413  # the SDK's default, 4 MiB
    smaller = rpc("tools/call", {"name": "search", "arguments": {"query": "x" * (1024 * 1024)}})
    assert post(configured_server_url, smaller).status_code == 413  # MCP_MAX_REQUEST_BODY_BYTES
    assert post(configured_server_url, initialize()).status_code == 200


def test_protocol_2025_11_25_is_negotiated_in_initialize(live_server_url: str) -> None:
    answer = sse_payload(post(live_server_url, initialize("2025-11-25")))
    result = answer["result"]
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"]["name"] == "mnemosyne"
    assert {"tools", "resources", "prompts", "completions", "logging"} <= set(result["capabilities"])


def test_protocol_2026_07_28_is_answered_statelessly(live_server_url: str, token: str) -> None:
    body, headers = modern("tools/list", {})
    listed = sse_payload(post(live_server_url, body, headers=headers))
    assert {tool["name"] for tool in listed["result"]["tools"]} == {spec.name for spec in TOOL_SPECS}

    body, headers = modern("tools/call", {"name": "list_libraries", "arguments": {}}, name="list_libraries")
    called = sse_payload(post(live_server_url, body, token, headers=headers))
    assert called["result"]["structuredContent"] == {"libraries": [], "next_cursor": None}
    assert called["result"]["_meta"]["elapsed_ms"] >= 0


def test_two_workers_answer_every_request_without_sticky_sessions(
    configured_server_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    library, collection = corpus

    async def one_client(number: int) -> list[Any]:
        # No keep-alive: every request is a new connection, so either worker may take it.
        limits = httpx2.Limits(max_keepalive_connections=0)
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60, limits=limits) as http,
            streamable_http_client(f"{configured_server_url}/mcp/", http_client=http) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            found = await session.call_tool("search", {"query": f"restore the database {number}", "limit": 3})
            items = await session.call_tool("list_items", {"collection_uid": collection.uid, "limit": 1})
            topics = await session.call_tool("list_topics", {"library_uid": library.uid})
            return [found, items, topics]

    async def scenario() -> list[list[Any]]:
        return list(await asyncio.gather(*(one_client(n) for n in range(6))))

    for found, items, topics in run(scenario):
        assert not found.is_error and found.structured_content["results"]
        assert items.structured_content["total"] == 3
        assert topics.structured_content["total_chunks"] == Chunk.objects.count() == 6


def test_a_cursor_minted_by_one_worker_is_honoured_by_any(
    configured_server_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    _, collection = corpus
    pages: list[list[str]] = []
    cursor = None
    for _ in range(4):
        arguments: dict[str, Any] = {"collection_uid": collection.uid, "limit": 1}
        if cursor:
            arguments["cursor"] = cursor
        answer = sse_payload(
            post(
                configured_server_url,
                rpc("tools/call", {"name": "list_items", "arguments": arguments}),
                token,
                headers={"Connection": "close"},
            )
        )
        page = answer["result"]["structuredContent"]
        pages.append([item["uid"] for item in page["items"]])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(pages) == 3 and len({uid for page in pages for uid in page}) == 3


def test_an_unknown_tool_is_the_specs_protocol_error_naming_it(live_server_url: str, token: str) -> None:
    async def scenario() -> MCPError:
        async with mcp_session(live_server_url, token, "streamable-http") as session:
            with pytest.raises(MCPError) as raised:
                await session.call_tool("summon_dragon", {})
            return raised.value

    error = run(scenario)
    assert error.error.code == -32602
    assert "Unknown tool: summon_dragon" in str(error)


def test_legacy_sse_serves_the_same_tools(live_server_url: str) -> None:
    async def scenario() -> set[str]:
        async with mcp_session(live_server_url, None, "sse") as session:
            return {tool.name for tool in (await session.list_tools()).tools}

    assert run(scenario) == {spec.name for spec in TOOL_SPECS}
