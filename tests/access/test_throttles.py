"""Abuse limits over real HTTP: failed authentications per address, calls per tool per caller,
streams that need a caller and end when idle; and failed admin logins per address."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from access.services import create_token
from tests.mcp_server.clients import post, rpc
from tests.mcp_server.transports.test_http import metric
from tests.servers import uvicorn_server

pytestmark = pytest.mark.django_db(transaction=True)

LIST = rpc("tools/call", {"name": "list_libraries", "arguments": {}})
SEARCH = rpc("tools/call", {"name": "search", "arguments": {"query": "tides"}})


@pytest.fixture(scope="module")
def limited_server_url(django_db_blocker, shared_data_dir: Path) -> Iterator[str]:
    env = {
        "MCP_AUTH_FAILURES_PER_MINUTE": "5",
        "MCP_TOOL_RATE_LIMITS": "list_libraries=3",
        "MCP_STREAM_IDLE_SECONDS": "4",
        "MCP_STREAM_UNAUTHENTICATED_SECONDS": "2",
    }
    with django_db_blocker.unblock(), uvicorn_server(shared_data_dir, env=env, log_name="limited") as url:
        yield url


def within_one_minute() -> None:
    """Start a burst early enough in a minute that the fixed window does not restart midway: a
    burst is a few requests, well under the 8 s left."""
    second = time.gmtime().tm_sec
    if second > 52:
        time.sleep(61 - second)


def test_an_address_that_keeps_failing_is_throttled_even_with_the_right_token(
    limited_server_url: str,
) -> None:
    # Once: 111 invalid tokens a second were answered, none slowed.
    _, good = create_token(user=User.objects.create(username="patient"), name="p")
    within_one_minute()
    # As a client behind a proxy uvicorn trusts (127.0.0.1) would be seen: by X-Forwarded-For.
    client = {"X-Forwarded-For": "198.51.100.7"}
    before = httpx.get(f"{limited_server_url}/metrics").text
    bad = [
        post(limited_server_url, LIST, f"mnem_{'x' * 40}{n}", headers=client).status_code for n in range(5)
    ]
    over = post(limited_server_url, LIST, "mnem_" + "y" * 41, headers=client)
    right = post(limited_server_url, LIST, good, headers=client)
    no_token = post(limited_server_url, LIST, headers=client)
    elsewhere = post(limited_server_url, LIST, good, headers={"X-Forwarded-For": "198.51.100.8"})
    after = httpx.get(f"{limited_server_url}/metrics").text
    assert bad == [401] * 5
    assert over.status_code == 429 and 1 <= int(over.headers["retry-after"]) <= 60
    assert (
        over.json()["error_description"] == "too many failed authentications from this address; retry later"
    )
    assert right.status_code == 429, "guessing right does not help while the address is throttled"
    assert no_token.status_code == 401, "a request without a credential still gets the challenge"
    assert elsewhere.status_code == 200, "another address is not affected"
    throttled = metric(after, "mcp_auth_failures_total", reason="throttled")
    assert throttled - metric(before, "mcp_auth_failures_total", reason="throttled") == 2


def test_a_tool_has_its_own_limit_per_caller(limited_server_url: str) -> None:
    _, first = create_token(user=User.objects.create(username="lister"), name="a")
    _, second = create_token(user=User.objects.create(username="other"), name="b")
    within_one_minute()
    statuses = [post(limited_server_url, LIST, first).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    refused = post(limited_server_url, LIST, first)
    assert refused.json()["error_description"] == (
        "this caller is over its per-minute limit for the tool 'list_libraries'; retry later"
    )
    assert post(limited_server_url, SEARCH, first).status_code == 200, "other tools are not limited"
    assert post(limited_server_url, LIST, second).status_code == 200, "other callers have their own count"


@pytest.mark.parametrize(
    ("login_name", "network"), [("admin:login", "10.9.8"), ("console:sign-in", "10.9.9")]
)
def test_failed_logins_are_throttled_per_address(
    settings, client: Client, login_name: str, network: str
) -> None:
    # Once: 60 wrong passwords, then the right one, never slowed. The console's sign-in counts alike.
    settings.ADMIN_LOGIN_FAILURES_PER_MINUTE = 3
    User.objects.create_superuser("boss", password="the-right-password")
    login = reverse(login_name)
    within_one_minute()
    wrong = [
        client.post(
            login, {"username": "boss", "password": f"wrong-{n}"}, REMOTE_ADDR=f"{network}.7"
        ).status_code
        for n in range(4)
    ]
    assert wrong == [200, 200, 200, 200]  # the form again, with its error
    right = client.post(
        login, {"username": "boss", "password": "the-right-password"}, REMOTE_ADDR=f"{network}.7"
    )
    assert right.status_code == 429 and int(right["Retry-After"]) >= 1
    elsewhere = client.post(
        login, {"username": "boss", "password": "the-right-password"}, REMOTE_ADDR=f"{network}.8"
    )
    assert elsewhere.status_code == 302, "another address logs in"


STREAM_HEADERS = {"Accept": "text/event-stream"}


def stream_for(url: str, headers: dict[str, str]) -> tuple[int, float, bytes]:
    """Open a stream and read it to its end: status, seconds it lasted, what it carried."""
    started = time.monotonic()
    with httpx.stream("GET", url, headers={**STREAM_HEADERS, **headers}, timeout=httpx.Timeout(30)) as stream:
        body = b"".join(stream.iter_bytes())
        return stream.status_code, time.monotonic() - started, body


@pytest.mark.parametrize("path", ["/mcp/", "/mcp/sse/"])
def test_streams_end_when_idle_or_unauthenticated_and_a_bad_token_gets_none(
    limited_server_url: str, path: str
) -> None:
    # Once: unauthenticated GET /mcp/ streams stayed open forever (300 held at once).
    bad = httpx.get(
        limited_server_url + path, headers={**STREAM_HEADERS, "Authorization": "Bearer mnem_nope"}
    )
    assert bad.status_code == 401 and "resource_metadata=" in bad.headers["www-authenticate"]
    status, lasted, _ = stream_for(limited_server_url + path, {})
    assert status == 200 and 1.5 <= lasted < 3.9, lasted  # no credential: 2 s, before the idle bound
    _, raw = create_token(user=User.objects.create(username=f"streamer{len(path)}"), name="s")
    status, lasted, body = stream_for(limited_server_url + path, {"Authorization": f"Bearer {raw}"})
    assert status == 200 and 3.5 <= lasted <= 15, lasted  # with one: idle for 4 s
    if path == "/mcp/sse/":
        assert b"event: endpoint" in body, "the session began as usual before it went idle"
