"""Single sign-on end to end: Chromium (Playwright) signs in through a real OpenID Connect provider
(panva's oidc-provider on Node, started here), the groups claim becomes Django groups, the groups'
grants decide what a search sees; the provider drops a group and the next sign-in loses its library.
And the bad input: a forged or replayed state, ID tokens from another issuer or for another
audience, with `alg: none` or another nonce, a groups claim that is not a list — each refused in one
line, nothing changed."""

from __future__ import annotations

import base64
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from django.contrib.auth.models import Group, User
from joserfc import jwt
from joserfc.jwk import RSAKey

from access import single_sign_on
from access.library_access import Role
from access.library_grants import grant
from access.models import MCPAuditEvent, OIDCIdentity
from mnemosyne.embedding import Embedder
from tests.access.oauth_requests import REDIRECT, exchange, pkce, register
from tests.access.oauth_requests import authorize_url as oauth_authorize_url
from tests.browser import axe_violations, chromium, in_thread, screenshot
from tests.conftest import ingest_fixture_docs
from tests.mcp_server.clients import call_all
from tests.server_fixtures import node_bin, node_env
from tests.servers import ROOT, free_port, uvicorn_server

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

CLIENT_ID = "mnemosyne"
PROVIDER_SCRIPT = Path(__file__).resolve().parent / "oidc_provider.mjs"


class Provider:
    def __init__(self, url: str, config_path: Path, key: RSAKey) -> None:
        self.url, self.config_path, self.key = url, config_path, key

    def set_groups(self, person: str, groups: Any) -> None:
        config = json.loads(self.config_path.read_text())
        config["accounts"][person] = {"groups": groups}
        self.config_path.write_text(json.dumps(config))


@pytest.fixture(scope="module")
def sso_port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory, sso_port: int) -> Iterator[Provider]:
    if not (ROOT / "node_modules" / "oidc-provider" / "package.json").exists():
        pytest.fail("oidc-provider is not in node_modules: run `make test` (npm ci) first", pytrace=False)
    home = tmp_path_factory.mktemp("oidc-provider")
    key = RSAKey.generate_key(
        2048, parameters={"kid": "provider-1", "alg": "RS256", "use": "sig"}, private=True
    )
    config = {
        "clients": [
            {
                "client_id": CLIENT_ID,
                "token_endpoint_auth_method": "none",
                "redirect_uris": [f"http://127.0.0.1:{sso_port}/oidc/callback/"],
                "grant_types": ["authorization_code"],
                "response_types": ["code"],
            }
        ],
        "accounts": {"alice": {"groups": ["engineering"]}},
        "jwks": {"keys": [key.as_dict(private=True)]},
    }
    config_path = home / "config.json"
    config_path.write_text(json.dumps(config))
    port = free_port()
    log = (home / "provider.log").open("wb")
    process = subprocess.Popen(
        [str(node_bin() / "node"), str(PROVIDER_SCRIPT), str(port), str(config_path)],
        cwd=ROOT,
        env=node_env(home),
        stdout=log,
        stderr=log,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/.well-known/openid-configuration", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((home / "provider.log").read_text()[-2000:])
            time.sleep(0.2)
        yield Provider(url, config_path, key)
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()


def sso_settings(provider: Provider) -> dict[str, str]:
    return {
        "OIDC_ISSUER": provider.url,
        "OIDC_CLIENT_ID": CLIENT_ID,
        "OIDC_SCOPES": "openid,email,profile,groups",
        "OIDC_PROVIDER_NAME": "Example IdP",
    }


@pytest.fixture(scope="module")
def sso_server(
    django_db_setup: Any,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
    provider: Provider,
    sso_port: int,
) -> Iterator[str]:
    env = {
        **sso_settings(provider),
        "LIBRARY_ACCESS": "grants",
        "MCP_OAUTH": "builtin",
        "MCP_PUBLIC_BASE_URL": f"http://127.0.0.1:{sso_port}",
    }
    data_dir = tmp_path_factory.mktemp("sso")
    with django_db_blocker.unblock(), uvicorn_server(data_dir, env=env, port=sso_port, log_name="sso") as url:
        yield url


def sign_in_at_provider(page: Any, person: str) -> None:
    """The provider's own (development) sign-in and consent pages."""
    page.fill("input[name=login]", person)
    page.fill("input[name=password]", "any password")
    page.click("button[type=submit]")
    page.wait_for_load_state()
    if page.locator("button[type=submit]", has_text="Continue").count():
        page.click("button[type=submit]")


def test_groups_from_the_provider_decide_what_a_search_sees(
    sso_server: str, provider: Provider, embedder: Embedder
) -> None:
    engineering, _, _ = ingest_fixture_docs(embedder, library="Engineering", collection="manuals")
    personnel, _, _ = ingest_fixture_docs(embedder, library="Personnel", collection="vault")
    grant(library=engineering, role=Role.READER, group=Group.objects.create(name="engineering"), actor="test")
    grant(library=personnel, role=Role.READER, group=Group.objects.create(name="people-ops"), actor="test")
    provider.set_groups("alice", ["engineering"])
    client_id = register(sso_server).json()["client_id"]
    verifier, challenge = pkce()
    codes: list[str] = []

    with chromium() as browser:
        page = browser.new_context().new_page()
        # Nothing listens at the client's redirect URI: the browser's attempt carries the code.
        page.on(
            "request",
            lambda request: (
                codes.append(parse_qs(urlsplit(request.url).query)["code"][0])
                if request.url.startswith(REDIRECT)
                else None
            ),
        )
        page.goto(oauth_authorize_url(sso_server, client_id, challenge, scope="read"))
        # Our sign-in page offers the provider; the person goes there and comes back.
        page.wait_for_selector("text=Sign in with Example IdP")
        assert axe_violations(page) == []
        screenshot(page, "sign-in-with-provider")
        page.click("text=Sign in with Example IdP")
        sign_in_at_provider(page, "alice")
        page.wait_for_url(f"{sso_server}/oauth/consent/**")
        listed = page.locator("input[name=library]").evaluate_all(
            "boxes => boxes.map(box => box.parentElement.textContent.trim())"
        )
        assert listed == ["Engineering"]
        assert axe_violations(page) == []
        screenshot(page, "consent-with-grants")
        with page.expect_request(lambda request: request.url.startswith(REDIRECT)):
            page.click("button[value=allow]")
        # The same sign-in opens the console (another tab, same browser), which shows what her
        # groups' grants reach.
        console = page.context.new_page()
        console.goto(f"{sso_server}/console/")
        assert console.locator("main table tbody th").all_inner_texts() == ["Engineering"]
    assert len(codes) == 1
    access = exchange(sso_server, client_id, codes[0], verifier).json()["access_token"]

    libraries, found = call_all(
        sso_server,
        access,
        [("list_libraries", {}), ("search", {"query": "restore the database from a backup", "limit": 20})],
    )
    assert [row["name"] for row in libraries.structured_content["libraries"]] == ["Engineering"]
    hits = found.structured_content["results"]
    assert hits and {hit["library"]["uid"] for hit in hits} == {engineering.uid}

    alice = User.objects.get(username="alice")
    assert [group.name for group in alice.groups.all()] == ["engineering"]
    assert OIDCIdentity.objects.filter(user=alice, issuer=provider.url, subject="alice").exists()
    assert not alice.has_usable_password()
    assert MCPAuditEvent.objects.filter(kind="sign_in", actor="alice", detail__how="single sign-on").exists()

    # The provider takes alice out of the group; at her next sign-in she leaves it here too, and
    # her OAuth token (unchanged, not revoked) sees nothing from its very next call.
    provider.set_groups("alice", [])
    with chromium() as browser:
        page = browser.new_context().new_page()
        page.goto(f"{sso_server}/oidc/login/?next=/oauth/login/")
        sign_in_at_provider(page, "alice")
        page.wait_for_url(f"{sso_server}/oauth/login/**")
    assert not alice.groups.exists()
    (libraries,) = call_all(sso_server, access, [("list_libraries", {})])
    assert libraries.structured_content["libraries"] == []

    # From the console's own sign-in page: the provider, then back to the console, now empty.
    with chromium() as browser:
        page = browser.new_context().new_page()
        page.goto(f"{sso_server}/console/")
        page.click("text=Sign in with Example IdP")
        sign_in_at_provider(page, "alice")
        page.wait_for_url(f"{sso_server}/console/")
        assert page.locator("main").inner_text().startswith("Libraries\n\nNo library you may see yet.")


def test_a_forged_or_replayed_state_is_refused_and_changes_nothing(
    sso_server: str, provider: Provider
) -> None:
    provider.set_groups("bob", ["engineering"])
    forged = httpx.get(f"{sso_server}/oidc/callback/?code=made-up&state=forged", timeout=30)
    assert forged.status_code == 400
    assert "could not be matched to one started here" in forged.text
    assert "Traceback" not in forged.text
    callbacks: list[str] = []
    with chromium() as browser:
        context = browser.new_context()
        page = context.new_page()
        page.on(
            "request",
            lambda request: callbacks.append(request.url) if "/oidc/callback/" in request.url else None,
        )
        page.goto(f"{sso_server}/oidc/login/?next=/oauth/login/")
        sign_in_at_provider(page, "bob")
        page.wait_for_url(f"{sso_server}/oauth/login/**")
        users_after_sign_in = in_thread(lambda: User.objects.filter(username="bob").count())
        replay = context.new_page()
        replay.goto(callbacks[0])
        assert "could not be matched to one started here" in replay.locator("[role=alert]").inner_text()
    assert users_after_sign_in == 1
    assert User.objects.filter(username="bob").count() == 1
    assert MCPAuditEvent.objects.filter(kind="sign_in_failed", detail__how="single sign-on").count() == 2


def id_token_claims(provider: Provider, **claims: Any) -> dict[str, Any]:
    """An ID token's claims for mallory, good for five minutes, with `claims` over them."""
    now = int(time.time())
    return {
        "iss": provider.url,
        "sub": "mallory",
        "aud": CLIENT_ID,
        "iat": now,
        "exp": now + 300,
        "nonce": "n-1",
        **claims,
    }


def forged_token(key: RSAKey, provider: Provider, **claims: Any) -> str:
    payload = id_token_claims(provider, **{"groups": ["engineering"], **claims})
    return jwt.encode({"alg": "RS256", "kid": key.kid}, payload, key)


def unsigned_token(provider: Provider) -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    claims = id_token_claims(provider)
    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}."


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("another issuer", "not valid"),
        ("another audience", "not valid"),
        ("alg none", "not valid"),
        ("another nonce", "not valid"),
        ("another key", "not valid"),
        ("groups not a list", "is not a list of group names"),
    ],
)
def test_a_bad_id_token_is_refused_in_one_line(
    provider: Provider, settings: Any, case: str, expected: str
) -> None:
    for name, value in sso_settings(provider).items():
        setattr(settings, name, value.split(",") if name == "OIDC_SCOPES" else value)
    key = provider.key
    token = {
        "another issuer": lambda: forged_token(key, provider, iss="http://127.0.0.1:9/evil"),
        "another audience": lambda: forged_token(key, provider, aud="someone-else"),
        "alg none": lambda: unsigned_token(provider),
        "another nonce": lambda: forged_token(key, provider, nonce="n-2"),
        "another key": lambda: forged_token(
            RSAKey.generate_key(2048, parameters={"kid": "provider-1"}, private=True), provider
        ),
        "groups not a list": lambda: forged_token(key, provider, groups="engineering"),
    }[case]()
    users = User.objects.count()
    with pytest.raises(single_sign_on.SignInRefused) as refused:
        claims = single_sign_on.id_token_claims(token, nonce="n-1")
        single_sign_on.person_for(claims)
    message = str(refused.value)
    assert expected in message and "\n" not in message and len(message) < 300, message
    assert User.objects.count() == users
    assert not OIDCIdentity.objects.filter(subject="mallory").exists()


def test_without_local_passwords_only_single_sign_on_is_offered(
    provider: Provider, settings: Any, client: Any
) -> None:
    for name, value in sso_settings(provider).items():
        setattr(settings, name, value.split(",") if name == "OIDC_SCOPES" else value)
    settings.OIDC_LOCAL_PASSWORDS = False
    settings.AUTHENTICATION_BACKENDS = [single_sign_on.SESSION_BACKEND]
    User.objects.create_superuser("root", password="a long enough password")
    page = client.get("/admin/login/")
    assert page.status_code == 200
    assert "Sign in with Example IdP" in page.content.decode()
    assert 'name="password"' not in page.content.decode()
    refused = client.post("/admin/login/", {"username": "root", "password": "a long enough password"})
    assert "_auth_user_id" not in client.session and refused.status_code == 200
