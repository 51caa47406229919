"""Approvals: a sensitive tool records a pending request; approved, the same call works once."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from access.models import MCPApprovalRequest
from access.services import create_token, decide_approval, request_approval, use_approval
from mnemosyne.library.models import Collection, Item, Library
from tests.mcp_server.clients import post, rpc, sse_payload
from tests.servers import uvicorn_server

# A real uvicorn process: the full tier.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def approval_server_url(shared_data_dir: Path) -> Iterator[str]:
    with uvicorn_server(
        shared_data_dir, env={"MCP_APPROVAL_REQUIRED_TOOLS": "delete_item"}, log_name="approvals"
    ) as url:
        yield url


def call_text(base: str, raw: str, arguments: dict[str, Any], approval: str | None = None) -> dict[str, Any]:
    headers = {"Mcp-Approval-Id": approval} if approval else None
    body = rpc("tools/call", {"name": "delete_item", "arguments": arguments})
    result: dict[str, Any] = sse_payload(post(base, body, raw, headers=headers))["result"]
    return result


def test_a_sensitive_tool_waits_for_approval_and_the_approval_works_once(
    approval_server_url: str, corpus: tuple[Library, Collection]
) -> None:
    _, collection = corpus
    item = Item.objects.filter(collection=collection).first()
    assert item is not None
    _, raw = create_token(user=User.objects.create(username="deleter"), name="d", scopes=["read", "write"])
    arguments = {"item_uid": item.uid, "dry_run": False}

    pending = call_text(approval_server_url, raw, arguments)
    assert pending["isError"]
    match = re.search(r"request (apr_[0-9a-f]+) is pending", pending["content"][0]["text"])
    assert match is not None
    uid = match.group(1)
    assert Item.objects.filter(pk=item.pk).exists()

    unapproved = call_text(approval_server_url, raw, arguments, approval=uid)
    assert unapproved["isError"] and Item.objects.filter(pk=item.pk).exists()

    request = MCPApprovalRequest.objects.get(uid=uid)
    decide_approval(request=request, approve=True, actor="admin")
    other = call_text(approval_server_url, raw, {"item_uid": item.uid, "dry_run": True}, approval=uid)
    assert other["isError"]

    done = call_text(approval_server_url, raw, arguments, approval=uid)
    assert not done["isError"] and done["structuredContent"]["deleted"]
    assert not Item.objects.filter(pk=item.pk).exists()
    again = call_text(approval_server_url, raw, arguments, approval=uid)
    assert again["isError"]
    assert MCPApprovalRequest.objects.get(uid=uid).status == MCPApprovalRequest.Status.USED


def test_a_rejected_request_cannot_be_used(corpus: tuple[Library, Collection]) -> None:
    user = User.objects.create(username="rejected")
    token, _ = create_token(user=user, name="r", scopes=["read", "write"])
    request = request_approval(token=token, tool="delete_item", arguments={"item_uid": "itm_a"})
    decide_approval(request=request, approve=False, actor="admin")
    decide_approval(request=request, approve=True, actor="someone-later")
    assert request.status == MCPApprovalRequest.Status.REJECTED and request.decided_by == "admin"
    assert not use_approval(uid=request.uid, token=token, tool="delete_item", arguments={"item_uid": "itm_a"})


def test_an_approval_asked_for_by_a_jwt_subject_works_only_for_that_subject() -> None:
    arguments = {"item_uid": "itm_a", "dry_run": False}
    request = request_approval(token=None, subject="jwt:alice", tool="delete_item", arguments=arguments)
    decide_approval(request=request, approve=True, actor="admin")
    for stranger in ("jwt:mallory", "anonymous", ""):
        assert not use_approval(
            uid=request.uid, token=None, subject=stranger, tool="delete_item", arguments=arguments
        )
    assert use_approval(
        uid=request.uid, token=None, subject="jwt:alice", tool="delete_item", arguments=arguments
    )
    assert not use_approval(
        uid=request.uid, token=None, subject="jwt:alice", tool="delete_item", arguments=arguments
    )
