"""The reading tools beyond search: concepts, topics, collection config, paging, get_chunk's context.
Through the official client, served in-process; the collection's configuration names the real
model, so that test asks a real server."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from mnemosyne.library.models import Chunk, Collection, Item, Library
from mnemosyne.library.services import ensure_collection
from tests.mcp_server.clients import call_all

pytestmark = pytest.mark.django_db(transaction=True)


def test_list_concepts_pages_the_most_mentioned_with_counts(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    library, collection = corpus
    (everything,) = call_all(in_process_url, token, [("list_concepts", {"limit": 500})])
    concepts = everything.structured_content["concepts"]
    assert everything.structured_content["next_cursor"] is None
    assert {"backup", "cold storage", "sticky session"} <= {c["concept"] for c in concepts}
    counts = [c["mention_count"] for c in concepts]
    assert counts == sorted(counts, reverse=True) and min(counts) >= 1

    (first,) = call_all(in_process_url, token, [("list_concepts", {"limit": 5})])
    cursor = first.structured_content["next_cursor"]
    second, in_library, in_collection, tampered, misused, unknown = call_all(
        in_process_url,
        token,
        [
            ("list_concepts", {"limit": 5, "cursor": cursor}),
            ("list_concepts", {"library_uid": library.uid, "limit": 500}),
            ("list_concepts", {"collection_uid": collection.uid, "limit": 500}),
            ("list_concepts", {"limit": 5, "cursor": cursor[:-3] + "abc"}),
            ("list_topics", {"limit": 5, "cursor": cursor}),
            ("list_concepts", {"library_uid": "lib_missing"}),
        ],
    )
    page_one = [c["concept"] for c in first.structured_content["concepts"]]
    page_two = [c["concept"] for c in second.structured_content["concepts"]]
    assert page_one + page_two == [c["concept"] for c in concepts[:10]]
    assert in_library.structured_content["concepts"] == concepts
    assert in_collection.structured_content["concepts"] == concepts
    assert tampered.error.code == -32602 and "cursor" in str(tampered)
    assert misused.error.code == -32602 and "not a list_topics cursor" in str(misused)
    assert unknown.is_error and "lib_missing" in unknown.content[0].text


def test_get_concept_neighbors_gives_weights_and_example_chunks(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    found, unknown, empty = call_all(
        in_process_url,
        token,
        [
            ("get_concept_neighbors", {"concept": "Sticky Sessions", "limit": 50}),
            ("get_concept_neighbors", {"concept": "zebra crossing"}),
            ("get_concept_neighbors", {"concept": ""}),
        ],
    )
    result = found.structured_content
    assert result["concept"] == "sticky session"  # normalised: case and plural
    neighbours = {n["concept"]: n for n in result["neighbors"]}
    assert "client" in neighbours
    client = neighbours["client"]
    assert client["weight"] >= 1 and client["example_chunk_uids"]
    chunk = Chunk.objects.select_related("item").get(uid=client["example_chunk_uids"][0])
    assert chunk.item.title == "Scaling the service"
    assert unknown.is_error and "zebra crossing" in unknown.content[0].text
    assert empty.error.code == -32602 and "concept" in str(empty)


def test_list_topics_counts_headings_at_the_depth_asked(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    library, _ = corpus
    two, one, paged, too_deep = call_all(
        in_process_url,
        token,
        [
            ("list_topics", {"library_uid": library.uid}),
            ("list_topics", {"depth": 1}),
            ("list_topics", {"limit": 4}),
            ("list_topics", {"depth": 9}),
        ],
    )
    result = two.structured_content
    headings = {t["heading"]: t for t in result["topics"]}
    assert {"Backups › Restoring", "Backups › Schedule", "Scaling the service › Workers"} <= set(headings)
    assert headings["Backups › Restoring"] == {
        "heading": "Backups › Restoring",
        "item_count": 1,
        "chunk_count": 1,
    }
    assert result["total_items"] == 3 and result["total_chunks"] == Chunk.objects.count()
    assert result["total_topics"] == len(result["topics"]) and result["next_cursor"] is None
    assert (
        sum(t["chunk_count"] for t in result["topics"]) + result["unsectioned_chunks"]
        == result["total_chunks"]
    )
    assert {t["heading"]: t["chunk_count"] for t in one.structured_content["topics"]} == {
        "Backups": 3,
        # Its title has nothing under it before "## Workers": the title joins that section's chunk.
        "Scaling the service": 2,
    }
    assert len(paged.structured_content["topics"]) == 4 and paged.structured_content["next_cursor"]
    assert too_deep.error.code == -32602 and "depth" in str(too_deep)


def test_get_collection_config_describes_indexing_search_and_counts(
    live_server_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    library, collection = corpus
    empty = ensure_collection(library=library, name="drafts")
    one, every, unknown = call_all(
        live_server_url,
        token,
        [
            ("get_collection_config", {"collection_uid": collection.uid}),
            ("get_collection_config", {}),
            ("get_collection_config", {"collection_uid": "col_missing"}),
        ],
    )
    (config,) = one.structured_content["collections"]
    assert config["uid"] == collection.uid and config["library"] == {"uid": library.uid, "name": library.name}
    assert config["embedding"]["model"] == "all-MiniLM-L6-v2" and config["embedding"]["dimensions"] == 384
    assert config["embedding"]["index"] == {
        "kind": "hnsw",
        "distance": "cosine",
        "m": 16,
        "ef_construction": 64,
        "ef_search": 100,
    }
    assert config["chunking"] == {"max_tokens": 200, "overlap_tokens": 40, "structure_aware": True}
    assert config["search_defaults"]["search_types"] == ["vector", "fulltext", "graph"]
    assert config["search_defaults"]["rerank_configured"] is False
    counts = config["counts"]
    assert counts["items"] == Item.objects.filter(collection=collection).count() == 3
    assert counts["items_by_status"]["complete"] == 3 and counts["stale_items"] == 0
    assert counts["chunks"] == Chunk.objects.filter(collection=collection).count()
    assert [c["uid"] for c in every.structured_content["collections"]] == [empty.uid, collection.uid]
    assert every.structured_content["collections"][0]["counts"]["items"] == 0
    assert unknown.is_error and "col_missing" in unknown.content[0].text


def test_listings_page_with_signed_cursors(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    library, collection = corpus
    first, libraries, collections = call_all(
        in_process_url,
        token,
        [
            ("list_items", {"collection_uid": collection.uid, "limit": 2}),
            ("list_libraries", {"limit": 1}),
            ("list_collections", {"library_uid": library.uid}),
        ],
    )
    cursor = first.structured_content["next_cursor"]
    second, other_filter = call_all(
        in_process_url,
        token,
        [
            ("list_items", {"collection_uid": collection.uid, "limit": 2, "cursor": cursor}),
            ("list_items", {"library_uid": library.uid, "limit": 2, "cursor": cursor}),
        ],
    )
    uids = [i["uid"] for i in first.structured_content["items"] + second.structured_content["items"]]
    assert len(set(uids)) == 3 and second.structured_content["next_cursor"] is None
    assert first.structured_content["total"] == second.structured_content["total"] == 3
    assert other_filter.error.code == -32602 and "different query" in str(other_filter)
    assert libraries.structured_content == {
        "libraries": [
            {"uid": library.uid, "name": "Handbook", "library_type": "documentation", "description": ""}
        ],
        "next_cursor": None,
    }
    assert [c["uid"] for c in collections.structured_content["collections"]] == [collection.uid]


def test_get_chunk_returns_neighbouring_chunks_as_context(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    middle = Chunk.objects.get(item__title="Backups", ordinal=1)
    (result,) = call_all(in_process_url, token, [("get_chunk", {"chunk_uid": middle.uid, "context": 5})])
    chunk = result.structured_content
    assert [n["ordinal"] for n in chunk["context_before"]] == [0]
    assert [n["ordinal"] for n in chunk["context_after"]] == [2]
    assert chunk["previous_chunk_uid"] == chunk["context_before"][0]["chunk_uid"]
    assert "Restoring" in chunk["context_after"][0]["section"]


def test_get_collection_config_reports_the_index_as_rebuilt(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    _, collection = corpus
    call_command(
        "rebuild_vector_index",
        "--m",
        "24",
        "--ef-construction",
        "96",
        "--dimensions",
        "384",
        stdout=StringIO(),
    )
    try:
        (one,) = call_all(
            in_process_url, token, [("get_collection_config", {"collection_uid": collection.uid})]
        )
    finally:
        call_command(
            "rebuild_vector_index",
            "--m",
            "16",
            "--ef-construction",
            "64",
            "--dimensions",
            "384",
            stdout=StringIO(),
        )
    (config,) = one.structured_content["collections"]
    assert (config["embedding"]["index"]["m"], config["embedding"]["index"]["ef_construction"]) == (24, 96)
