"""A deletion confirmed by the person (2026-07-28 multi-round-trip input), over HTTP as a client
sends it: the first call asks, the item stays; a no leaves it; the yes of another call does not
count; a yes deletes. A client that cannot ask, or a dry run, is served as before."""

from __future__ import annotations

from typing import Any

import pytest

from mnemosyne.library.models import Collection, Item, Library
from tests.mcp_server.clients import MODERN, post, rpc, sse_payload

pytestmark = pytest.mark.django_db(transaction=True)
ASKS: dict[str, Any] = {"elicitation": {"form": {}}}


def _call(base: str, token: str, arguments: dict[str, Any], capabilities: dict[str, Any], **more: Any) -> Any:
    answer = _answer(base, token, arguments, capabilities, **more)
    assert "result" in answer, answer
    return answer["result"]


def _answer(
    base: str, token: str, arguments: dict[str, Any], capabilities: dict[str, Any], **more: Any
) -> Any:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    }
    params = {"name": "delete_item", "arguments": arguments, "_meta": meta, **more}
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "delete_item"}
    return sse_payload(post(base, rpc("tools/call", params), token, headers=headers))


def test_the_person_is_asked_and_only_their_yes_to_this_call_deletes(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    library, collection = corpus
    first, other = Item.objects.filter(collection=collection).order_by("pk")[:2]
    arguments = {"item_uid": first.uid, "dry_run": False}

    asked = _call(in_process_url, token, arguments, ASKS)
    assert asked["resultType"] == "input_required"
    (request,) = asked["inputRequests"].values()
    assert request["method"] == "elicitation/create" and request["params"]["mode"] == "form"
    assert first.title in request["params"]["message"] and library.name in request["params"]["message"]
    assert request["params"]["requestedSchema"]["required"] == ["delete"]
    state = asked["requestState"]
    assert first.uid not in state and Item.objects.filter(pk=first.pk).exists()
    (key,) = asked["inputRequests"]

    declined = _call(
        in_process_url,
        token,
        arguments,
        ASKS,
        inputResponses={key: {"action": "decline"}},
        requestState=state,
    )
    assert declined["isError"] is True and "not deleted" in declined["content"][0]["text"]
    assert Item.objects.filter(pk=first.pk).exists()

    # The yes given to the question about another item, or to no question, is refused (the SDK
    # seals the state and binds it to the tool and its arguments); nothing is deleted.
    other_state = _call(in_process_url, token, {"item_uid": other.uid, "dry_run": False}, ASKS)[
        "requestState"
    ]
    yes = {key: {"action": "accept", "content": {"delete": True}}}
    for wrong in (other_state, "not-sealed"):
        refused = _answer(in_process_url, token, arguments, ASKS, inputResponses=yes, requestState=wrong)
        assert refused["error"]["code"] == -32602 and "requestState" in refused["error"]["message"]
    assert Item.objects.filter(pk=first.pk).exists()

    deleted = _call(in_process_url, token, arguments, ASKS, inputResponses=yes, requestState=state)
    assert deleted["structuredContent"]["deleted"] is True
    assert not Item.objects.filter(pk=first.pk).exists()


def test_a_client_that_cannot_ask_or_a_dry_run_is_served_as_before(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    _, collection = corpus
    first, second = Item.objects.filter(collection=collection).order_by("pk")[:2]
    dry = _call(in_process_url, token, {"item_uid": first.uid}, ASKS)
    assert dry["structuredContent"]["deleted"] is False and dry["structuredContent"]["dry_run"] is True
    unasked = _call(in_process_url, token, {"item_uid": first.uid, "dry_run": False}, {})
    assert unasked["structuredContent"]["deleted"] is True
    legacy = sse_payload(
        post(
            in_process_url,
            rpc(
                "tools/call", {"name": "delete_item", "arguments": {"item_uid": second.uid, "dry_run": False}}
            ),
            token,
        )
    )["result"]
    assert legacy["structuredContent"]["deleted"] is True


def test_an_item_the_caller_cannot_see_is_not_described(in_process_url: str, token: str) -> None:
    answer = _call(in_process_url, token, {"item_uid": "itm_nowhere00000000", "dry_run": False}, ASKS)
    assert answer["isError"] is True and "itm_nowhere00000000" in answer["content"][0]["text"]
    assert "inputRequests" not in answer
