"""OAuth 2.1 sign-in (MCP_OAUTH=builtin), over the wire against uvicorn: the official Python SDK
client's OAuth provider goes from a 401 to a tool call (discovery, registration or a client ID
metadata document, a person's consent, code + PKCE, token, refresh); the metadata documents; the
admin's grants. The refusals the RFCs ask for are in test_oauth_refusals.py."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import httpx2
import pytest
from django.contrib.auth.models import User
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.exceptions import OAuthFlowError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from access.models import OAuthGrant
from access.models import OAuthToken as TokenRow
from mnemosyne.library.services import ensure_library
from tests.access.oauth_browser import Browser
from tests.access.oauth_requests import (
    PASSWORD,
    REDIRECT,
    authorize_url,
    call,
    exchange,
    pkce,
    signed_in,
)

pytestmark = pytest.mark.django_db(transaction=True)


class Memory:
    """The SDK client's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def sdk_client(
    base: str, browser: Browser, storage: Memory, *, state: str | None = None, **options: Any
) -> OAuthClientProvider:
    """The SDK's OAuth provider; its redirect handler is the browser, its callback reads where it landed."""

    async def redirect_handler(url: str) -> None:
        await asyncio.to_thread(browser.authorize, url)

    async def callback_handler() -> AuthorizationCodeResult:
        answer = browser.query()
        return AuthorizationCodeResult(
            code=answer.get("code", ""), state=state or answer.get("state"), iss=answer.get("iss")
        )

    metadata = OAuthClientMetadata(
        client_name="SDK test client",
        redirect_uris=[REDIRECT],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        scope="read write",
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=f"{base}/mcp/",
        client_metadata=metadata,
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        **options,
    )


async def list_libraries(base: str, auth: OAuthClientProvider) -> list[str]:
    async with (
        httpx2.AsyncClient(auth=auth, timeout=30) as http,
        streamable_http_client(f"{base}/mcp/", http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        result = await session.call_tool("list_libraries", {})
        assert not result.is_error, result
        assert result.structured_content is not None
        return [library["name"] for library in result.structured_content["libraries"]]


def test_the_sdk_client_signs_in_and_calls_a_tool(
    oauth_server: dict[str, str], people: dict[str, User]
) -> None:
    base = oauth_server["base"]
    ensure_library(name="Handbook")
    ensure_library(name="Secret")
    browser = Browser(base, "olive", PASSWORD)
    storage = Memory()
    assert asyncio.run(list_libraries(base, sdk_client(base, browser, storage))) == ["Handbook", "Secret"]
    # Registered dynamically, then consented to: one grant with both scopes, bound to /mcp.
    assert storage.client is not None and storage.tokens is not None
    grant = OAuthGrant.objects.get()
    assert (grant.user.username, grant.scopes, grant.resource) == ("olive", ["read", "write"], f"{base}/mcp")
    assert grant.client.client_id == storage.client.client_id
    assert storage.tokens.access_token.startswith("mnoa_") and storage.tokens.refresh_token
    assert browser.query()["iss"] == base  # RFC 9207
    # Only digests are stored.
    assert not TokenRow.objects.filter(digest=storage.tokens.access_token).exists()
    # The same access token works for a plain HTTP client.
    assert call(base, storage.tokens.access_token).status_code == 200


def test_a_client_known_by_its_metadata_document(
    oauth_server: dict[str, str], documents: dict[str, dict[str, object]], people: dict[str, User]
) -> None:
    base = oauth_server["base"]
    client_id = f"{oauth_server['documents']}/clients/editor.json"
    documents["/clients/editor.json"] = {
        "client_id": client_id,
        "client_name": "Editor",
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    ensure_library(name="Handbook")
    browser = Browser(base, "olive", PASSWORD)
    auth = sdk_client(base, browser, Memory(), client_metadata_url=client_id)
    assert asyncio.run(list_libraries(base, auth)) == ["Handbook"]
    grant = OAuthGrant.objects.get()
    assert grant.client.client_id == client_id and grant.client.from_metadata_document
    assert grant.client.name == "Editor"
    # A document whose client_id is not its own URL is refused: the client is unknown.
    documents["/clients/liar.json"] = {
        **documents["/clients/editor.json"],
        "client_id": "https://elsewhere.example/c",
    }
    _, challenge = pkce()
    liar = httpx.get(authorize_url(base, f"{oauth_server['documents']}/clients/liar.json", challenge))
    assert liar.status_code == 400 and "not found" in liar.json()["error_description"]


def test_the_sdk_client_refuses_a_state_it_did_not_send(
    oauth_server: dict[str, str], people: dict[str, User]
) -> None:
    base = oauth_server["base"]
    browser = Browser(base, "olive", PASSWORD)
    auth = sdk_client(base, browser, Memory(), state="forged-state")
    with pytest.raises(Exception) as raised:
        asyncio.run(list_libraries(base, auth))
    assert _contains(raised.value, OAuthFlowError)


def _contains(error: BaseException, kind: type[BaseException]) -> bool:
    if isinstance(error, kind):
        return True
    if isinstance(error, BaseExceptionGroup):
        return any(_contains(inner, kind) for inner in error.exceptions)
    return error.__cause__ is not None and _contains(error.__cause__, kind)


def test_metadata_documents(oauth_server: dict[str, str]) -> None:
    base = oauth_server["base"]
    server = httpx.get(f"{base}/.well-known/oauth-authorization-server").json()
    assert server["issuer"] == base
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert server["registration_endpoint"] == f"{base}/register"
    assert server["revocation_endpoint"] == f"{base}/revoke"
    assert server["client_id_metadata_document_supported"] is True
    assert server["authorization_response_iss_parameter_supported"] is True
    assert set(server["scopes_supported"]) == {"read", "write"}
    resource = httpx.get(f"{base}/.well-known/oauth-protected-resource/mcp").json()
    assert resource["resource"] == f"{base}/mcp" and resource["authorization_servers"] == [base]
    refused = httpx.post(
        f"{base}/mcp/",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "list_libraries", "arguments": {}},
        },
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert refused.status_code == 401
    assert (
        f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
        in refused.headers["www-authenticate"]
    )


def test_the_admin_lists_and_revokes_grants(
    oauth_server: dict[str, str], people: dict[str, User], admin_client: Any
) -> None:
    base = oauth_server["base"]
    client_id, code, verifier = signed_in(base, Browser(base, "olive", PASSWORD))
    token = exchange(base, client_id, code, verifier).json()["access_token"]
    grant = OAuthGrant.objects.get()
    listing = admin_client.get("/admin/access/oauthgrant/")
    assert listing.status_code == 200 and b"olive" in listing.content and b"raw client" in listing.content
    answer = admin_client.post(
        "/admin/access/oauthgrant/", {"action": "revoke", "_selected_action": [grant.pk]}
    )
    assert answer.status_code == 302
    assert call(base, token).status_code == 401


def test_oauth_off_serves_no_authorization_server(live_server_url: str) -> None:
    assert httpx.get(f"{live_server_url}/.well-known/oauth-authorization-server").status_code == 404
    assert httpx.get(f"{live_server_url}/oauth/login/").status_code == 404
    assert httpx.post(f"{live_server_url}/token", data={}).status_code == 404
