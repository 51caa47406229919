"""The evidence app as the protocol shows it, through the official client: the Apps capability,
the tools that name the app, the app's page (self-contained, small), and the page pictures' bad
input. How it renders in a host is test_evidence_app.py's."""

from __future__ import annotations

import re
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import TextResourceContents

from mcp_server import evidence_app
from mnemosyne.library.models import Collection, Item, Library
from tests.mcp_server.clients import mcp_session, modern, post, run, sse_payload

pytestmark = pytest.mark.django_db(transaction=True)


def test_search_and_get_chunk_name_the_app_whose_page_is_self_contained(
    in_process_url: str, token: str
) -> None:
    async def scenario() -> dict[str, Any]:
        async with mcp_session(in_process_url, token, "streamable-http") as session:
            return {
                "tools": await session.list_tools(),
                "app": await session.read_resource(evidence_app.APP_URI),
            }

    out = run(scenario)
    named = {tool.name: (tool.meta or {}).get("ui") for tool in out["tools"].tools}
    assert named.pop("search") == named.pop("get_chunk") == {"resourceUri": evidence_app.APP_URI}
    assert set(named.values()) == {None}
    # Extensions are a 2026-07-28 field of the capabilities (the SDK leaves them out of a 2025-11-25
    # handshake); there the server says it has the Apps extension.
    body, headers = modern("server/discover", {})
    discovered = sse_payload(post(in_process_url, body, token, headers=headers))["result"]
    assert "io.modelcontextprotocol/ui" in discovered["capabilities"]["extensions"]
    (page,) = out["app"].contents
    assert isinstance(page, TextResourceContents) and page.mime_type == "text/html;profile=mcp-app"
    html = page.text
    assert len(html.encode()) < 50_000
    # Nothing from elsewhere: no script, style, font or picture by address.
    assert not re.search(r"""<(script|link|img|iframe)[^>]+(src|href)=""", html)
    assert "@import" not in html and "url(" not in html
    # Text from documents is set as text only.
    assert "innerHTML" not in html and "insertAdjacentHTML" not in html and "eval(" not in html


@pytest.mark.parametrize(
    ("uri", "said"),
    [
        ("mnemosyne://item/itm_nowhere0000000/page/1", "no item with uid 'itm_nowhere0000000'"),
        ("mnemosyne://item/{item}/page/0", "no such page"),
        ("mnemosyne://item/{item}/page/seven", "no such page"),
        ("mnemosyne://item/{item}/page/\u0663", "no such page"),
        ("mnemosyne://item/{item}/page/100001", "no such page"),
        ("mnemosyne://item/{item}/page/1", "only PDF pages are drawn"),
    ],
)
def test_a_page_that_cannot_be_shown_is_invalid_params_saying_why(
    in_process_url: str, corpus: tuple[Library, Collection], token: str, uri: str, said: str
) -> None:
    _, collection = corpus
    item = Item.objects.filter(collection=collection).first()
    assert item is not None and item.item_type != "pdf"

    async def scenario() -> MCPError:
        async with mcp_session(in_process_url, token, "streamable-http") as session:
            with pytest.raises(MCPError) as raised:
                await session.read_resource(uri.format(item=item.uid))
            return raised.value

    error = run(scenario)
    assert error.error.code == -32602 and said in error.error.message
