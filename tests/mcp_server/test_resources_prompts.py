"""Resources, the cite-sources prompt, completions and logging/setLevel, through the official client."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import (
    LoggingMessageNotificationParams,
    PromptReference,
    ResourceTemplateReference,
    TextResourceContents,
)

from mnemosyne.library.models import Chunk, Collection, Item, Library
from tests.mcp_server.clients import mcp_session, post, rpc, run, sse_payload

pytestmark = pytest.mark.django_db(transaction=True)


def read_text(result: Any) -> str:
    (contents,) = result.contents
    assert isinstance(contents, TextResourceContents)
    return contents.text


def test_resources_list_the_libraries_and_read_library_item_and_chunk(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    library, collection = corpus
    item = Item.objects.get(collection=collection, title="Backups")
    chunk = Chunk.objects.get(item=item, ordinal=1)

    async def scenario() -> dict[str, Any]:
        async with mcp_session(in_process_url, token, "streamable-http") as session:
            out: dict[str, Any] = {
                "listed": await session.list_resources(),
                "templates": await session.list_resource_templates(),
                "libraries": await session.read_resource("mnemosyne://libraries"),
                "library": await session.read_resource(f"mnemosyne://library/{library.uid}"),
                "item": await session.read_resource(f"mnemosyne://item/{item.uid}"),
                "chunk": await session.read_resource(f"mnemosyne://chunk/{chunk.uid}"),
            }
            try:
                await session.read_resource("mnemosyne://chunk/chk_missing")
            except MCPError as exc:
                out["missing"] = exc
            return out

    out = run(scenario)
    listed = {str(r.uri): r for r in out["listed"].resources}
    # The evidence app's page (MCP Apps) is listed beside the libraries.
    app = listed.pop("ui://mnemosyne/evidence.html")
    assert app.mime_type == "text/html;profile=mcp-app" and app.description
    assert set(listed) == {
        "mnemosyne://libraries",
        "mnemosyne://ingestion",
        f"mnemosyne://library/{library.uid}",
    }
    assert listed[f"mnemosyne://library/{library.uid}"].title == "Handbook"
    assert all(r.description and r.mime_type == "application/json" for r in listed.values())
    assert {t.uri_template for t in out["templates"].resource_templates} == {
        "mnemosyne://library/{library_uid}",
        "mnemosyne://item/{item_uid}",
        "mnemosyne://chunk/{chunk_uid}",
        "mnemosyne://item/{item_uid}/page/{number}",
    }

    (entry,) = json.loads(read_text(out["libraries"]))["libraries"]
    assert entry["uid"] == library.uid
    assert entry["collections"] == [{"uid": collection.uid, "name": "guides", "item_count": 3}]
    assert json.loads(read_text(out["library"]))["collections"][0]["item_count"] == 3

    outline = json.loads(read_text(out["item"]))
    assert outline["title"] == "Backups" and outline["source"] == "docs/backups.md"
    assert [c["ordinal"] for c in outline["chunks"]] == list(range(item.chunk_count))
    assert outline["chunks"][1]["chunk_uid"] == chunk.uid and outline["chunks_truncated"] is False
    assert "ingest_config" not in outline["metadata"]
    # A note says nothing of an organisation or a period: none is guessed.
    assert (outline["organisation"], outline["doc_type"], outline["date"], outline["period"]) == (
        "",
        "",
        None,
        "",
    )

    text = read_text(out["chunk"])
    (contents,) = out["chunk"].contents
    assert contents.mime_type == "text/markdown"
    assert text.startswith("# Backups › ") and f"chunk_uid: {chunk.uid}" in text
    assert chunk.text_preview[:40] in text
    assert out["missing"].error.code == -32602 and "chk_missing" in str(out["missing"])


def test_the_cite_sources_prompt_narrows_by_library_name_and_asks_for_chunk_uids(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    library, collection = corpus

    async def scenario() -> dict[str, Any]:
        async with mcp_session(in_process_url, token, "streamable-http") as session:
            out: dict[str, Any] = {"listed": await session.list_prompts()}
            out["by_name"] = await session.get_prompt(
                "cite-sources", {"question": "How are backups kept?", "library": "handbook"}
            )
            out["by_collection"] = await session.get_prompt(
                "cite-sources", {"question": "Q?", "library": library.uid, "collection": "guides"}
            )
            out["unscoped"] = await session.get_prompt("cite-sources", {"question": "Q?"})
            for label, name, arguments in (
                ("unknown", "cite-sources", {"question": "Q?", "library": "Atlantis"}),
                ("missing", "cite-sources", {}),
                ("no_such_prompt", "summarise", {}),
            ):
                try:
                    await session.get_prompt(name, arguments)
                except MCPError as exc:
                    out[label] = exc
            return out

    out = run(scenario)
    (prompt,) = out["listed"].prompts
    assert prompt.name == "cite-sources" and prompt.description
    assert [(a.name, a.required) for a in prompt.arguments] == [
        ("question", True),
        ("library", False),
        ("collection", False),
    ]
    assert all(a.description for a in prompt.arguments)
    (message,) = out["by_name"].messages
    text = message.content.text
    assert message.role == "user" and "How are backups kept?" in text
    assert f'library_uid="{library.uid}"' in text and "[chunk_uid]" in text and "get_chunk" in text
    assert f'collection_uid="{collection.uid}"' in out["by_collection"].messages[0].content.text
    assert "all libraries" in out["unscoped"].messages[0].content.text
    assert out["unknown"].error.code == -32602 and "Atlantis" in str(out["unknown"])
    assert out["missing"].error.code == -32602 and "question" in str(out["missing"])
    assert out["no_such_prompt"].error.code == -32602 and "Unknown prompt: summarise" in str(
        out["no_such_prompt"]
    )


def test_completions_offer_library_and_collection_names_and_uids(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    library, collection = corpus
    items = sorted(Item.objects.filter(collection=collection).values_list("uid", flat=True))
    prompt = PromptReference(type="ref/prompt", name="cite-sources")

    def template(uri: str) -> ResourceTemplateReference:
        return ResourceTemplateReference(type="ref/resource", uri=uri)

    async def scenario() -> list[Any]:
        async with mcp_session(in_process_url, token, "streamable-http") as session:
            return [
                (await session.complete(prompt, {"name": "library", "value": "han"})).completion,
                (await session.complete(prompt, {"name": "library", "value": "book"})).completion,
                (
                    await session.complete(
                        prompt,
                        {"name": "collection", "value": "g"},
                        context_arguments={"library": "Handbook"},
                    )
                ).completion,
                (
                    await session.complete(
                        prompt, {"name": "collection", "value": ""}, context_arguments={"library": "Atlantis"}
                    )
                ).completion,
                (
                    await session.complete(
                        template("mnemosyne://library/{library_uid}"),
                        {"name": "library_uid", "value": "lib_"},
                    )
                ).completion,
                (
                    await session.complete(
                        template("mnemosyne://item/{item_uid}"), {"name": "item_uid", "value": "itm_"}
                    )
                ).completion,
                (
                    await session.complete(
                        template("mnemosyne://chunk/{chunk_uid}"), {"name": "chunk_uid", "value": "zzz"}
                    )
                ).completion,
                (
                    await session.complete(
                        PromptReference(type="ref/prompt", name="other"), {"name": "x", "value": ""}
                    )
                ).completion,
            ]

    by_prefix, by_infix, collections, unknown_library, libraries, item_uids, no_chunks, other = run(scenario)
    assert by_prefix.values == ["Handbook"] and by_prefix.total == 1
    assert by_infix.values == ["Handbook"]
    assert collections.values == ["guides"]
    assert unknown_library.values == []
    assert libraries.values == [library.uid]
    assert item_uids.values == items and item_uids.has_more is False
    assert no_chunks.values == []
    assert other.values == []


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")  # from 2026-07-28 only
def test_logging_set_level_governs_what_a_session_is_sent(live_server_url: str, token: str) -> None:
    received: list[LoggingMessageNotificationParams] = []

    async def collect(params: LoggingMessageNotificationParams) -> None:
        received.append(params)

    async def scenario() -> list[list[str]]:
        seen: list[list[str]] = []
        # SSE keeps one connection, so the level set holds for the calls that follow.
        async with mcp_session(live_server_url, token, "sse", logging_callback=collect) as session:
            for level in (None, "debug", "error", "info"):
                if level is not None:
                    assert (await session.set_logging_level(level)).model_dump(exclude_none=True) == {}
                received.clear()
                await session.call_tool("list_libraries", {})
                await session.send_ping()  # the log notifications precede the answer; this flushes them
                seen.append([entry.level for entry in received])
        return seen

    default, debug, error, info = run(scenario)
    assert default == []  # until asked, only warnings and worse
    assert debug == ["info", "debug"]
    assert error == []
    assert info == ["info"]
    assert received and received[0].logger == "mnemosyne" and "list_libraries" in str(received[0].data)


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("resources/list", {}),
        ("resources/read", {"uri": "mnemosyne://libraries"}),
        ("prompts/get", {"name": "cite-sources", "arguments": {"question": "Q?"}}),
        (
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "cite-sources"},
                "argument": {"name": "library", "value": ""},
            },
        ),
    ],
)
def test_reading_library_content_needs_a_token(
    in_process_url: str, token: str, method: str, params: dict[str, Any]
) -> None:
    refused = post(in_process_url, rpc(method, params))
    assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
    assert "result" in sse_payload(post(in_process_url, rpc(method, params), token))


@pytest.mark.parametrize("method", ["tools/list", "prompts/list", "resources/templates/list", "ping"])
def test_server_metadata_is_public(in_process_url: str, method: str) -> None:
    answer = post(in_process_url, rpc(method))
    assert answer.status_code == 200 and "result" in sse_payload(answer)
