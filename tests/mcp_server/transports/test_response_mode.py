"""Stateless streamable HTTP answers with one JSON body unless the request can be sent notifications."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.types import CallToolResult

from mcp_server.transports.http_gate import wants_progress
from tests.mcp_server.clients import mcp_session, modern, post, rpc, run

MISSING_CHUNK = {"name": "get_chunk", "arguments": {"chunk_uid": "chk_missing"}}


def events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, False),
        (rpc("tools/call", {**MISSING_CHUNK, "_meta": {"progressToken": "p1"}}), True),
        (rpc("tools/call", {**MISSING_CHUNK, "_meta": {"progressToken": 0}}), True),
        (rpc("tools/call", {**MISSING_CHUNK, "_meta": {"progressToken": None}}), False),
        (rpc("tools/call", {**MISSING_CHUNK, "_meta": "p1"}), False),
    ],
)
def test_only_a_request_with_a_progress_token_wants_progress(message: dict[str, Any], expected: bool) -> None:
    # Bodies that are not one JSON-RPC message never get this far (envelope.py; test_hostile_input).
    assert wants_progress(message) is expected


@pytest.mark.django_db(transaction=True)
def test_a_plain_request_gets_json_one_with_a_progress_token_a_stream(
    in_process_url: str, token: str
) -> None:
    plain = post(in_process_url, rpc("tools/call", MISSING_CHUNK), token)
    assert plain.status_code == 200 and plain.headers["content-type"] == "application/json"
    answer = plain.json()["result"]
    assert answer["isError"] is True
    assert answer["content"][0]["text"] == "Error executing tool get_chunk: no chunk with uid 'chk_missing'"

    streamed = post(
        in_process_url, rpc("tools/call", {**MISSING_CHUNK, "_meta": {"progressToken": "p1"}}), token
    )
    assert streamed.status_code == 200 and streamed.headers["content-type"].startswith("text/event-stream")
    warning, result = events(streamed.text)
    # On the stream the client also gets the failure as a warning log message, before the answer.
    assert warning["method"] == "notifications/message" and warning["params"]["level"] == "warning"
    assert warning["params"]["data"] == result["result"]["content"][0]["text"] == answer["content"][0]["text"]


@pytest.mark.django_db(transaction=True)
def test_a_2026_request_streams_only_once_its_handler_emits(in_process_url: str, token: str) -> None:
    # The SDK's own 2026-07-28 path answers JSON until the handler sends a notification.
    body, headers = modern("tools/call", MISSING_CHUNK, name="get_chunk")
    silent = post(in_process_url, body, token, headers=headers)
    assert silent.status_code == 200 and silent.headers["content-type"] == "application/json"
    assert silent.json()["result"]["isError"] is True

    body, headers = modern(
        "tools/call",
        {**MISSING_CHUNK, "_meta": {"io.modelcontextprotocol/logLevel": "info"}},
        name="get_chunk",
    )
    logged = post(in_process_url, body, token, headers=headers)
    assert logged.status_code == 200 and logged.headers["content-type"].startswith("text/event-stream")
    warning, result = events(logged.text)
    assert warning["params"]["level"] == "warning" and result["result"]["isError"] is True


@pytest.mark.django_db(transaction=True)
def test_the_sdk_client_reads_either_answer(in_process_url: str, token: str) -> None:
    async def ignore(progress: float, total: float | None, message: str | None) -> None:
        return None

    async def scenario() -> tuple[CallToolResult, CallToolResult]:
        async with mcp_session(in_process_url, token, "streamable-http") as session:
            plain = await session.call_tool("list_libraries", {})
            # A progress callback makes the client send a progress token: the answer is streamed.
            streamed = await session.call_tool("list_libraries", {}, progress_callback=ignore)
            return plain, streamed

    plain, streamed = run(scenario)
    assert plain.is_error is False and streamed.is_error is False
    assert plain.structured_content == streamed.structured_content == {"libraries": [], "next_cursor": None}
