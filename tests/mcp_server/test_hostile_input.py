"""Hostile and malformed requests over HTTP (the app served in-process; a Host it does not serve is
asked of a real server): each gets a short, precise error, never a 500,
and nothing of the server (paths, SQL, the request itself) comes back."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from mnemosyne.library.models import Collection, Library
from tests.mcp_server.clients import JSON_HEADERS, post, rpc

pytestmark = pytest.mark.django_db(transaction=True)

NUL = "\x00"


def assert_refused(response: httpx.Response, code: int, *phrases: str) -> dict[str, Any]:
    assert response.status_code == 400, response.text[:500]
    assert len(response.content) < 1000, "the answer stays short"
    error = response.json()["error"]
    assert error["code"] == code, error
    for phrase in phrases:
        assert phrase in error["message"], error["message"]
    assert "pydantic" not in error["message"] and "Traceback" not in response.text
    return dict(error)


@pytest.mark.parametrize(
    ("method", "params", "path"),
    [
        ("tools/call", {"name": "search", "arguments": {"query": f"back{NUL}up"}}, "params.arguments.query"),
        ("tools/call", {"name": "get_chunk", "arguments": {"chunk_uid": f"chk_{NUL}"}}, "chunk_uid"),
        (
            "tools/call",
            {
                "name": "upsert_item",
                "arguments": {
                    "collection_uid": "col_x",
                    "title": "t",
                    "content": "c",
                    "metadata": {"note": f"a{NUL}b"},
                },
            },
            "params.arguments.metadata.note",
        ),
        ("prompts/get", {"name": "answer_with_citations", "arguments": {"question": NUL}}, "question"),
        (
            "completion/complete",
            {
                "ref": {"type": "ref/resource", "uri": "mnemosyne://libraries/{library_uid}"},
                "argument": {"name": "library_uid", "value": f"lib{NUL}"},
            },
            "params.argument.value",
        ),
    ],
    ids=["search", "get_chunk", "upsert_metadata", "prompt", "completion"],
)
def test_a_nul_character_anywhere_is_refused_by_its_path(
    in_process_url: str, token: str, method: str, params: dict[str, Any], path: str
) -> None:
    # Once: psycopg.DataError escaped ("Error executing tool get_chunk"), -32603, code 0, or
    # PostgreSQL's own error text.
    response = post(in_process_url, rpc(method, params), token)
    assert_refused(response, -32602, path, "NUL")


def test_a_nul_in_a_key_is_refused_too(in_process_url: str, token: str) -> None:
    arguments = {"query": "x", f"k{NUL}": 1}
    response = post(in_process_url, rpc("tools/call", {"name": "search", "arguments": arguments}), token)
    assert_refused(response, -32602, "a key in params.arguments", "NUL")


def test_deep_nesting_is_refused_without_a_token_and_without_a_500(in_process_url: str, token: str) -> None:
    deep_arguments = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":'
    deep_arguments += "[" * 10_000 + "]" * 10_000 + "}}"
    for credential in (None, token):
        assert_refused(post(in_process_url, deep_arguments.encode(), credential), -32600, "nested")
        assert_refused(post(in_process_url, b"[" * 50_000, credential), -32600, "nested")
    # Shallow enough for the parser, deeper than any request needs: named by its path.
    nested: Any = "x"
    for _ in range(40):
        nested = {"a": nested}
    arguments = {"query": "x", "filters": nested}
    response = post(in_process_url, rpc("tools/call", {"name": "search", "arguments": arguments}), token)
    assert_refused(response, -32602, "params.arguments.filters.a", "nested more than 32 levels")


@pytest.mark.parametrize(
    ("body", "phrase"),
    [
        (b"null", "must be an object"),
        (b'"tools/list"', "must be an object"),
        (json.dumps([rpc("tools/list")]).encode(), "batches are not supported"),
        (b"[]", "batches are not supported"),
        (json.dumps({**rpc("tools/list"), "jsonrpc": "1.0"}).encode(), '"jsonrpc" must be "2.0"'),
        (json.dumps({"jsonrpc": "2.0", "id": 1}).encode(), '"method" is missing'),
        (json.dumps({"jsonrpc": "2.0", "id": 1, "method": 7}).encode(), '"method" must be a string'),
        (json.dumps({"jsonrpc": "2.0", "id": [1], "method": "ping"}).encode(), '"id" must be'),
    ],
    ids=["null", "string", "batch", "empty_batch", "jsonrpc_1", "no_method", "method_number", "id_list"],
)
def test_a_malformed_envelope_is_an_invalid_request(
    in_process_url: str, token: str, body: bytes, phrase: str
) -> None:
    # Once: HTTP 400 with -32602 and a pydantic dump with its documentation URL.
    assert_refused(post(in_process_url, body, token), -32600, phrase)


def test_params_that_are_not_an_object_are_invalid_params(in_process_url: str, token: str) -> None:
    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": [1, 2]}
    response = post(in_process_url, body, token)
    assert_refused(response, -32602, '"params" must be an object')
    assert response.json()["id"] == 3, "the id is answered when it could be read"


def test_a_megabyte_uid_is_not_echoed(
    in_process_url: str, corpus: tuple[Library, Collection], token: str
) -> None:
    huge = "lib_" + "x" * 1_000_000
    response = post(
        in_process_url,
        rpc("tools/call", {"name": "list_collections", "arguments": {"library_uid": huge}}),
        token,
    )
    assert response.status_code == 200
    assert len(response.content) < 5_000, len(response.content)
    assert "x" * 2_000 not in response.text


@pytest.mark.parametrize("path", ["/mcp/", "/.well-known/oauth-protected-resource/mcp", "/mcp/health"])
def test_a_host_this_server_does_not_serve_is_refused_before_anything_names_it(
    live_server_url: str, path: str
) -> None:
    # Once: a 401 advertised resource_metadata="http://evil.com/…" to whoever sent Host: evil.com.
    headers = {**JSON_HEADERS, "Host": "evil.com"}
    body = json.dumps(rpc("tools/call", {"name": "list_libraries", "arguments": {}}))
    response = httpx.request(
        "POST" if path == "/mcp/" else "GET", live_server_url + path, headers=headers, content=body
    )
    assert response.status_code == 400
    assert "evil.com" not in response.text
    assert "evil.com" not in response.headers.get("www-authenticate", "")
    # The hosts it does serve still get the challenge, naming themselves.
    served = post(live_server_url, rpc("tools/call", {"name": "list_libraries", "arguments": {}}))
    assert served.status_code == 401
    assert "127.0.0.1" in served.headers["www-authenticate"]
    assert served.headers["x-request-id"]
