"""upsert_item and delete_item through the official client: idempotent writes, refusals that write nothing."""

from __future__ import annotations

import base64
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from mcp.shared.exceptions import MCPError

from access.services import create_token
from mnemosyne.library.models import Chunk, Collection, Item, Library
from tests.documents import png_bytes, report_pdf
from tests.mcp_server.clients import call_all, post, rpc, sse_payload

pytestmark = pytest.mark.django_db(transaction=True)

NOTE = (
    "# Tide tables\n\nHigh water at Brest is at 06:12 on Monday.\n\n"
    "## Springs\n\nSpring tides follow the new moon."
)


def test_upsert_by_external_id_creates_then_leaves_unchanged_then_updates(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    _, collection = corpus
    args: dict[str, Any] = {
        "collection_uid": collection.uid,
        "title": "Tide tables",
        "text": NOTE,
        "external_id": "tides-2026",
        "metadata": {"port": "Brest", "year": 2026},
    }
    created, again, changed, found = call_all(
        in_process_url,
        token,
        [
            ("upsert_item", args),
            ("upsert_item", args),
            ("upsert_item", {**args, "text": NOTE + "\n\nNeap tides follow the quarter moons."}),
            ("search", {"query": "neap tides quarter moons", "collection_uid": collection.uid, "limit": 3}),
        ],
    )
    result = created.structured_content
    assert result["status"] == "created" and result["chunk_count"] >= 1
    assert result["source"] == "external:tides-2026" and result["embedding_status"] == "complete"
    assert result["item_type"] == "markdown" and result["collection"]["uid"] == collection.uid
    assert again.structured_content["status"] == "unchanged"
    assert again.structured_content["item_uid"] == result["item_uid"]
    assert changed.structured_content["status"] == "updated"
    assert changed.structured_content["item_uid"] == result["item_uid"]
    assert created.meta["elapsed_ms"] > 0
    item = Item.objects.get(uid=result["item_uid"])
    assert item.title == "Tide tables" and item.metadata["metadata"] == {"port": "Brest", "year": 2026}
    assert Item.objects.filter(collection=collection, source="external:tides-2026").count() == 1
    assert found.structured_content["results"][0]["item"]["uid"] == result["item_uid"]


def test_upsert_without_external_id_is_identified_by_its_content(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    _, collection = corpus
    args = {
        "collection_uid": collection.uid,
        "title": "Note",
        "text": "Plain words.",
        "mime_type": "text/plain",
    }
    first, second, retitled = call_all(
        in_process_url,
        token,
        [("upsert_item", args), ("upsert_item", args), ("upsert_item", {**args, "title": "A note"})],
    )
    uid = first.structured_content["item_uid"]
    assert first.structured_content["status"] == "created" and first.structured_content["item_type"] == "text"
    assert second.structured_content == {**first.structured_content, "status": "unchanged"}
    assert (
        retitled.structured_content["status"] == "updated" and retitled.structured_content["item_uid"] == uid
    )
    assert Item.objects.get(uid=uid).title == "A note"


def test_upsert_ingests_a_base64_pdf_with_pages(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    _, collection = corpus
    content = base64.b64encode(report_pdf()).decode()
    (result,) = call_all(
        in_process_url,
        token,
        [
            (
                "upsert_item",
                {
                    "collection_uid": collection.uid,
                    "title": "Tidal report",
                    "content_base64": content,
                    "mime_type": "application/pdf",
                    "external_id": "report.pdf",
                },
            )
        ],
    )
    assert result.structured_content["item_type"] == "pdf", result.content[0].text
    item = Item.objects.get(uid=result.structured_content["item_uid"])
    assert item.title == "Tidal report"
    assert {chunk.page for chunk in Chunk.objects.filter(item=item)} >= {1, 2, 3}


def test_an_uploaded_image_comes_back_from_get_chunk_as_image_content(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    _, collection = corpus
    image = png_bytes(Description="A red tide gauge")
    arguments = {
        "collection_uid": collection.uid,
        "title": "Gauge photo",
        "content_base64": base64.b64encode(image).decode(),
        "mime_type": "image/png",
    }
    (upserted,) = call_all(in_process_url, token, [("upsert_item", arguments)])
    assert upserted.structured_content["item_type"] == "image", upserted.content[0].text
    chunk = Chunk.objects.get(item__uid=upserted.structured_content["item_uid"], kind="image")
    (fetched,) = call_all(in_process_url, token, [("get_chunk", {"chunk_uid": chunk.uid})])
    text, picture = fetched.content
    assert "red tide gauge" in text.text and fetched.structured_content["kind"] == "image"
    assert picture.type == "image" and picture.mime_type == "image/png"
    assert base64.b64decode(picture.data) == image


def test_refused_upserts_write_nothing(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    _, collection = corpus
    before = Item.objects.count()
    base = {"collection_uid": collection.uid, "title": "Refused"}
    zipped = base64.b64encode(b"PK\x03\x04 not really a zip").decode()
    results = call_all(
        in_process_url,
        token,
        [
            ("upsert_item", {**base, "content_base64": zipped, "mime_type": "application/zip"}),
            (
                "upsert_item",
                {**base, "content_base64": base64.b64encode(b"\x00\x01").decode(), "mime_type": "text/plain"},
            ),
            ("upsert_item", {**base, "text": "   "}),
            ("upsert_item", {**base, "collection_uid": "col_missing", "text": "words"}),
            ("upsert_item", {**base, "text": "words", "content_base64": zipped, "mime_type": "text/plain"}),
            ("upsert_item", base),
            ("upsert_item", {**base, "content_base64": "%%% not base64", "mime_type": "application/pdf"}),
            ("upsert_item", {**base, "content_base64": zipped}),
            ("upsert_item", {**base, "text": "words", "mime_type": "application/pdf"}),
            ("upsert_item", {"collection_uid": collection.uid, "text": "no title"}),
            ("upsert_item", {**base, "title": 5, "text": "words"}),
            ("upsert_item", {**base, "text": "words", "tags": ["x"]}),
        ],
    )
    unsupported, binary, blank, no_collection = results[:4]
    assert unsupported.is_error and "unsupported mime_type 'application/zip'" in unsupported.content[0].text
    assert binary.is_error and "cannot ingest" in binary.content[0].text
    assert blank.is_error and blank.meta["elapsed_ms"] >= 0
    assert no_collection.is_error and "col_missing" in no_collection.content[0].text
    both, neither, bad_base64, no_mime, text_as_pdf, no_title, title_type, extra = results[4:]
    assert all(isinstance(e, MCPError) and e.error.code == -32602 for e in results[4:]), results[4:]
    assert "text: give exactly one of text and content_base64" in str(both)
    assert "text: give exactly one" in str(neither)
    assert "content_base64: not valid base64" in str(bad_base64)
    assert "mime_type: required with content_base64" in str(no_mime)
    assert "mime_type: with text" in str(text_as_pdf)
    assert "title: required argument missing" in str(no_title)
    assert "title:" in str(title_type)
    assert "tags: unknown argument" in str(extra)
    assert Item.objects.count() == before


def test_content_over_the_file_limit_is_a_tool_error_and_writes_nothing(
    configured_server_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    _, collection = corpus
    before = Item.objects.count()
    big = "word " * 1000  # 5,000 bytes; this server's INGEST_MAX_FILE_BYTES is 4,096
    (result,) = call_all(
        configured_server_url,
        token,
        [("upsert_item", {"collection_uid": collection.uid, "title": "Big", "text": big})],
    )
    assert result.is_error and "over INGEST_MAX_FILE_BYTES (4096)" in result.content[0].text
    assert Item.objects.count() == before


def test_a_50_mb_upsert_is_refused_by_the_transport_with_413(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    _, collection = corpus
    content = base64.b64encode(b"\x00" * (50 * 1024 * 1024)).decode()
    arguments = {
        "collection_uid": collection.uid,
        "title": "Huge",
        "content_base64": content,
        "mime_type": "application/pdf",
    }
    response = post(in_process_url, rpc("tools/call", {"name": "upsert_item", "arguments": arguments}), token)
    assert response.status_code == 413
    assert not Item.objects.filter(title="Huge").exists()


def test_delete_item_is_a_dry_run_until_asked(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    _, collection = corpus
    item = Item.objects.get(collection=collection, title="Backups")
    chunk_count = Chunk.objects.filter(item=item).count()
    dry, still_there, deleted, search, again = call_all(
        in_process_url,
        token,
        [
            ("delete_item", {"item_uid": item.uid}),
            ("list_items", {"collection_uid": collection.uid}),
            ("delete_item", {"item_uid": item.uid, "dry_run": False}),
            ("search", {"query": "restore the database from a dump", "collection_uid": collection.uid}),
            ("delete_item", {"item_uid": item.uid, "dry_run": False}),
        ],
    )
    report = dry.structured_content
    assert report["dry_run"] is True and report["deleted"] is False
    assert report["title"] == "Backups" and report["chunk_count"] == chunk_count
    assert "would delete" in dry.content[0].text
    assert item.uid in {i["uid"] for i in still_there.structured_content["items"]}
    assert (
        deleted.structured_content["deleted"] is True
        and deleted.structured_content["storage_cleaned"] is True
    )
    assert not Item.objects.filter(uid=item.uid).exists()
    assert not Chunk.objects.filter(item_id=item.pk).exists()
    assert all(hit["item"]["uid"] != item.uid for hit in search.structured_content["results"])
    assert again.is_error and item.uid in again.content[0].text


def test_the_token_whitelist_applies_to_write_tools(in_process_url: str) -> None:
    _, reader = create_token(
        user=User.objects.create(username="searcher"), name="read", allowed_tools=["search"]
    )
    body = rpc("tools/call", {"name": "delete_item", "arguments": {"item_uid": "itm_x", "dry_run": False}})
    refused = post(in_process_url, body, reader)
    assert refused.status_code == 403 and "delete_item" in refused.json()["error_description"]
    allowed = sse_payload(
        post(in_process_url, rpc("tools/call", {"name": "search", "arguments": {"query": "x"}}), reader)
    )
    assert "result" in allowed


@pytest.mark.parametrize("dry_run", ["no", "false", "off", "0", 0, 0.0, -0.0, None, [], {}])
def test_delete_item_deletes_only_on_a_real_false(
    in_process_url: str, corpus: tuple[Library, Collection], token: str, dry_run: object
) -> None:
    item = Item.objects.first()
    assert item is not None
    (refused,) = call_all(
        in_process_url, token, [("delete_item", {"item_uid": item.uid, "dry_run": dry_run})]
    )
    assert isinstance(refused, MCPError) and "dry_run" in refused.error.message
    assert Item.objects.filter(pk=item.pk).exists()


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"query": "backups", "limit": True}, "limit"),
        ({"query": "backups", "limit": "5"}, "limit"),
        ({"query": "backups", "limit": 5.0}, "limit"),
        ({"query": "backups", "alpha": True}, "alpha"),
        ({"query": "backups", "rerank": "yes"}, "rerank"),
        ({"query": "backups", "search_types": '["vector"]'}, "search_types"),
    ],
)
def test_search_refuses_coerced_values_naming_the_argument(
    in_process_url: str, token: str, arguments: dict[str, object], named: str
) -> None:
    (refused,) = call_all(in_process_url, token, [("search", arguments)])
    assert isinstance(refused, MCPError) and refused.error.code == -32602
    assert f"{named}:" in refused.error.message


def test_identical_upserts_at_once_create_one_item_and_say_so_once(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    # Once: all of them reported "created" for the one item.
    _, collection = corpus
    arguments = {"collection_uid": collection.uid, "title": "Races", "text": NOTE, "external_id": "races"}
    body = rpc("tools/call", {"name": "upsert_item", "arguments": arguments})
    with ThreadPoolExecutor(max_workers=6) as pool:
        responses = list(pool.map(lambda _: post(in_process_url, body, token), range(6)))
    statuses = sorted(
        sse_payload(response)["result"]["structuredContent"]["status"] for response in responses
    )
    assert statuses == ["created"] + ["unchanged"] * 5
    assert Item.objects.filter(collection=collection, source="external:races").count() == 1


def test_a_failing_chunk_store_is_reported_without_server_paths(
    in_process_url: str, corpus: tuple[Library, Collection], token: str, shared_data_dir: Path
) -> None:
    _, collection = corpus
    # A file where the folder of items must go: every write under it fails.
    blocked = shared_data_dir / "chunks" / "items"
    aside = blocked.with_name("items-aside")
    blocked.mkdir(parents=True, exist_ok=True)
    blocked.rename(aside)
    blocked.write_bytes(b"in the way")
    try:
        arguments = {"collection_uid": collection.uid, "title": "Locks", "text": NOTE, "external_id": "locks"}
        answer = sse_payload(
            post(in_process_url, rpc("tools/call", {"name": "upsert_item", "arguments": arguments}), token)
        )
    finally:
        blocked.unlink()
        aside.rename(blocked)
    text = answer["result"]["content"][0]["text"]
    assert answer["result"]["isError"] is True
    assert "chunk store" in text
    assert str(shared_data_dir) not in text and "/chunks/" not in text, text
    assert not Item.objects.filter(collection=collection, source="external:locks").exists()
    for item in Item.objects.all():
        assert str(shared_data_dir) not in (item.embedding_error or "")
