"""OAuth 2.1 sign-in refused as the RFCs say, each step by hand against uvicorn: denied consent,
a reused code, PKCE missing, wrong or `plain`, another resource or audience, unregistered and
dangerous redirect URIs, refresh token replay, expired and revoked tokens; and what a consent
grants bounds what the token may do."""

from __future__ import annotations

import httpx
import pytest
from django.contrib.auth.models import User
from django.utils import timezone

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
    refresh,
    register,
    signed_in,
)

pytestmark = pytest.mark.django_db(transaction=True)


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
