"""Bearer JWTs from an identity provider, end to end: a uvicorn server trusting a local JWKS over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from access.models import MCPAuditEvent
from access.services import create_token
from mcp_server.tools.catalog import TOOL_SPECS, WRITE_TOOLS
from mnemosyne.embedding import Embedder
from mnemosyne.library.models import Chunk, Item
from tests.access.jwks_server import ISSUER, JWKSServer, SigningKey, claims, rsa_key
from tests.conftest import ingest_fixture_docs
from tests.mcp_server.clients import call_all, mcp_session, post, rpc, run, sse_payload
from tests.mcp_server.transports.test_http import metric

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def keys(idp: JWKSServer) -> Iterator[dict[str, SigningKey]]:
    """The IdP's published keys by id; whatever a test publishes is undone after it."""
    published = list(idp.keys)
    yield {key.kid: key for key in published}
    idp.publish(*published)


@pytest.fixture
def libraries(embedder: Embedder) -> dict[str, Any]:
    mine, my_collection, _ = ingest_fixture_docs(embedder, library="Handbook", collection="guides")
    theirs, _, _ = ingest_fixture_docs(embedder, library="Secret", collection="vault")
    return {"mine": mine, "my_collection": my_collection, "theirs": theirs}


def call(base: str, raw: str, tool: str, arguments: dict[str, Any] | None = None) -> httpx.Response:
    return post(base, rpc("tools/call", {"name": tool, "arguments": arguments or {}}), raw)


def test_a_jwt_reads_only_inside_the_libraries_its_claims_name(
    identity_server_url: str, keys: dict[str, SigningKey], libraries: dict[str, Any]
) -> None:
    mine, theirs = libraries["mine"], libraries["theirs"]
    raw = keys["rsa-1"].sign(claims(scope="read", libraries=[mine.uid]))
    listed, found, foreign, missing = call_all(
        identity_server_url,
        raw,
        [
            ("list_libraries", {}),
            ("search", {"query": "restore the database", "limit": 50}),
            ("list_items", {"library_uid": theirs.uid}),
            ("list_items", {"library_uid": "lib_" + "0" * 16}),
        ],
    )
    assert [lib["uid"] for lib in listed.structured_content["libraries"]] == [mine.uid]
    assert found.structured_content["results"]
    assert {hit["library"]["uid"] for hit in found.structured_content["results"]} == {mine.uid}
    assert foreign.is_error and missing.is_error
    assert foreign.content[0].text.replace(theirs.uid, "<uid>") == missing.content[0].text.replace(
        "lib_" + "0" * 16, "<uid>"
    )


def test_a_jwt_without_a_libraries_claim_sees_every_library_and_unknown_uids_see_none(
    identity_server_url: str, keys: dict[str, SigningKey], libraries: dict[str, Any]
) -> None:
    everything = keys["rsa-1"].sign(claims())
    nothing = keys["rsa-1"].sign(claims(libraries=["lib_doesnotexist0000"]))
    (wide,) = call_all(identity_server_url, everything, [("list_libraries", {})])
    narrow, search = call_all(
        identity_server_url, nothing, [("list_libraries", {}), ("search", {"query": "backups"})]
    )
    assert {lib["uid"] for lib in wide.structured_content["libraries"]} == {
        libraries["mine"].uid,
        libraries["theirs"].uid,
    }
    assert narrow.structured_content["libraries"] == []
    assert search.structured_content["results"] == []


def test_an_elliptic_curve_jwt_works_too(identity_server_url: str, keys: dict[str, SigningKey]) -> None:
    response = call(identity_server_url, keys["ec-1"].sign(claims()), "list_libraries")
    assert response.status_code == 200 and "result" in sse_payload(response)


@pytest.mark.parametrize("tool", sorted(WRITE_TOOLS))
def test_a_jwt_without_the_write_scope_cannot_write_and_nothing_changes(
    identity_server_url: str, keys: dict[str, SigningKey], libraries: dict[str, Any], tool: str
) -> None:
    collection = libraries["my_collection"]
    item = Item.objects.filter(collection=collection).first()
    assert item is not None
    arguments = {
        "upsert_item": {"collection_uid": collection.uid, "title": "New", "text": "# New\n\nHello."},
        "delete_item": {"item_uid": item.uid, "dry_run": False},
        "sync_source": {"source_uid": "src_nowhere0000000"},
        "run_evaluation": {"evaluation_set_uid": "set_nowhere0000000"},
        "reembed_library": {"library_uid": collection.library.uid},
    }[tool]
    before_metrics = httpx.get(f"{identity_server_url}/metrics").text
    before = (Item.objects.count(), Chunk.objects.count(), MCPAuditEvent.objects.count())
    response = call(identity_server_url, keys["rsa-1"].sign(claims(scope="read")), tool, arguments)
    assert response.status_code == 403
    challenge = response.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="write"' in challenge
    assert (Item.objects.count(), Chunk.objects.count(), MCPAuditEvent.objects.count()) == before
    after_metrics = httpx.get(f"{identity_server_url}/metrics").text
    assert metric(after_metrics, "mcp_auth_failures_total", reason="insufficient_scope") == (
        metric(before_metrics, "mcp_auth_failures_total", reason="insufficient_scope") + 1
    )


def test_a_jwt_with_the_write_scope_writes_and_the_audit_row_names_its_subject(
    identity_server_url: str, keys: dict[str, SigningKey], libraries: dict[str, Any]
) -> None:
    collection = libraries["my_collection"]
    raw = keys["rsa-1"].sign(claims(sub="carol@example.test", scope="read write"))
    arguments = {"collection_uid": collection.uid, "title": "From the IdP", "text": "# Hi\n\nHello."}
    response = call(identity_server_url, raw, "upsert_item", arguments)
    assert not sse_payload(response)["result"].get("isError")
    assert Item.objects.filter(collection=collection, title="From the IdP").exists()
    (row,) = MCPAuditEvent.objects.filter(kind=MCPAuditEvent.Kind.WRITE_TOOL_CALL)
    assert (row.actor, row.token, row.detail["tool"], row.detail["outcome"]) == (
        "jwt:carol@example.test",
        None,
        "upsert_item",
        "ok",
    )


def test_tools_list_with_a_jwt_shows_what_its_scopes_allow(
    identity_server_url: str, keys: dict[str, SigningKey]
) -> None:
    async def names(raw: str) -> set[str]:
        async with mcp_session(identity_server_url, raw, "streamable-http") as session:
            return {tool.name for tool in (await session.list_tools()).tools}

    everything = {spec.name for spec in TOOL_SPECS}
    assert run(lambda: names(keys["rsa-1"].sign(claims(scope="read")))) == everything - WRITE_TOOLS
    assert run(lambda: names(keys["rsa-1"].sign(claims(scope="read write")))) == everything


def refusals(base: str) -> dict[str, float]:
    text = httpx.get(f"{base}/metrics").text
    return {
        reason: metric(text, "mcp_auth_failures_total", reason=reason) for reason in ("invalid", "expired")
    }


def forged(keys: dict[str, SigningKey], case: str) -> str:
    """A bearer JWT that must be refused, for each way one can be wrong."""
    good = keys["rsa-1"]
    if case == "wrong-audience":
        return good.sign(claims(aud="https://another-service.example/mcp"))
    if case == "wrong-issuer":
        return good.sign(claims(iss="https://evil.example/"))
    if case == "expired":
        return good.sign(claims(lifetime=-3600))
    if case == "unknown-key":
        return rsa_key("rsa-never-published").sign(claims())
    if case == "bad-signature":
        return rsa_key("rsa-1").sign(claims())  # the published key's id, another key's signature
    assert case == "tampered"
    header, _, signature = good.sign(claims(scope="read")).split(".")
    _, payload, _ = good.sign(claims(scope="read write")).split(".")
    return f"{header}.{payload}.{signature}"


@pytest.mark.parametrize(
    "case", ["wrong-audience", "wrong-issuer", "expired", "unknown-key", "bad-signature", "tampered"]
)
def test_a_jwt_that_does_not_verify_gets_the_same_401_as_an_invalid_token(
    identity_server_url: str, keys: dict[str, SigningKey], case: str
) -> None:
    # What our own tokens get when invalid (or expired), to compare the JWT's refusal with.
    owner = User.objects.create(username="compare")
    _, lapsed = create_token(user=owner, name="lapsed")
    owner.mcp_tokens.update(expires_at=timezone.now() - timedelta(days=1))
    reference = call(identity_server_url, lapsed if case == "expired" else "mnem_" + "x" * 43, "search")
    before = refusals(identity_server_url)

    for tool in ("list_libraries", "upsert_item"):
        response = call(identity_server_url, forged(keys, case), tool)
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == reference.headers["www-authenticate"]
        assert response.json() == reference.json()
    read = post(
        identity_server_url, rpc("resources/read", {"uri": "mnemosyne://libraries"}), forged(keys, case)
    )
    assert read.status_code == 401  # never downgraded to the anonymous read this server allows

    counted, other = ("expired", "invalid") if case == "expired" else ("invalid", "expired")
    after = refusals(identity_server_url)
    assert (after[counted], after[other]) == (before[counted] + 3, before[other])


def test_a_rotated_key_is_fetched_once_and_then_served_from_the_cache(
    identity_server_url: str, idp: JWKSServer, keys: dict[str, SigningKey]
) -> None:
    first = keys["rsa-1"]
    assert call(identity_server_url, first.sign(claims()), "list_libraries").status_code == 200
    fetched = idp.fetch_count()
    for _ in range(3):
        assert call(identity_server_url, first.sign(claims()), "list_libraries").status_code == 200
    assert idp.fetch_count() == fetched  # cached: the IdP is not asked again

    rotated = rsa_key("rsa-2")
    idp.publish(rotated, keys["ec-1"])
    assert call(identity_server_url, rotated.sign(claims()), "list_libraries").status_code == 200
    assert idp.fetch_count() == fetched + 1  # the unknown key id refetched the set once
    for _ in range(3):
        assert call(identity_server_url, rotated.sign(claims()), "list_libraries").status_code == 200
    assert idp.fetch_count() == fetched + 1
    # The retired key is gone from the set: its tokens no longer verify.
    assert call(identity_server_url, first.sign(claims()), "list_libraries").status_code == 401


def test_a_confined_jwt_sees_only_its_libraries_in_resources(
    identity_server_url: str, keys: dict[str, SigningKey], libraries: dict[str, Any]
) -> None:
    mine, theirs = libraries["mine"], libraries["theirs"]
    raw = keys["rsa-1"].sign(claims(libraries=[mine.uid]))
    listed = sse_payload(post(identity_server_url, rpc("resources/list"), raw))["result"]["resources"]
    assert {r["uri"] for r in listed} == {
        "ui://mnemosyne/evidence.html",
        "mnemosyne://libraries",
        "mnemosyne://ingestion",
        f"mnemosyne://library/{mine.uid}",
    }
    read = sse_payload(
        post(identity_server_url, rpc("resources/read", {"uri": "mnemosyne://libraries"}), raw)
    )
    assert mine.uid in str(read) and theirs.uid not in str(read)


def test_a_jwt_without_the_read_scope_may_not_read_resources(
    identity_server_url: str, keys: dict[str, SigningKey]
) -> None:
    raw = keys["rsa-1"].sign(claims(scope="profile email"))
    response = post(identity_server_url, rpc("resources/read", {"uri": "mnemosyne://libraries"}), raw)
    assert response.status_code == 403 and response.json()["error"] == "insufficient_scope"
    assert call(identity_server_url, raw, "list_libraries").status_code == 403


def test_the_resource_metadata_names_the_issuer_as_the_authorization_server(identity_server_url: str) -> None:
    metadata = httpx.get(f"{identity_server_url}/.well-known/oauth-protected-resource/mcp").json()
    assert metadata["authorization_servers"] == [ISSUER]
