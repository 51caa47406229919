"""Signed results: a client verifies them with its token's digest; replays and stale requests fail."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User

from access import tokens
from access.services import create_token, remember_nonce
from tests.mcp_server.clients import post, rpc, sse_payload

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_signature_verifies_and_any_change_breaks_it() -> None:
    block = tokens.signature_block(
        key="k" * 64, tool="search", arguments={"query": "x"}, result={"a": 1}, nonce="n1", timestamp=100
    )
    assert tokens.verify("k" * 64, block, arguments={"query": "x"}, result={"a": 1})
    assert not tokens.verify("k" * 64, block, arguments={"query": "y"}, result={"a": 1})
    assert not tokens.verify("k" * 64, block, arguments={"query": "x"}, result={"a": 2})
    assert not tokens.verify("j" * 64, block, arguments={"query": "x"}, result={"a": 1})


def test_a_timestamp_is_fresh_within_five_minutes() -> None:
    assert tokens.timestamp_is_fresh(1000, 1000 + 300)
    assert not tokens.timestamp_is_fresh(1000, 1000 + 301)
    assert not tokens.timestamp_is_fresh(1000 + 301, 1000)


def test_a_nonce_is_remembered_once() -> None:
    token, _ = create_token(user=User.objects.create(username="noncer"), name="n", sign_results=True)
    assert remember_nonce(token=token, nonce="abc")
    assert not remember_nonce(token=token, nonce="abc")


def call(base: str, raw: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    body = rpc("tools/call", {"name": "list_libraries", "arguments": {"limit": 5}})
    result: dict[str, Any] = sse_payload(post(base, body, raw, headers=headers))["result"]
    return result


def test_results_of_a_signing_token_verify_and_a_replayed_nonce_is_refused(in_process_url: str) -> None:
    _, raw = create_token(user=User.objects.create(username="signer"), name="s", sign_results=True)
    _, plain = create_token(user=User.objects.create(username="plain"), name="p")
    key = tokens.digest(raw)
    nonce = uuid.uuid4().hex
    headers = {"Mcp-Request-Nonce": nonce, "Mcp-Request-Timestamp": str(int(time.time()))}
    signed = call(in_process_url, raw, headers)
    block = signed["_meta"][tokens.SIGNATURE_META_KEY]
    assert (block["nonce"], block["tool"]) == (nonce, "list_libraries")
    assert tokens.verify(key, block, arguments={"limit": 5}, result=signed["structuredContent"])
    replay = call(in_process_url, raw, headers)
    assert replay["isError"] and "nonce" in replay["content"][0]["text"]
    stale = {"Mcp-Request-Nonce": uuid.uuid4().hex, "Mcp-Request-Timestamp": str(int(time.time()) - 600)}
    assert call(in_process_url, raw, stale)["isError"]
    unsigned = call(in_process_url, plain)
    assert tokens.SIGNATURE_META_KEY not in unsigned.get("_meta", {})
    no_nonce = call(in_process_url, raw)
    assert tokens.verify(
        key,
        no_nonce["_meta"][tokens.SIGNATURE_META_KEY],
        arguments={"limit": 5},
        result=no_nonce["structuredContent"],
    )
