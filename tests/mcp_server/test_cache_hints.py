"""2026-07-28's cache hints as a client reads them: what depends on the caller is private, only
what is the same for everyone public, each with the time mcp_server/cache_hints.py gives; a
2025-11-25 answer carries none (the fields are not in that revision)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_server import evidence_app
from mnemosyne.library.models import Chunk, Collection, Library
from tests.mcp_server.clients import modern, post, rpc, sse_payload

pytestmark = pytest.mark.django_db(transaction=True)
MINUTE = 60_000


def _hint(base: str, token: str, method: str, params: dict[str, Any]) -> tuple[Any, Any]:
    body, headers = modern(method, params, name=params.get("uri") or params.get("name"))
    result = sse_payload(post(base, body, token, headers=headers))["result"]
    return result.get("ttlMs"), result.get("cacheScope")


def test_each_cacheable_answer_says_how_long_and_to_whom(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    library, collection = corpus
    chunk = Chunk.objects.filter(collection=collection).first()
    assert chunk is not None
    asked = {
        ("server/discover", ""): (10 * MINUTE, "public"),
        ("tools/list", ""): (5 * MINUTE, "private"),
        ("prompts/list", ""): (10 * MINUTE, "public"),
        ("resources/templates/list", ""): (10 * MINUTE, "public"),
        ("resources/list", ""): (MINUTE, "private"),
        ("resources/read", evidence_app.APP_URI): (60 * MINUTE, "public"),
        ("resources/read", f"mnemosyne://library/{library.uid}"): (MINUTE, "private"),
        ("resources/read", f"mnemosyne://chunk/{chunk.uid}"): (MINUTE, "private"),
        ("resources/read", "mnemosyne://ingestion"): (0, "private"),
    }
    for (method, uri), expected in asked.items():
        assert _hint(in_process_url, token, method, {"uri": uri} if uri else {}) == expected, (method, uri)


def test_a_2025_answer_has_no_cache_fields(in_process_url: str, token: str) -> None:
    answered = sse_payload(post(in_process_url, rpc("resources/read", {"uri": evidence_app.APP_URI}), token))[
        "result"
    ]
    assert answered["contents"] and "ttlMs" not in answered and "cacheScope" not in answered
    listed = sse_payload(post(in_process_url, rpc("tools/list"), token))["result"]
    assert listed["tools"] and "ttlMs" not in listed
