"""OAuth 2.1 sign-in (MCP_OAUTH=builtin), over the wire against uvicorn: the official Python SDK
client's OAuth provider goes from a 401 to a tool call (discovery, registration or a client ID
metadata document, a person's consent, code + PKCE, token, refresh); and every refusal the RFCs ask
for, made with raw HTTP."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import httpx
import httpx2
import pytest
from django.contrib.auth.models import User
from django.utils import timezone
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

from mcp_server.models import OAuthGrant
from mcp_server.models import OAuthToken as TokenRow
from mnemosyne.library.services import ensure_library
from tests.mcp_server.oauth_browser import Browser, document_server
from tests.servers import free_port, uvicorn_server

pytestmark = pytest.mark.django_db(transaction=True)

REDIRECT = "http://127.0.0.1:33418/callback"
PASSWORD = "correct horse battery staple"


@pytest.fixture(scope="module")
def documents() -> dict[str, dict[str, object]]:
    """Client ID metadata documents the https server publishes (filled in by the test using them)."""
    return {}


@pytest.fixture(scope="module")
def oauth_server(
    django_db_setup: None,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
    documents: dict[str, dict[str, object]],
) -> Iterator[dict[str, str]]:
    """uvicorn with the built-in authorization server, and an https server for client documents."""
    data_dir = tmp_path_factory.mktemp("oauth")
    port = free_port()
    with document_server(data_dir, documents) as (documents_url, ca_file):
        env = {
            "MCP_OAUTH": "builtin",
            "MCP_PUBLIC_BASE_URL": f"http://127.0.0.1:{port}",
            "MCP_OAUTH_PRIVATE_CLIENT_DOCUMENTS": "true",
            "SSL_CERT_FILE": str(ca_file),
        }
        with (
            django_db_blocker.unblock(),
            uvicorn_server(data_dir, env=env, port=port, log_name="oauth") as url,
        ):
            yield {"base": url, "documents": documents_url}


@pytest.fixture
def people() -> dict[str, User]:
    staff = User.objects.create_user("olive", password=PASSWORD, is_staff=True)
    plain = User.objects.create_user("pat", password=PASSWORD)
    return {"staff": staff, "plain": plain}


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


def call(
    base: str, token: str, tool: str = "list_libraries", arguments: dict[str, Any] | None = None
) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments or {}},
    }
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
    }
    return httpx.post(f"{base}/mcp/", json=body, headers=headers, timeout=30)


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


# Raw HTTP: each step by hand, to see every refusal.


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


def register(base: str, redirect_uris: list[str] | None = None) -> httpx.Response:
    return httpx.post(
        f"{base}/register",
        json={
            "client_name": "raw client",
            "redirect_uris": redirect_uris or [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
    )


def authorize_url(base: str, client_id: str, challenge: str | None, **overrides: str | None) -> str:
    params: dict[str, str | None] = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "state": "state-1",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "scope": "read write",
        "resource": f"{base}/mcp",
        **overrides,
    }
    return f"{base}/authorize?" + urlencode(
        {key: value for key, value in params.items() if value is not None}
    )


def exchange(base: str, client_id: str, code: str, verifier: str | None) -> httpx.Response:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": client_id,
        "redirect_uri": REDIRECT,
    }
    if verifier is not None:
        form["code_verifier"] = verifier
    return httpx.post(f"{base}/token", data=form)


def refresh(base: str, client_id: str, refresh_token: str) -> httpx.Response:
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id}
    return httpx.post(f"{base}/token", data=form)


def signed_in(base: str, browser: Browser) -> tuple[str, str, str]:
    """A registered client and a code the browser's user consented to: (client_id, code, verifier)."""
    client_id = register(base).json()["client_id"]
    verifier, challenge = pkce()
    browser.authorize(authorize_url(base, client_id, challenge))
    answer = browser.query()
    assert answer["state"] == "state-1", answer
    return client_id, answer["code"], verifier


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


def test_consent_scopes_and_libraries_bound_the_token(
    oauth_server: dict[str, str], people: dict[str, User]
) -> None:
    base = oauth_server["base"]
    handbook = ensure_library(name="Handbook")
    ensure_library(name="Secret")
    browser = Browser(base, "pat", PASSWORD)  # not staff: may not grant write
    browser.answer = {
        "decision": "allow",
        "scope_read": "on",
        "scope_write": "on",
        "library": [str(handbook.pk)],
    }
    client_id, code, verifier = signed_in(base, browser)
    issued = exchange(base, client_id, code, verifier)
    assert issued.status_code == 200, issued.text
    tokens = issued.json()
    assert tokens["scope"] == "read" and tokens["token_type"].lower() == "bearer"
    listed = call(base, tokens["access_token"])
    assert listed.status_code == 200
    assert [lib["name"] for lib in listed.json()["result"]["structuredContent"]["libraries"]] == ["Handbook"]
    # write was not granted: 403 insufficient_scope, as for a read-only mnem_ token.
    writing = call(base, tokens["access_token"], "delete_item", {"item_uid": "itm_x", "confirm": True})
    assert writing.status_code == 403
    assert 'error="insufficient_scope"' in writing.headers["www-authenticate"]


def test_denying_consent(oauth_server: dict[str, str], people: dict[str, User]) -> None:
    base = oauth_server["base"]
    browser = Browser(base, "olive", PASSWORD)
    browser.answer = {"decision": "deny"}
    client_id = register(base).json()["client_id"]
    _, challenge = pkce()
    browser.authorize(authorize_url(base, client_id, challenge))
    assert browser.landed.startswith(REDIRECT)
    assert browser.query() == {"error": "access_denied", "state": "state-1", "iss": base}
    assert not OAuthGrant.objects.exists()


def test_a_code_works_once_and_a_reused_code_revokes_the_sign_in(
    oauth_server: dict[str, str], people: dict[str, User]
) -> None:
    base = oauth_server["base"]
    client_id, code, verifier = signed_in(base, Browser(base, "olive", PASSWORD))
    first = exchange(base, client_id, code, verifier)
    assert first.status_code == 200
    again = exchange(base, client_id, code, verifier)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert call(base, first.json()["access_token"]).status_code == 401  # RFC 6749 §4.1.2


@pytest.mark.parametrize(
    ("verifier", "expected"),
    [
        (None, "invalid_request"),
        ("a-different-verifier-that-is-long-enough-to-be-valid-0000", "invalid_grant"),
    ],
    ids=["missing-verifier", "wrong-verifier"],
)
def test_pkce_verifier_is_required_and_checked(
    oauth_server: dict[str, str], people: dict[str, User], verifier: str | None, expected: str
) -> None:
    base = oauth_server["base"]
    client_id, code, _ = signed_in(base, Browser(base, "olive", PASSWORD))
    refused = exchange(base, client_id, code, verifier)
    assert refused.status_code == 400 and refused.json()["error"] == expected


@pytest.mark.parametrize(
    "overrides",
    [{"code_challenge_method": "plain"}, {"code_challenge": None}],
    ids=["plain", "no-challenge"],
)
def test_authorization_without_s256_pkce_is_refused(
    oauth_server: dict[str, str], overrides: dict[str, str | None]
) -> None:
    base = oauth_server["base"]
    client_id = register(base).json()["client_id"]
    _, challenge = pkce()
    answer = httpx.get(authorize_url(base, client_id, challenge, **overrides))
    # The client and its redirect URI are known: the error goes back to it (RFC 6749 §4.1.2.1).
    assert answer.status_code == 302
    assert answer.headers["location"].startswith(REDIRECT + "?error=invalid_request")


def test_another_resource_is_refused(oauth_server: dict[str, str], people: dict[str, User]) -> None:
    base = oauth_server["base"]
    client_id = register(base).json()["client_id"]
    _, challenge = pkce()
    answer = httpx.get(authorize_url(base, client_id, challenge, resource="https://elsewhere.example/mcp"))
    assert answer.status_code == 302 and "error=invalid_target" in answer.headers["location"]
    # A token bound to another audience (this server's address changed since) is refused at /mcp.
    client_id, code, verifier = signed_in(base, Browser(base, "olive", PASSWORD))
    token = exchange(base, client_id, code, verifier).json()["access_token"]
    OAuthGrant.objects.update(resource="https://old-address.example/mcp")
    refused = call(base, token)
    assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["www-authenticate"]


def test_unregistered_redirect_uris_are_never_followed(oauth_server: dict[str, str]) -> None:
    base = oauth_server["base"]
    client_id = register(base).json()["client_id"]
    _, challenge = pkce()
    for target in ("https://attacker.example/steal", "http://127.0.0.1:33418/other-path"):
        answer = httpx.get(authorize_url(base, client_id, challenge, redirect_uri=target))
        assert answer.status_code == 400 and "location" not in answer.headers
        assert answer.json()["error"] == "invalid_request"
    # A loopback redirect URI may use another port (RFC 8252 §7.3).
    other_port = httpx.get(
        authorize_url(base, client_id, challenge, redirect_uri="http://127.0.0.1:50000/callback")
    )
    assert other_port.status_code == 302 and other_port.headers["location"].startswith(
        f"{base}/oauth/consent/"
    )


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "javascript:alert(1)",
        "http://attacker.example/cb",
        "data:text/html,hi",
        "https://ok.example/cb#fragment",
    ],
)
def test_registration_refuses_dangerous_redirect_uris(
    oauth_server: dict[str, str], redirect_uri: str
) -> None:
    refused = register(oauth_server["base"], [redirect_uri])
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata")


def test_registration_accepts_native_and_web_redirect_uris(oauth_server: dict[str, str]) -> None:
    accepted = register(
        oauth_server["base"],
        [
            "http://localhost:6274/oauth/callback",
            "https://claude.ai/api/mcp/auth_callback",
            "cursor://anysphere.cursor-retrieval/oauth/callback",
        ],
    )
    assert accepted.status_code == 201, accepted.text


def test_refresh_rotates_and_a_replayed_refresh_token_revokes_the_sign_in(
    oauth_server: dict[str, str], people: dict[str, User]
) -> None:
    base = oauth_server["base"]
    client_id, code, verifier = signed_in(base, Browser(base, "olive", PASSWORD))
    first = exchange(base, client_id, code, verifier).json()
    second = refresh(base, client_id, first["refresh_token"])
    assert second.status_code == 200, second.text
    rotated = second.json()
    assert rotated["refresh_token"] != first["refresh_token"]
    assert call(base, rotated["access_token"]).status_code == 200
    assert call(base, first["access_token"]).status_code == 401  # retired with its refresh token
    replay = refresh(base, client_id, first["refresh_token"])
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert call(base, rotated["access_token"]).status_code == 401  # the whole sign-in is revoked
    assert OAuthGrant.objects.get().revoked_at is not None


def test_expired_and_revoked_tokens_are_refused(
    oauth_server: dict[str, str], people: dict[str, User]
) -> None:
    base = oauth_server["base"]
    browser = Browser(base, "olive", PASSWORD)
    client_id, code, verifier = signed_in(base, browser)
    expiring = exchange(base, client_id, code, verifier).json()["access_token"]
    TokenRow.objects.filter(kind=TokenRow.Kind.ACCESS).update(expires_at=timezone.now())
    expired = call(base, expiring)
    assert expired.status_code == 401 and "expired" in expired.headers["www-authenticate"]

    client_id, code, verifier = signed_in(base, browser)
    tokens = exchange(base, client_id, code, verifier).json()
    assert call(base, tokens["access_token"]).status_code == 200
    # The SDK's revocation endpoint needs the client_secret field even from a public client (empty).
    form = {"token": tokens["refresh_token"], "client_id": client_id, "client_secret": ""}
    revoked = httpx.post(f"{base}/revoke", data=form)
    assert revoked.status_code == 200
    refused = call(base, tokens["access_token"])
    assert refused.status_code == 401 and "revoked" in refused.headers["www-authenticate"]


def test_the_admin_lists_and_revokes_grants(
    oauth_server: dict[str, str], people: dict[str, User], admin_client: Any
) -> None:
    base = oauth_server["base"]
    client_id, code, verifier = signed_in(base, Browser(base, "olive", PASSWORD))
    token = exchange(base, client_id, code, verifier).json()["access_token"]
    grant = OAuthGrant.objects.get()
    listing = admin_client.get("/admin/mcp_server/oauthgrant/")
    assert listing.status_code == 200 and b"olive" in listing.content and b"raw client" in listing.content
    answer = admin_client.post(
        "/admin/mcp_server/oauthgrant/", {"action": "revoke", "_selected_action": [grant.pk]}
    )
    assert answer.status_code == 302
    assert call(base, token).status_code == 401


def test_oauth_off_serves_no_authorization_server(live_server_url: str) -> None:
    assert httpx.get(f"{live_server_url}/.well-known/oauth-authorization-server").status_code == 404
    assert httpx.get(f"{live_server_url}/oauth/login/").status_code == 404
    assert httpx.post(f"{live_server_url}/token", data={}).status_code == 404
