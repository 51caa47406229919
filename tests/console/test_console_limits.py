"""The console is a door of its own: a person's uploads there count against the console's limit of
changes (CONSOLE_CHANGES_PER_MINUTE), never against the `upsert_item` budget of their MCP token,
which counts tool calls (MCP_TOOL_RATE_LIMITS). In-process: Django's test client for the console,
the app served in-process for MCP."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from access.library_access import Role
from access.library_grants import grant
from access.services import create_token
from mnemosyne.library.models import Collection
from mnemosyne.library.services import ensure_collection, ensure_library
from tests.mcp_server.clients import JSON_HEADERS, modern, run
from tests.mcp_server.in_process import asgi_client

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def editor(settings: Any) -> tuple[User, Collection]:
    settings.LIBRARY_ACCESS = "grants"
    settings.MCP_TOOL_RATE_LIMITS = {"upsert_item": 2}
    settings.CONSOLE_CHANGES_PER_MINUTE = 3
    library = ensure_library(name="Handbook", library_type="documentation")
    collection = ensure_collection(library=library, name="notes")
    person = User.objects.create_user("edna", password="a long test password")
    grant(library=library, role=Role.EDITOR, user=person, actor="test")
    return person, collection


def _upload(client: Client, collection: Collection, serial: int) -> Any:
    note = SimpleUploadedFile(f"note-{serial}.md", f"# Note {serial}\n\nHigh water at 06:1{serial}.".encode())
    return client.post(f"/console/collections/{collection.uid}/uploads", {"files": [note]})


def _upserts_over_mcp(token: str, collection: Collection, count: int) -> list[dict[str, Any]]:
    async def scenario() -> list[dict[str, Any]]:
        answers = []
        async with asgi_client() as client:
            for serial in range(count):
                arguments = {
                    "collection_uid": collection.uid,
                    "title": f"Tide {serial}",
                    "text": f"# Tide {serial}\n\nLow water at 12:0{serial}.",
                }
                body, headers = modern(
                    "tools/call", {"name": "upsert_item", "arguments": arguments}, "upsert_item"
                )
                sent = {**JSON_HEADERS, **headers, "Authorization": f"Bearer {token}"}
                response = await client.post("/mcp/", content=json.dumps(body), headers=sent)
                answers.append({"status": response.status_code, "body": response.json()})
        return answers

    return run(scenario)


def test_console_uploads_spend_the_consoles_limit_and_never_the_tokens_upsert_budget(
    editor: tuple[User, Collection],
) -> None:
    person, collection = editor
    _, token = create_token(user=person, name="laptop", scopes=["read", "write"])
    client = Client()
    client.force_login(person)

    uploads = [_upload(client, collection, serial) for serial in range(3)]
    assert [response.status_code for response in uploads] == [200, 200, 200]
    refused = _upload(client, collection, 3)
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert "limit of changes" in refused.content.decode()

    # Three console uploads later the token still has both of its upsert_item calls, and then no more.
    answers = _upserts_over_mcp(token, collection, 3)
    assert [answer["status"] for answer in answers] == [200, 200, 429]
    assert all(not answer["body"]["result"].get("isError") for answer in answers[:2])
    assert "upsert_item" in json.dumps(answers[2]["body"])


def test_a_readers_change_is_refused_in_words(editor: tuple[User, Collection]) -> None:
    _, collection = editor
    reader = User.objects.create_user("rex", password="a long test password")
    grant(library=collection.library, role=Role.READER, user=reader, actor="test")
    client = Client()
    client.force_login(reader)
    refusals = [_upload(client, collection, serial) for serial in range(4)]
    assert [response.status_code for response in refusals] == [403] * 4
    assert "not change it" in refusals[0].content.decode()
