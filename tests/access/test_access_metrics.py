"""mcp_auth_failures_total: a bounded set of reasons, never a token or user id in a label."""

from __future__ import annotations

import httpx
import pytest
from django.contrib.auth.models import User
from prometheus_client.parser import text_string_to_metric_families

from access.credentials import AuthFailure
from access.services import create_token
from tests.mcp_server.clients import post, rpc

pytestmark = pytest.mark.django_db(transaction=True)

REASONS = {
    "missing",
    "invalid",
    "expired",
    "revoked",
    "forbidden_tool",
    "insufficient_scope",
    "rate_limited",
    "tool_rate_limited",
    "changes_rate_limited",
    "throttled",
    "approval_pending",
    # Refusals answered inside the protocol; not_editor is counted, the other two are about what
    # the request names, not about the caller, and are not.
    "unknown_tool",
    "not_found",
    "not_editor",
}


def test_the_failure_reasons_are_the_bounded_set() -> None:
    assert {failure.value for failure in AuthFailure} == REASONS


def test_auth_failure_labels_carry_only_a_reason(live_server_url: str) -> None:
    user = User.objects.create(username="labelled-user")
    _, narrow = create_token(user=user, name="narrow", allowed_tools=["search"])
    _, limited = create_token(user=user, name="limited", rate_limit_per_minute=1)
    call = rpc("tools/call", {"name": "list_libraries", "arguments": {}})
    post(live_server_url, call)
    post(live_server_url, call, "mnem_" + "y" * 43)
    post(live_server_url, call, narrow)
    post(
        live_server_url,
        rpc("tools/call", {"name": "delete_item", "arguments": {"item_uid": "itm_x"}}),
        limited,
    )
    post(live_server_url, call, limited)
    post(live_server_url, call, limited)
    text = httpx.get(f"{live_server_url}/metrics").text
    samples = [
        sample
        for family in text_string_to_metric_families(text)
        if family.name == "mcp_auth_failures"
        for sample in family.samples
        if sample.name == "mcp_auth_failures_total"
    ]
    assert {sample.labels["reason"] for sample in samples} >= {
        "missing",
        "invalid",
        "forbidden_tool",
        "insufficient_scope",
        "rate_limited",
    }
    assert all(set(sample.labels) == {"reason"} and sample.labels["reason"] in REASONS for sample in samples)
    for secret in (narrow, limited, "labelled-user"):
        assert secret not in text
