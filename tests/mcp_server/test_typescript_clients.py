"""The official TypeScript SDK clients over streamable HTTP (sdk_clients/typescript_client.mjs):
v2 negotiating 2026-07-28 and pinned to it, v1 on the 2025-11-25 handshake. Each lists tools,
resources and prompts, calls search with its result validated against the output schema, and reads
the evidence app's page; an unknown uid is the tool's error. And v2 asks its person before a
deletion when the server asks it to (2026-07-28 multi-round-trip input)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from access.services import create_token
from mcp_server import evidence_app, resources
from mnemosyne.library.models import Collection, Item, Library
from tests.server_fixtures import node_script

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
CLIENT = Path(__file__).parent / "sdk_clients" / "typescript_client.mjs"
CONFIRM = Path(__file__).parent / "sdk_clients" / "typescript_confirm.mjs"


def typescript_client(mode: str, url: str, token: str, home: Path) -> dict[str, Any]:
    return node_script(CLIENT, mode, f"{url}/mcp/", token, "How are backups kept?", home=home)


@pytest.mark.parametrize(
    ("mode", "era", "version"),
    [("auto", "modern", "2026-07-28"), ("pin", "modern", "2026-07-28"), ("v1", "legacy", "2025-11-25")],
)
def test_the_typescript_sdk_client_lists_and_searches(
    live_server_url: str,
    corpus: tuple[Library, Collection],
    token: str,
    tmp_path: Path,
    mode: str,
    era: str,
    version: str,
) -> None:
    library, _ = corpus
    seen = typescript_client(mode, live_server_url, token, tmp_path)
    assert (seen["era"], seen["version"]) == (era, version)
    assert seen["tools"][:2] == ["search", "get_chunk"] and "upsert_item" in seen["tools"]
    assert seen["search_ui"] == {"resourceUri": evidence_app.APP_URI}
    assert {evidence_app.APP_URI, "mnemosyne://libraries", f"mnemosyne://library/{library.uid}"} <= set(
        seen["resources"]
    )
    assert resources.PAGE_TEMPLATE in seen["templates"]
    assert seen["prompts"] == ["cite-sources"]
    assert seen["search"]["isError"] is False and seen["search"]["results"] > 0
    assert seen["app"] == {"mimeType": "text/html;profile=mcp-app", "bytes": len(evidence_app.html())}
    assert seen["bad_uid"]["isError"] is True and "chk_nowhere00000000" in seen["bad_uid"]["text"]


def test_the_typescript_sdk_client_asks_its_person_before_a_deletion(
    live_server_url: str, corpus: tuple[Library, Collection], tmp_path: Path
) -> None:
    _, collection = corpus
    kept, gone = Item.objects.filter(collection=collection).order_by("pk")[:2]
    user = User.objects.create(username="deleter")
    _, token = create_token(user=user, name="write", scopes=["read", "write"])
    said = {}
    for item, answer in ((kept, "no"), (gone, "yes")):
        said[answer] = node_script(CONFIRM, f"{live_server_url}/mcp/", token, item.uid, answer, home=tmp_path)
    assert said["no"]["asked"] == [said["no"]["asked"][0]] and kept.title in said["no"]["asked"][0]
    assert said["no"]["isError"] is True and "not deleted" in said["no"]["text"]
    assert Item.objects.filter(pk=kept.pk).exists()
    assert len(said["yes"]["asked"]) == 1 and said["yes"]["deleted"] is True
    assert not Item.objects.filter(pk=gone.pk).exists()
