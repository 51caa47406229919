"""The tenant boundary: a token confined to some libraries sees nothing of the others, in any tool."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from mcp.types import CallToolResult

from access.services import create_token
from mnemosyne.embedding import get_embedder
from mnemosyne.library.models import Chunk, Item
from tests.conftest import ingest_fixture_docs
from tests.mcp_server.clients import call_all, post, rpc, sse_payload

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def tenants() -> dict[str, Any]:
    """The same documents in two libraries, a token confined to the first and one that sees both."""
    # The process's model: the stand-in in the fast tier (nothing here judges a ranking).
    embedder = get_embedder()
    mine, my_collection, _ = ingest_fixture_docs(embedder, library="Handbook", collection="guides")
    theirs, their_collection, _ = ingest_fixture_docs(embedder, library="Secret", collection="vault")
    owner = User.objects.create(username="tenant")
    _, confined = create_token(user=owner, name="mine", libraries=[mine], scopes=["read", "write"])
    _, everything = create_token(user=owner, name="all", scopes=["read", "write"])
    return {
        "mine": mine,
        "my_collection": my_collection,
        "theirs": theirs,
        "their_collection": their_collection,
        "their_item": Item.objects.filter(collection=their_collection).first(),
        "their_chunk": Chunk.objects.filter(library=theirs).first(),
        "confined": confined,
        "everything": everything,
    }


def error_text(result: Any, uid: str) -> str:
    assert isinstance(result, CallToolResult) and result.is_error, result
    return result.content[0].text.replace(uid, "<uid>")  # type: ignore[union-attr]


def test_listings_show_only_the_tokens_libraries(in_process_url: str, tenants: dict[str, Any]) -> None:
    mine, theirs = tenants["mine"], tenants["theirs"]
    libraries, collections, items, config = call_all(
        in_process_url,
        tenants["confined"],
        [
            ("list_libraries", {}),
            ("list_collections", {}),
            ("list_items", {"limit": 1000}),
            ("get_collection_config", {}),
        ],
    )
    assert [lib["uid"] for lib in libraries.structured_content["libraries"]] == [mine.uid]
    assert {c["library"]["uid"] for c in collections.structured_content["collections"]} == {mine.uid}
    assert items.structured_content["total"] == Item.objects.filter(collection__library=mine).count()
    assert {c["collection"]["uid"] for c in items.structured_content["items"]} == {
        tenants["my_collection"].uid
    }
    assert {c["library"]["uid"] for c in config.structured_content["collections"]} == {mine.uid}
    assert theirs.uid not in str([libraries, collections, items, config])


def test_search_finds_only_inside_the_boundary(in_process_url: str, tenants: dict[str, Any]) -> None:
    confined, unconfined = (
        call_all(in_process_url, tenants[key], [("search", {"query": "restore the database", "limit": 50})])[
            0
        ]
        for key in ("confined", "everything")
    )
    assert {hit["library"]["uid"] for hit in unconfined.structured_content["results"]} == {
        tenants["mine"].uid,
        tenants["theirs"].uid,
    }
    assert {hit["library"]["uid"] for hit in confined.structured_content["results"]} == {tenants["mine"].uid}


def test_concepts_and_topics_count_only_inside_the_boundary(
    in_process_url: str, tenants: dict[str, Any]
) -> None:
    mine = tenants["mine"].uid
    topics, concepts = call_all(
        in_process_url, tenants["confined"], [("list_topics", {}), ("list_concepts", {})]
    )
    scoped_topics, scoped_concepts = call_all(
        in_process_url,
        tenants["everything"],
        [("list_topics", {"library_uid": mine}), ("list_concepts", {"library_uid": mine})],
    )
    assert topics.structured_content == scoped_topics.structured_content
    assert concepts.structured_content == scoped_concepts.structured_content
    concept = concepts.structured_content["concepts"][0]["concept"]
    (neighbours,) = call_all(
        in_process_url, tenants["confined"], [("get_concept_neighbors", {"concept": concept})]
    )
    examples = {uid for n in neighbours.structured_content["neighbors"] for uid in n["example_chunk_uids"]}
    assert examples and set(
        Chunk.objects.filter(uid__in=examples).values_list("library__uid", flat=True)
    ) == {mine}


@pytest.mark.parametrize(
    ("tool", "argument", "key", "extra"),
    [
        ("get_chunk", "chunk_uid", "their_chunk", {}),
        ("search", "library_uid", "theirs", {"query": "backups"}),
        ("search", "collection_uid", "their_collection", {"query": "backups"}),
        ("list_collections", "library_uid", "theirs", {}),
        ("list_items", "collection_uid", "their_collection", {}),
        ("list_items", "library_uid", "theirs", {}),
        ("list_topics", "library_uid", "theirs", {}),
        ("list_concepts", "collection_uid", "their_collection", {}),
        ("get_collection_config", "collection_uid", "their_collection", {}),
        ("delete_item", "item_uid", "their_item", {"dry_run": False}),
        ("upsert_item", "collection_uid", "their_collection", {"title": "Planted", "text": "# Planted"}),
    ],
)
def test_a_foreign_uid_gives_the_same_error_as_a_missing_one(
    in_process_url: str, tenants: dict[str, Any], tool: str, argument: str, key: str, extra: dict[str, Any]
) -> None:
    foreign = tenants[key].uid
    missing = foreign[:4] + "0" * (len(foreign) - 4)
    items_before, chunks_before = Item.objects.count(), Chunk.objects.count()
    refused, absent = call_all(
        in_process_url,
        tenants["confined"],
        [(tool, {argument: foreign, **extra}), (tool, {argument: missing, **extra})],
    )
    assert error_text(refused, foreign) == error_text(absent, missing)
    assert (Item.objects.count(), Chunk.objects.count()) == (items_before, chunks_before)
    assert Item.objects.filter(collection=tenants["their_collection"], title="Planted").count() == 0


def result_of(base: str, raw: str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    response = post(base, rpc(method, params), raw)
    assert response.status_code == 200, response.text
    return sse_payload(response)


def complete(base: str, raw: str, ref: dict[str, str], name: str, value: str = "") -> list[str]:
    params = {"ref": ref, "argument": {"name": name, "value": value}}
    values: list[str] = result_of(base, raw, "completion/complete", params)["result"]["completion"]["values"]
    return values


def test_resources_show_a_confined_token_only_its_libraries(
    in_process_url: str, tenants: dict[str, Any]
) -> None:
    mine, theirs = tenants["mine"], tenants["theirs"]
    raw = tenants["confined"]
    listed = result_of(in_process_url, raw, "resources/list")["result"]["resources"]
    assert {r["uri"] for r in listed} == {
        "ui://mnemosyne/evidence.html",
        "mnemosyne://libraries",
        "mnemosyne://ingestion",
        f"mnemosyne://library/{mine.uid}",
    }
    everything = result_of(in_process_url, raw, "resources/read", {"uri": "mnemosyne://libraries"})
    (contents,) = everything["result"]["contents"]
    assert [lib["uid"] for lib in json.loads(contents["text"])["libraries"]] == [mine.uid]
    assert theirs.uid not in str(everything) and tenants["their_collection"].uid not in str(everything)
    my_chunk = Chunk.objects.filter(library=mine).first()
    assert my_chunk is not None
    read = result_of(in_process_url, raw, "resources/read", {"uri": f"mnemosyne://chunk/{my_chunk.uid}"})
    assert my_chunk.uid in read["result"]["contents"][0]["text"]


@pytest.mark.parametrize(
    ("template", "key"),
    [
        ("mnemosyne://library/{}", "theirs"),
        ("mnemosyne://item/{}", "their_item"),
        ("mnemosyne://chunk/{}", "their_chunk"),
    ],
)
def test_a_foreign_resource_gives_the_same_error_as_a_missing_one(
    in_process_url: str, tenants: dict[str, Any], template: str, key: str
) -> None:
    foreign = tenants[key].uid
    missing = foreign[:4] + "0" * (len(foreign) - 4)
    errors = [
        result_of(in_process_url, tenants["confined"], "resources/read", {"uri": template.format(uid)})[
            "error"
        ]
        for uid in (foreign, missing)
    ]
    assert json.dumps(errors[0]).replace(foreign, "<uid>") == json.dumps(errors[1]).replace(missing, "<uid>")
    # A token that sees every library does read it.
    seen = result_of(
        in_process_url, tenants["everything"], "resources/read", {"uri": template.format(foreign)}
    )
    assert "result" in seen


def test_completions_offer_a_confined_token_only_its_libraries(
    in_process_url: str, tenants: dict[str, Any]
) -> None:
    base, raw = in_process_url, tenants["confined"]
    prompt = {"type": "ref/prompt", "name": "cite-sources"}
    assert complete(base, raw, prompt, "library") == ["Handbook"]
    assert complete(base, raw, prompt, "collection") == ["guides"]
    assert complete(base, raw, prompt, "collection", "va") == []
    assert complete(base, tenants["everything"], prompt, "collection", "va") == ["vault"]
    template = {"type": "ref/resource", "uri": "mnemosyne://library/{library_uid}"}
    assert complete(base, raw, template, "library_uid") == [tenants["mine"].uid]
    item_template = {"type": "ref/resource", "uri": "mnemosyne://item/{item_uid}"}
    items = complete(base, raw, item_template, "item_uid")
    assert items and set(items) <= set(
        Item.objects.filter(collection__library=tenants["mine"]).values_list("uid", flat=True)
    )
    chunk_template = {"type": "ref/resource", "uri": "mnemosyne://chunk/{chunk_uid}"}
    assert tenants["their_chunk"].uid not in complete(base, raw, chunk_template, "chunk_uid", "chk_")


@pytest.mark.parametrize("argument", ["library", "collection"])
def test_prompts_resolve_only_a_confined_tokens_libraries(
    in_process_url: str, tenants: dict[str, Any], argument: str
) -> None:
    foreign = tenants["theirs" if argument == "library" else "their_collection"].uid
    missing = foreign[:4] + "0" * (len(foreign) - 4)
    errors = [
        result_of(
            in_process_url,
            tenants["confined"],
            "prompts/get",
            {"name": "cite-sources", "arguments": {"question": "How?", argument: uid}},
        )["error"]
        for uid in (foreign, missing)
    ]
    assert json.dumps(errors[0]).replace(foreign, "<uid>") == json.dumps(errors[1]).replace(missing, "<uid>")
    by_name = result_of(
        in_process_url,
        tenants["confined"],
        "prompts/get",
        {
            "name": "cite-sources",
            "arguments": {"question": "How?", argument: "Secret" if argument == "library" else "vault"},
        },
    )
    assert "error" in by_name and foreign not in str(by_name)
    mine = result_of(
        in_process_url,
        tenants["confined"],
        "prompts/get",
        {"name": "cite-sources", "arguments": {"question": "How?", "library": "Handbook"}},
    )
    assert tenants["mine"].uid in str(mine["result"])


def test_concept_weights_count_only_chunks_inside_the_boundary(
    in_process_url: str, tenants: dict[str, Any]
) -> None:
    # The same documents sit in both libraries, so every co-occurrence outside doubles the weight.
    (concepts,) = call_all(in_process_url, tenants["confined"], [("list_concepts", {"limit": 5})])
    for entry in concepts.structured_content["concepts"]:
        arguments = {"concept": entry["concept"], "limit": 100}
        (inside,) = call_all(in_process_url, tenants["confined"], [("get_concept_neighbors", arguments)])
        (everywhere,) = call_all(
            in_process_url, tenants["everything"], [("get_concept_neighbors", arguments)]
        )
        weights_inside = {n["concept"]: n["weight"] for n in inside.structured_content["neighbors"]}
        weights_everywhere = {n["concept"]: n["weight"] for n in everywhere.structured_content["neighbors"]}
        assert weights_inside == {key: weight // 2 for key, weight in weights_everywhere.items()}
        assert all(weight % 2 == 0 for weight in weights_everywhere.values())


def test_a_cursor_does_not_reach_across_the_boundary(in_process_url: str, tenants: dict[str, Any]) -> None:
    (first,) = call_all(in_process_url, tenants["everything"], [("list_libraries", {"limit": 1})])
    cursor = first.structured_content["next_cursor"]
    assert cursor
    (page,) = call_all(
        in_process_url, tenants["confined"], [("list_libraries", {"limit": 1, "cursor": cursor})]
    )
    assert tenants["theirs"].uid not in str(page)
    assert isinstance(page, CallToolResult) and not page.structured_content["libraries"]
