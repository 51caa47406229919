"""One caller per request: identified once at the HTTP edge, never again by the handlers.

Counted from outside, on the server's own metric (mcp_identifications_total).
"""

from __future__ import annotations

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.mcp_server.clients import post, rpc, sse_payload

pytestmark = pytest.mark.django_db(transaction=True)


def identifications(base: str) -> float:
    text = httpx.get(f"{base}/metrics").text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "mcp_identifications"
        for sample in family.samples
        if sample.name == "mcp_identifications_total"
    )


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"name": "list_libraries", "arguments": {}}),
        ("tools/call", {"name": "search", "arguments": {"query": "backups"}}),
        ("resources/read", {"uri": "mnemosyne://libraries"}),
        ("tools/list", {}),
    ],
)
def test_a_request_identifies_its_caller_exactly_once(
    live_server_url: str, token: str, method: str, params: dict[str, object]
) -> None:
    before = identifications(live_server_url)
    response = post(live_server_url, rpc(method, params), token)
    assert response.status_code == 200 and "result" in sse_payload(response)
    assert identifications(live_server_url) - before == 1


def test_a_request_that_needs_no_caller_identifies_none(live_server_url: str) -> None:
    before = identifications(live_server_url)
    assert post(live_server_url, rpc("ping")).status_code == 200
    assert post(live_server_url, rpc("tools/list")).status_code == 200
    assert identifications(live_server_url) == before
