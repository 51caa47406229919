"""Every tool through the official MCP Python client, over real HTTP, against uvicorn."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from mcp.shared.exceptions import MCPError
from prometheus_client.parser import text_string_to_metric_families

from access.models import MCPToken
from access.services import create_token, revoke_token
from mcp_server.tools.catalog import TOOL_SPECS
from mnemosyne.library.models import Chunk, Collection, Library
from tests.mcp_server.clients import JSON_HEADERS, mcp_session, post, rpc, run, sse_payload

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = {spec.name for spec in TOOL_SPECS}


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_every_tool_works_through_the_official_client(
    live_server_url: str, corpus: tuple[Library, Collection], token: str, transport: str
) -> None:
    library, collection = corpus

    async def scenario() -> dict[str, Any]:
        async with mcp_session(live_server_url, token, transport) as session:
            tools = await session.list_tools()
            found = await session.call_tool(
                "search", {"query": "restore the database from a dump", "limit": 5}
            )
            hit = found.structured_content["results"][0]
            chunk = await session.call_tool("get_chunk", {"chunk_uid": hit["chunk_uid"]})
            libraries = await session.call_tool("list_libraries", {})
            collections = await session.call_tool("list_collections", {"library_uid": library.uid})
            items = await session.call_tool("list_items", {"collection_uid": collection.uid})
            return {
                "tools": {tool.name for tool in tools.tools},
                "search": found,
                "chunk": chunk,
                "libraries": libraries,
                "collections": collections,
                "items": items,
            }

    out = run(scenario)
    assert out["tools"] == TOOLS
    search = out["search"]
    assert not search.is_error
    hit = search.structured_content["results"][0]
    assert hit["item"]["title"] == "Backups"
    assert hit["library"] == {"uid": library.uid, "name": library.name}
    assert hit["collection"] == {"uid": collection.uid, "name": collection.name}
    assert "Restoring" in hit["section"]
    assert hit["page"] is None
    assert hit["char_end"] > hit["char_start"]
    assert search.structured_content["legs_run"] == ["vector", "fulltext"]
    assert "graph" in search.structured_content["legs_not_run"]
    assert search.structured_content["rerank"]["applied"] is False
    assert hit["chunk_uid"] in search.content[0].text
    assert search.meta is not None and search.meta["elapsed_ms"] >= 0

    chunk = out["chunk"].structured_content
    stored = Chunk.objects.select_related("item").get(uid=hit["chunk_uid"])
    assert chunk["text"].startswith(stored.text_preview[:50])
    assert chunk["item"]["source"] == "docs/backups.md"
    assert chunk["library"]["library_type"] == "documentation"
    assert chunk["previous_chunk_uid"] is not None or chunk["next_chunk_uid"] is not None

    assert [lib["uid"] for lib in out["libraries"].structured_content["libraries"]] == [library.uid]
    assert out["collections"].structured_content["collections"][0]["library"]["uid"] == library.uid
    items = out["items"].structured_content
    assert items["total"] == 3
    assert {item["title"] for item in items["items"]} == {"Backups", "Scaling the service", "onboarding"}
    assert all(item["embedding_status"] == "complete" for item in items["items"])


def test_listing_tools_needs_no_token_but_calling_one_does(live_server_url: str) -> None:
    listed = post(live_server_url, rpc("tools/list"))
    assert listed.status_code == 200
    assert {tool["name"] for tool in sse_payload(listed)["result"]["tools"]} == TOOLS

    refused = post(live_server_url, rpc("tools/call", {"name": "list_libraries", "arguments": {}}))
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer")
    assert refused.json()["error"] == "invalid_token"


@pytest.mark.parametrize("case", ["malformed", "unknown", "expired", "revoked"])
def test_bad_tokens_get_401(live_server_url: str, token: str, case: str) -> None:
    stored = MCPToken.objects.get(name="test")
    raw = {"malformed": "not-a-token", "unknown": "mnem_" + "A" * 43}.get(case, token)
    if case == "expired":
        MCPToken.objects.filter(pk=stored.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    if case == "revoked":
        revoke_token(token=stored)
    response = post(live_server_url, rpc("tools/call", {"name": "list_libraries", "arguments": {}}), raw)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


def test_a_token_in_the_query_string_is_not_accepted(live_server_url: str, token: str) -> None:
    response = httpx.post(
        f"{live_server_url}/mcp/?access_token={token}",
        content=json.dumps(rpc("tools/call", {"name": "list_libraries", "arguments": {}})),
        headers=JSON_HEADERS,
    )
    assert response.status_code == 401


def test_a_tool_outside_the_whitelist_gets_403(live_server_url: str) -> None:
    user = User.objects.create(username="narrow")
    _, raw = create_token(user=user, name="search-only", allowed_tools=["search"])
    response = post(live_server_url, rpc("tools/call", {"name": "list_libraries", "arguments": {}}), raw)
    assert response.status_code == 403
    assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
    allowed = post(live_server_url, rpc("tools/call", {"name": "search", "arguments": {"query": "x"}}), raw)
    assert allowed.status_code == 200


def test_the_sse_message_endpoint_is_guarded_too(live_server_url: str) -> None:
    response = httpx.post(
        f"{live_server_url}/mcp/sse/messages/?session_id=0123456789abcdef0123456789abcdef",
        content=json.dumps(rpc("tools/call", {"name": "list_libraries", "arguments": {}})),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 401


ODD_QUERIES = {
    "ten_thousand_characters": ("how do I restore the database from a backup? " * 223)[:10_000],
    "only_stop_words": "the and of to a",
    "only_punctuation": "?!…;:()",
    "another_script": "Резервное копирование базы данных",
    "sql_and_tsquery_syntax": "' OR 1=1 -- a:* & !",
}


def test_bad_input_gets_clear_errors_not_500s(
    live_server_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    async def scenario() -> dict[str, Any]:
        async with mcp_session(live_server_url, token, "streamable-http") as session:
            results: dict[str, Any] = {}
            bad: dict[str, dict[str, Any]] = {
                "unknown_arg": {"query": "x", "colour": "red"},
                "bad_limit": {"query": "x", "limit": 500},
                "missing_query": {},
                "alpha_above_one": {"query": "x", "alpha": 1.5},
                "unknown_search_type": {"query": "x", "search_types": ["vector", "sparse"]},
            }
            for label, args in bad.items():
                try:
                    await session.call_tool("search", args)
                    results[label] = None
                except MCPError as exc:
                    results[label] = exc
            results["empty_query"] = await session.call_tool("search", {"query": "  "})
            results["too_long_query"] = await session.call_tool("search", {"query": "backup " * 3000})
            for label, query in ODD_QUERIES.items():
                results[label] = await session.call_tool("search", {"query": query})
            results["unknown_chunk"] = await session.call_tool("get_chunk", {"chunk_uid": "chk_missing"})
            results["unknown_library"] = await session.call_tool(
                "list_collections", {"library_uid": "lib_missing"}
            )
            return results

    out = run(scenario)
    assert out["unknown_arg"].error.code == -32602 and "colour: unknown argument" in str(out["unknown_arg"])
    assert out["bad_limit"].error.code == -32602 and "limit" in str(out["bad_limit"])
    assert out["missing_query"].error.code == -32602 and "query: required" in str(out["missing_query"])
    assert out["alpha_above_one"].error.code == -32602 and "alpha: " in str(out["alpha_above_one"])
    assert out["unknown_search_type"].error.code == -32602
    assert "search_types.1: " in str(out["unknown_search_type"])
    assert out["empty_query"].is_error and "must not be empty" in out["empty_query"].content[0].text
    assert out["too_long_query"].is_error
    assert out["too_long_query"].content[0].text.endswith("query is 20999 characters; the maximum is 20000")
    for label in ODD_QUERIES:
        # Answered (with or without hits), never an error.
        assert out[label].is_error is False, label
        assert isinstance(out[label].structured_content["results"], list), label
    assert out["ten_thousand_characters"].structured_content["results"], "a long query still finds text"
    assert out["unknown_chunk"].is_error and "chk_missing" in out["unknown_chunk"].content[0].text
    assert out["unknown_library"].is_error and "lib_missing" in out["unknown_library"].content[0].text


def test_malformed_json_rpc_gets_the_specs_error(live_server_url: str, token: str) -> None:
    broken = post(live_server_url, b'{"jsonrpc": "2.0", "id": 1, "method": ', token)
    assert broken.status_code == 400
    assert broken.json()["error"]["code"] == -32700
    not_rpc = post(live_server_url, {"hello": "world"}, token)
    assert not_rpc.status_code == 400
    assert not_rpc.json()["error"]["code"] in (-32600, -32602, -32700)


@pytest.mark.parametrize("path", ["/mcp/health", "/health"])
def test_health_checks_the_database(live_server_url: str, path: str) -> None:
    response = httpx.get(f"{live_server_url}{path}")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def metric(text: str, name: str, **labels: str) -> float:
    """The sample `name{labels}` from Prometheus text, 0 when absent (label order does not matter)."""
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return float(sample.value)
    return 0.0


def test_metrics_move_after_calls(
    live_server_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    before = httpx.get(f"{live_server_url}/metrics").text
    post(live_server_url, rpc("tools/call", {"name": "list_libraries", "arguments": {}}), token)
    post(
        live_server_url, rpc("tools/call", {"name": "get_chunk", "arguments": {"chunk_uid": "chk_x"}}), token
    )
    post(live_server_url, rpc("tools/call", {"name": "list_libraries", "arguments": {}}))
    query = {"query": "metrics move after a search of its own", "search_types": ["vector", "fulltext"]}
    post(live_server_url, rpc("tools/call", {"name": "search", "arguments": query}), token)
    after = httpx.get(f"{live_server_url}/metrics").text

    def delta(name: str, **labels: str) -> float:
        return metric(after, name, **labels) - metric(before, name, **labels)

    assert delta("mcp_tool_invocations_total", tool="list_libraries", status="ok") == 1
    assert delta("mcp_tool_invocations_total", tool="get_chunk", status="error") == 1
    assert delta("mcp_tool_duration_seconds_count", tool="list_libraries") == 1
    assert delta("mcp_auth_failures_total", reason="missing") == 1
    assert delta("mnemosyne_search_seconds_count") == 1
    assert delta("mnemosyne_search_leg_seconds_count", leg="vector") == 1
    assert delta("mnemosyne_search_leg_seconds_count", leg="fulltext") == 1
    assert delta("mnemosyne_embedded_texts_total", kind="query") == 1


def test_search_pages_with_a_signed_cursor(
    live_server_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    async def scenario() -> dict[str, Any]:
        async with mcp_session(live_server_url, token, "streamable-http") as session:
            args = {"query": "database", "limit": 2, "return_metadata": ["explain", "source"]}
            first = await session.call_tool("search", args)
            cursor = first.structured_content["next_cursor"]
            second = await session.call_tool("search", {**args, "cursor": cursor})
            try:
                await session.call_tool("search", {**args, "cursor": cursor[:-2] + "xx"})
                tampered = None
            except MCPError as exc:
                tampered = exc
            return {"first": first, "second": second, "tampered": tampered}

    out = run(scenario)
    first, second = out["first"].structured_content, out["second"].structured_content
    assert first["next_cursor"] and len(first["results"]) == 2
    assert {hit["chunk_uid"] for hit in first["results"]}.isdisjoint(
        hit["chunk_uid"] for hit in second["results"]
    )
    hit = first["results"][0]
    assert hit["explain"]["legs"] and hit["source"].startswith("docs/")
    assert out["tampered"] is not None and out["tampered"].error.code == -32602
    assert "cursor" in str(out["tampered"])
