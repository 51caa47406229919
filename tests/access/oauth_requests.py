"""Raw OAuth requests for the tests, each step by hand: registering a client, PKCE, the
authorization URL, the token endpoint, and a tool call with a bearer token."""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import Any
from urllib.parse import urlencode

import httpx

from tests.access.oauth_browser import Browser

REDIRECT = "http://127.0.0.1:33418/callback"
PASSWORD = "correct horse battery staple"


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
