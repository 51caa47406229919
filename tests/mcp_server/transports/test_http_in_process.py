"""HTTP-level behaviour of the app, served in-process (tests/mcp_server/in_process.py): what the
middleware, the MCP gate and the transport answer, checked in seconds by the fast tier. The same
behaviour over real uvicorn is the full tier's (test_http.py, test_transports.py, test_access_http.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from access.services import create_token
from mcp_server.transports.challenges import WELL_KNOWN_PATH
from mnemosyne.embedding import get_embedder
from tests.conftest import ingest_fixture_docs
from tests.mcp_server.clients import JSON_HEADERS, modern, rpc, run
from tests.mcp_server.in_process import asgi_client

pytestmark = pytest.mark.django_db(transaction=True)


def reader_token() -> str:
    _, raw = create_token(user=User.objects.create(username="reader"), name="t", scopes=["read"])
    return raw


def test_health_answers_after_a_database_round_trip_with_a_request_id() -> None:
    async def scenario() -> tuple[int, Any, str, str]:
        async with asgi_client() as client:
            response = await client.get("/mcp/health")
            echoed = await client.get("/mcp/health", headers={"X-Request-ID": "abc-123"})
            return (
                response.status_code,
                response.json(),
                response.headers["x-request-id"],
                echoed.headers["x-request-id"],
            )

    status, body, generated, echoed = run(scenario)
    assert (status, body) == (200, {"status": "ok"})
    assert len(generated) >= 16 and echoed == "abc-123"


def test_a_host_not_allowed_is_refused_before_anything_answers() -> None:
    async def scenario() -> tuple[int, int]:
        async with asgi_client() as client:
            health = await client.get("/mcp/health", headers={"Host": "evil.example"})
            mcp = await client.post(
                "/mcp/", json=rpc("tools/list"), headers={**JSON_HEADERS, "Host": "evil.example"}
            )
            return health.status_code, mcp.status_code

    assert run(scenario) == (400, 400)


def test_an_unauthenticated_call_is_challenged_toward_the_resource_metadata() -> None:
    async def scenario() -> tuple[int, str, dict[str, Any]]:
        async with asgi_client() as client:
            call = rpc("tools/call", {"name": "list_libraries", "arguments": {}})
            refused = await client.post("/mcp/", json=call, headers=JSON_HEADERS)
            metadata = await client.get(WELL_KNOWN_PATH)
            return refused.status_code, refused.headers.get("www-authenticate", ""), metadata.json()

    status, challenge, metadata = run(scenario)
    assert status == 401
    assert (
        challenge.startswith("Bearer")
        and f'resource_metadata="http://localhost{WELL_KNOWN_PATH}"' in challenge
    )
    assert metadata["resource"] == "http://localhost/mcp"
    assert metadata["scopes_supported"] == ["read", "write"]


def test_a_body_that_is_not_json_rpc_gets_a_parse_error_and_a_search_gets_hits() -> None:
    library, collection, _ = ingest_fixture_docs(get_embedder())  # the fast tier: the stand-in
    token = reader_token()
    headers = {**JSON_HEADERS, "Authorization": f"Bearer {token}"}
    body, search_headers = modern(
        "tools/call", {"name": "search", "arguments": {"query": "restore the database", "limit": 3}}, "search"
    )

    async def scenario() -> tuple[Any, Any, Any]:
        async with asgi_client() as client:
            broken = await client.post("/mcp/", content=b"{not json", headers=headers)
            list_body, list_headers = modern("tools/list", {})
            listed = await client.post("/mcp/", json=list_body, headers={**headers, **list_headers})
            found = await client.post(
                "/mcp/", content=json.dumps(body), headers={**headers, **search_headers}
            )
            return (broken.status_code, broken.json()), listed.json(), found.json()

    (status, broken), listed, found = run(scenario)
    assert status == 400 and broken["error"]["code"] == -32700
    assert "search" in {tool["name"] for tool in listed["result"]["tools"]}
    results = found["result"]["structuredContent"]["results"]
    assert results and {hit["library"]["uid"] for hit in results} == {library.uid}
    assert {hit["collection"]["uid"] for hit in results} == {collection.uid}
