"""Scopes, whitelists, rate limits and the spec's 401/403/429 answers, over real HTTP against uvicorn."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from access.models import MCPAuditEvent
from access.services import create_token
from mcp_server.tools.catalog import TOOL_SPECS, WRITE_TOOLS
from mnemosyne.library.models import Chunk, Collection, Item, Library
from tests.mcp_server.clients import mcp_session, post, rpc, run, sse_payload
from tests.mcp_server.transports.test_http import metric

pytestmark = pytest.mark.django_db(transaction=True)

METADATA_PATH = "/.well-known/oauth-protected-resource/mcp"


def sample_arguments(collection: Collection) -> dict[str, dict[str, Any]]:
    item = Item.objects.filter(collection=collection).first()
    chunk = Chunk.objects.filter(collection=collection).first()
    assert item is not None and chunk is not None
    return {
        "search": {"query": "backups"},
        "get_chunk": {"chunk_uid": chunk.uid},
        "list_libraries": {},
        "list_collections": {},
        "list_items": {},
        "list_topics": {},
        "list_concepts": {},
        "get_concept_neighbors": {"concept": "backup"},
        "get_collection_config": {},
        "get_ingestion_status": {},
        "upsert_item": {"collection_uid": collection.uid, "title": "New", "text": "# New\n\nHello."},
        "delete_item": {"item_uid": item.uid, "dry_run": False},
        "sync_source": {"source_uid": "src_nowhere0000000"},
        "list_evaluation_sets": {},
        "run_evaluation": {"evaluation_set_uid": "set_nowhere0000000"},
        "get_evaluation_run": {"run_id": "run_nowhere0000000"},
        "reembed_library": {"library_uid": collection.library.uid},
    }


def snapshot() -> tuple[int, int, int]:
    return (
        Item.objects.count(),
        Chunk.objects.count(),
        MCPAuditEvent.objects.filter(kind=MCPAuditEvent.Kind.WRITE_TOOL_CALL).count(),
    )


def test_a_missing_token_gets_401_pointing_at_the_resource_metadata(live_server_url: str) -> None:
    response = post(live_server_url, rpc("tools/call", {"name": "list_libraries", "arguments": {}}))
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert f'resource_metadata="{live_server_url}{METADATA_PATH}"' in challenge
    metadata = httpx.get(f"{live_server_url}{METADATA_PATH}").json()
    assert metadata["resource"] == f"{live_server_url}/mcp"
    assert metadata["bearer_methods_supported"] == ["header"]
    assert metadata["scopes_supported"] == ["read", "write"]


def test_an_invalid_token_gets_401_with_the_metadata_and_the_error(live_server_url: str) -> None:
    response = post(
        live_server_url, rpc("tools/call", {"name": "list_libraries", "arguments": {}}), "mnem_" + "x" * 43
    )
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert 'error="invalid_token"' in challenge and "resource_metadata=" in challenge


@pytest.mark.parametrize("tool", [spec.name for spec in TOOL_SPECS])
def test_a_token_not_allowed_a_tool_is_refused_before_the_handler_runs(
    live_server_url: str, corpus: tuple[Library, Collection], tool: str
) -> None:
    _, collection = corpus
    other = "list_libraries" if tool != "list_libraries" else "search"
    _, raw = create_token(
        user=User.objects.create(username="narrow"), name="n", allowed_tools=[other], scopes=["read", "write"]
    )
    before_metrics = httpx.get(f"{live_server_url}/metrics").text
    before = snapshot()
    arguments = sample_arguments(collection)[tool]
    response = post(live_server_url, rpc("tools/call", {"name": tool, "arguments": arguments}), raw)
    assert response.status_code == 403
    assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
    after_metrics = httpx.get(f"{live_server_url}/metrics").text
    assert snapshot() == before
    for status in ("ok", "error"):
        ran = metric(after_metrics, "mcp_tool_invocations_total", tool=tool, status=status)
        assert ran == metric(before_metrics, "mcp_tool_invocations_total", tool=tool, status=status)


@pytest.mark.parametrize("tool", sorted(WRITE_TOOLS))
def test_a_read_only_token_cannot_write_and_nothing_changes(
    live_server_url: str, corpus: tuple[Library, Collection], tool: str
) -> None:
    _, collection = corpus
    _, raw = create_token(user=User.objects.create(username="reader2"), name="r")
    before_metrics = httpx.get(f"{live_server_url}/metrics").text
    before = snapshot()
    arguments = sample_arguments(collection)[tool]
    response = post(live_server_url, rpc("tools/call", {"name": tool, "arguments": arguments}), raw)
    assert response.status_code == 403
    challenge = response.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="write"' in challenge
    assert snapshot() == before
    after_metrics = httpx.get(f"{live_server_url}/metrics").text
    assert metric(after_metrics, "mcp_auth_failures_total", reason="insufficient_scope") == (
        metric(before_metrics, "mcp_auth_failures_total", reason="insufficient_scope") + 1
    )


def test_a_write_tool_call_leaves_an_audit_row_with_its_outcome(
    live_server_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    _, collection = corpus
    ok = post(
        live_server_url,
        rpc("tools/call", {"name": "delete_item", "arguments": {"item_uid": "itm_no"}}),
        token,
    )
    assert "result" in sse_payload(ok)
    arguments = sample_arguments(collection)["upsert_item"]
    post(live_server_url, rpc("tools/call", {"name": "upsert_item", "arguments": arguments}), token)
    rows = list(MCPAuditEvent.objects.filter(kind=MCPAuditEvent.Kind.WRITE_TOOL_CALL).order_by("created_at"))
    assert [(r.detail["tool"], r.detail["outcome"], r.actor) for r in rows] == [
        ("delete_item", "error", "reader"),
        ("upsert_item", "ok", "reader"),
    ]
    assert rows[1].detail["arguments"] == sorted(arguments)


def test_tools_list_shows_everything_without_a_token_and_only_callable_tools_with_one(
    live_server_url: str,
) -> None:
    _, reader = create_token(user=User.objects.create(username="lister"), name="l")
    _, narrow = create_token(user=User.objects.create(username="narrow2"), name="n", allowed_tools=["search"])

    async def names(raw: str | None) -> set[str]:
        async with mcp_session(live_server_url, raw, "streamable-http") as session:
            return {tool.name for tool in (await session.list_tools()).tools}

    everything = {spec.name for spec in TOOL_SPECS}
    assert run(lambda: names(None)) == everything
    assert run(lambda: names(reader)) == everything - WRITE_TOOLS
    assert run(lambda: names(narrow)) == {"search"}


def _burst(base: str, raw: str, calls: int) -> list[httpx.Response]:
    body = rpc("tools/call", {"name": "list_libraries", "arguments": {}})
    return [post(base, body, raw) for _ in range(calls)]


def test_the_rate_limit_holds_across_two_workers(configured_server_url: str) -> None:
    _, raw = create_token(user=User.objects.create(username="busy"), name="b", rate_limit_per_minute=3)
    for attempt in range(3):
        # A burst inside one fixed window: started early enough in a minute, and after a burst
        # that crossed into the next one (which then already holds some of its calls), in a fresh
        # window.
        second = timezone.now().second
        if attempt or second > 50:
            time.sleep(61 - second)
        minute = timezone.now().replace(second=0, microsecond=0)
        responses = _burst(configured_server_url, raw, 10)
        if timezone.now().replace(second=0, microsecond=0) == minute:
            break
    statuses = [r.status_code for r in responses]
    assert statuses.count(200) == 3 and statuses.count(429) == 7
    limited = next(r for r in responses if r.status_code == 429)
    assert 1 <= int(limited.headers["retry-after"]) <= 60
    assert limited.json()["error"] == "rate_limited"


def test_two_workers_report_one_consistent_set_of_counters(configured_server_url: str) -> None:
    # Once: each scrape saw one worker's counters, which Prometheus reads as counter resets.
    _, raw = create_token(user=User.objects.create(username="counted"), name="c")

    def invocations() -> list[float]:
        scrapes = [httpx.get(f"{configured_server_url}/metrics").text for _ in range(6)]
        return [
            metric(text, "mcp_tool_invocations_total", tool="list_libraries", status="ok") for text in scrapes
        ]

    before = invocations()
    _burst(configured_server_url, raw, 12)
    after = invocations()
    assert len(set(before)) == 1 and len(set(after)) == 1, (before, after)
    assert after[0] - before[0] == 12
