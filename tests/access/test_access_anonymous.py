"""Anonymous read access (MCP_ANONYMOUS_READ): off by default; on, reads only, within its libraries."""

from __future__ import annotations

from typing import Any

import pytest

from access.models import MCPAuditEvent
from mnemosyne.embedding import Embedder
from mnemosyne.library.models import Chunk, Item, Library
from tests.conftest import ingest_fixture_docs
from tests.mcp_server.clients import mcp_session, post, rpc, run, sse_payload
from tests.server_fixtures import PUBLIC_LIBRARY_UID

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def public_and_private(embedder: Embedder) -> dict[str, Any]:
    """The public library anonymous callers may read (by its configured uid), and a private one."""
    Library.objects.create(uid=PUBLIC_LIBRARY_UID, name="Public", library_type="documentation")
    public, public_collection, _ = ingest_fixture_docs(embedder, library="Public", collection="pages")
    private, _, _ = ingest_fixture_docs(embedder, library="Private", collection="notes")
    return {"public": public, "public_collection": public_collection, "private": private}


def tool(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return rpc("tools/call", {"name": name, "arguments": arguments or {}})


def test_without_a_token_nothing_is_read_by_default(in_process_url: str) -> None:
    for message in (
        tool("list_libraries"),
        tool("search", {"query": "backups"}),
        rpc("resources/read", {"uri": "mnemosyne://libraries"}),
        rpc("resources/list"),
    ):
        response = post(in_process_url, message)
        assert response.status_code == 401
        assert "resource_metadata=" in response.headers["www-authenticate"]


def test_anonymous_callers_read_only_the_allowed_libraries(
    identity_server_url: str, public_and_private: dict[str, Any]
) -> None:
    public, private = public_and_private["public"], public_and_private["private"]

    async def scenario() -> dict[str, Any]:
        async with mcp_session(identity_server_url, None, "streamable-http") as session:
            return {
                "libraries": await session.call_tool("list_libraries", {}),
                "search": await session.call_tool("search", {"query": "restore the database", "limit": 50}),
                "foreign": await session.call_tool("list_items", {"library_uid": private.uid}),
                "resources": await session.list_resources(),
                "read": await session.read_resource("mnemosyne://libraries"),
            }

    out = run(scenario)
    assert [lib["uid"] for lib in out["libraries"].structured_content["libraries"]] == [public.uid]
    hits = out["search"].structured_content["results"]
    assert hits and {hit["library"]["uid"] for hit in hits} == {public.uid}
    assert out["foreign"].is_error
    assert {str(r.uri) for r in out["resources"].resources} == {
        "ui://mnemosyne/evidence.html",
        "mnemosyne://libraries",
        "mnemosyne://ingestion",
        f"mnemosyne://library/{public.uid}",
    }
    assert private.uid not in str(out["read"]) and public.uid in str(out["read"])


def test_anonymous_callers_cannot_write_and_get_401(
    identity_server_url: str, public_and_private: dict[str, Any]
) -> None:
    collection = public_and_private["public_collection"]
    item = Item.objects.filter(collection=collection).first()
    assert item is not None
    before = (Item.objects.count(), Chunk.objects.count(), MCPAuditEvent.objects.count())
    for message in (
        tool("upsert_item", {"collection_uid": collection.uid, "title": "Spam", "text": "# Spam"}),
        tool("delete_item", {"item_uid": item.uid, "dry_run": False}),
    ):
        response = post(identity_server_url, message)
        assert response.status_code == 401
        challenge = response.headers["www-authenticate"]
        assert "resource_metadata=" in challenge and "error=" not in challenge  # missing, not invalid
    assert (Item.objects.count(), Chunk.objects.count(), MCPAuditEvent.objects.count()) == before


def test_a_present_but_invalid_token_is_refused_not_treated_as_anonymous(
    identity_server_url: str, public_and_private: dict[str, Any]
) -> None:
    for raw in ("mnem_" + "x" * 43, "not-a-token", "a.b.c"):
        for message in (tool("list_libraries"), rpc("resources/read", {"uri": "mnemosyne://libraries"})):
            response = post(identity_server_url, message, raw)
            assert response.status_code == 401
            assert 'error="invalid_token"' in response.headers["www-authenticate"]


def test_tools_list_needs_no_token_and_shows_everything(identity_server_url: str) -> None:
    listed = sse_payload(post(identity_server_url, rpc("tools/list")))["result"]["tools"]
    assert {"search", "upsert_item", "delete_item"} <= {t["name"] for t in listed}
