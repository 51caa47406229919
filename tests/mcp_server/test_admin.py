"""The Django admin: creating a token shows it once, revoking, and every changelist rendering."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.db import connection
from django.test import Client
from django.urls import reverse
from pytest_django.fixtures import Settings

from access import tokens
from access.credentials import AuthFailure, authenticate
from access.models import MCPAuditEvent, MCPToken
from access.services import create_token
from mcp_server.tools.catalog import TOOL_SPECS
from mnemosyne.library.models import Chunk, Item
from mnemosyne.library.services import ensure_collection, ensure_library

pytestmark = pytest.mark.django_db

RAW_TOKEN_RE = re.compile(r"mnem_[A-Za-z0-9_-]{43}")


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Settings) -> None:
    # The production hasher takes seconds per user; what is hashed does not matter here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def alice(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user(username="alice")


def rows_containing(text: str) -> dict[str, int]:
    """Tables with a row whose text form contains `text` (every column of every table)."""
    found = {}
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            quoted = connection.ops.quote_name(table)
            cursor.execute(f"SELECT count(*) FROM {quoted} AS t WHERE strpos(t::text, %s) > 0", [text])
            (count,) = cursor.fetchone()
            if count:
                found[table] = count
    return found


def add_token(client: Client, **fields: Any) -> Any:
    data = {"expires_at_0": "", "expires_at_1": "", **fields}
    return client.post(reverse("admin:access_mcptoken_add"), data)


def test_the_add_page_offers_every_tool(admin_client: Client) -> None:
    response = admin_client.get(reverse("admin:access_mcptoken_add"))
    assert response.status_code == 200
    content = response.content.decode()
    for name in ["user", "name", "expires_at_0"]:
        assert f'name="{name}"' in content
    for spec in TOOL_SPECS:
        assert f'value="{spec.name}"' in content


def test_adding_a_token_shows_it_once_and_stores_only_its_digest(admin_client: Client, alice: User) -> None:
    response = add_token(admin_client, user=str(alice.pk), name="laptop", allowed_tools=["search"])
    assert response.status_code == 200
    content = response.content.decode()
    assert "Copy it now" in content
    (raw,) = set(RAW_TOKEN_RE.findall(content))

    token = MCPToken.objects.get(user=alice, name="laptop")
    assert token.digest == tokens.digest(raw)
    assert token.allowed_tools == ["search"]
    result = authenticate(raw, tool="search")
    assert result.ok
    assert result.token is not None and result.token.pk == token.pk
    assert authenticate(raw, tool="get_chunk").failure == AuthFailure.FORBIDDEN_TOOL

    secret_part = raw[tokens.DISPLAY_PREFIX_LENGTH :]
    assert rows_containing(secret_part) == {}
    decoded_sessions = [str(session.get_decoded()) for session in Session.objects.all()]
    assert decoded_sessions  # the admin is logged in through a session
    assert not [session for session in decoded_sessions if secret_part in session]
    assert secret_part not in str(admin_client.cookies)

    # the audit names the admin who did it
    event = MCPAuditEvent.objects.get(token=token)
    assert (event.kind, event.actor) == (MCPAuditEvent.Kind.TOKEN_CREATED, "admin")

    # never shown again
    change_page = admin_client.get(reverse("admin:access_mcptoken_change", args=[token.pk]))
    assert change_page.status_code == 200
    assert token.prefix in change_page.content.decode()
    assert secret_part not in change_page.content.decode()


def test_adding_a_token_without_tools_allows_every_tool(admin_client: Client, alice: User) -> None:
    response = add_token(admin_client, user=str(alice.pk), name="laptop")
    (raw,) = set(RAW_TOKEN_RE.findall(response.content.decode()))
    assert MCPToken.objects.get(name="laptop").allowed_tools == []
    assert authenticate(raw, tool="list_items").ok


def test_adding_a_duplicate_name_shows_a_form_error(admin_client: Client, alice: User) -> None:
    create_token(user=alice, name="laptop")
    response = add_token(admin_client, user=str(alice.pk), name="laptop")
    assert response.status_code == 200
    assert response.context["adminform"].form.errors
    assert not RAW_TOKEN_RE.search(response.content.decode())
    assert MCPToken.objects.filter(user=alice).count() == 1


def test_the_revoke_action_revokes_the_selected_tokens_only(admin_client: Client, alice: User) -> None:
    chosen, chosen_raw = create_token(user=alice, name="laptop")
    _, other_raw = create_token(user=alice, name="desktop")
    response = admin_client.post(
        reverse("admin:access_mcptoken_changelist"),
        {"action": "revoke_selected", "_selected_action": [str(chosen.pk)]},
        follow=True,
    )
    assert response.status_code == 200
    assert "Revoked 1 token(s)." in response.content.decode()
    assert MCPToken.objects.get(pk=chosen.pk).revoked_at is not None
    assert authenticate(chosen_raw).failure == AuthFailure.REVOKED
    assert authenticate(other_raw).ok
    revoked = MCPAuditEvent.objects.filter(kind=MCPAuditEvent.Kind.TOKEN_REVOKED)
    assert [(event.token_id, event.actor) for event in revoked] == [(chosen.pk, "admin")]


@pytest.fixture
def library_tree(alice: User) -> None:
    library = ensure_library(name="Handbook", library_type="documentation")
    collection = ensure_collection(library=library, name="guides")
    item = Item.objects.create(
        collection=collection, title="Backups", item_type="markdown", source="backups.md"
    )
    Chunk.objects.create(
        item=item,
        collection=collection,
        library=library,
        ordinal=0,
        text_preview="Nightly snapshots are kept for thirty days.",
        section_path="Backups",
        char_start=0,
        char_end=43,
        token_count=8,
        storage_key="chunks/0",
        embedding=[0.5] * 384,
    )
    create_token(user=alice, name="laptop")


@pytest.mark.parametrize(
    ("url_name", "search", "shown", "rows"),
    [
        ("admin:library_library_changelist", "Handbook", "Handbook", 1),
        ("admin:library_collection_changelist", "guides", "Handbook / guides", 1),
        ("admin:library_item_changelist", "backups.md", "Backups", 1),
        ("admin:library_chunk_changelist", "snapshots", "Backups #0", 1),
        # The token's creation, and the administrator's own sign-in.
        ("admin:access_mcpauditevent_changelist", "system", "Token created", 2),
        ("admin:access_mcptoken_changelist", "alice", "laptop", 1),
    ],
)
@pytest.mark.usefixtures("library_tree")
def test_each_changelist_renders_with_its_rows(
    admin_client: Client, url_name: str, search: str, shown: str, rows: int
) -> None:
    response = admin_client.get(reverse(url_name))
    assert response.status_code == 200
    assert response.context["cl"].result_count == rows
    assert shown in response.content.decode()
    # the search box uses the admin's search_fields
    searched = admin_client.get(reverse(url_name), {"q": search})
    assert searched.status_code == 200
    assert searched.context["cl"].result_count == 1
    missed = admin_client.get(reverse(url_name), {"q": "no-such-thing-anywhere"})
    assert missed.status_code == 200
    # an admin without search_fields ignores q
    assert missed.context["cl"].result_count == (0 if search else 1)


@pytest.mark.parametrize(
    ("model", "url_name"),
    [
        (Item, "admin:library_item_change"),
        (Chunk, "admin:library_chunk_change"),
        (MCPAuditEvent, "admin:access_mcpauditevent_change"),
    ],
)
@pytest.mark.usefixtures("library_tree")
def test_each_change_page_renders(admin_client: Client, model: Any, url_name: str) -> None:
    obj = model.objects.order_by("pk").first()  # the audit rows: the token made, the admin signed in
    response = admin_client.get(reverse(url_name, args=[obj.pk]))
    assert response.status_code == 200


def test_admin_pages_carry_a_content_security_policy_they_keep(admin_client: Client, alice: User) -> None:
    pages = [
        admin_client.get(reverse("admin:index")),
        admin_client.get(reverse("admin:access_mcptoken_add")),
        add_token(admin_client, user=str(alice.pk), name="csp"),
    ]
    for page in pages:
        policy = page.headers["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
        html = page.content.decode()
        # Nothing the policy would block: no inline script or style.
        assert "<script>" not in html and 'style="' not in html
