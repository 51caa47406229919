"""The admin's access actions: create with scopes and libraries, extend, approve and reject."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from pytest_django.fixtures import Settings

from access.models import MCPApprovalRequest, MCPAuditEvent, MCPToken
from access.services import create_token, request_approval
from mnemosyne.library.services import ensure_library

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def alice(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user(username="alice")


def test_adding_a_token_with_scopes_libraries_and_a_rate_limit(admin_client: Client, alice: User) -> None:
    handbook = ensure_library(name="Handbook", library_type="documentation")
    response = admin_client.post(
        reverse("admin:access_mcptoken_add"),
        {
            "user": str(alice.pk),
            "name": "ci",
            "scopes": ["read", "write"],
            "libraries": [str(handbook.pk)],
            "rate_limit_per_minute": "12",
            "expires_at_0": "",
            "expires_at_1": "",
        },
    )
    assert response.status_code == 200 and "Copy it now" in response.content.decode()
    token = MCPToken.objects.get(name="ci")
    assert token.scopes == ["read", "write"] and token.rate_limit_per_minute == 12
    assert list(token.libraries.all()) == [handbook] and token.created_by == "admin"


def test_the_extend_action_pushes_expiry_and_audits(admin_client: Client, alice: User) -> None:
    token, _ = create_token(user=alice, name="laptop", expires_at=timezone.now() + timedelta(days=1))
    admin_client.post(
        reverse("admin:access_mcptoken_changelist"),
        {"action": "extend_selected", "_selected_action": [str(token.pk)]},
        follow=True,
    )
    token.refresh_from_db()
    assert token.expires_at is not None and token.expires_at > timezone.now() + timedelta(days=30)
    assert MCPAuditEvent.objects.filter(kind=MCPAuditEvent.Kind.TOKEN_EXTENDED, actor="admin").exists()


@pytest.mark.parametrize(
    ("action", "status"),
    [
        ("approve_selected", MCPApprovalRequest.Status.APPROVED),
        ("reject_selected", MCPApprovalRequest.Status.REJECTED),
    ],
)
def test_approval_requests_are_decided_in_the_admin(
    admin_client: Client, alice: User, action: str, status: str
) -> None:
    token, _ = create_token(user=alice, name="laptop", scopes=["read", "write"])
    pending = request_approval(token=token, tool="delete_item", arguments={"item_uid": "itm_a"})
    changelist = reverse("admin:access_mcpapprovalrequest_changelist")
    assert pending.uid in admin_client.get(changelist).content.decode()
    admin_client.post(changelist, {"action": action, "_selected_action": [str(pending.pk)]}, follow=True)
    pending.refresh_from_db()
    assert (pending.status, pending.decided_by) == (status, "admin")
