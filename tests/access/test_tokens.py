"""MCP tokens: the format (pure functions), then create/revoke/authenticate against PostgreSQL."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from access import tokens
from access.credentials import LAST_USED_RESOLUTION, AuthFailure, authenticate
from access.models import MCPAuditEvent, MCPToken
from access.services import create_token, revoke_token

# 43 characters of the URL-safe alphabet
SECRET = "A" * 20 + "z" * 10 + "0123456789" + "_-x"


# Format


def test_a_generated_token_has_the_prefix_and_length() -> None:
    raw = tokens.generate_token()
    assert raw.startswith("mnem_")
    assert len(raw) == len("mnem_") + 43
    assert re.fullmatch(r"mnem_[A-Za-z0-9_-]{43}", raw)


def test_generated_tokens_are_well_formed_and_distinct() -> None:
    generated = {tokens.generate_token() for _ in range(200)}
    assert len(generated) == 200
    assert all(tokens.is_well_formed(raw) for raw in generated)


def test_the_hand_made_secret_is_well_formed() -> None:
    assert len(SECRET) == 43
    assert tokens.is_well_formed("mnem_" + SECRET)


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "mnem_",
        "mnem" + SECRET,
        "mnex_" + SECRET,
        "MNEM_" + SECRET,
        "xmnem_" + SECRET,
        "mnem_" + SECRET[:-1],
        "mnem_" + SECRET + "A",
        "mnem_" + SECRET[:-1] + "+",
        "mnem_" + SECRET[:-1] + "/",
        "mnem_" + SECRET[:-1] + "=",
        "mnem_" + SECRET[:-1] + ".",
        "mnem_" + SECRET[:-1] + " ",
        "mnem_" + SECRET[:-1] + "é",
        " mnem_" + SECRET,
        "Bearer mnem_" + SECRET,
    ],
)
def test_it_rejects_a_malformed_token(raw: str) -> None:
    assert not tokens.is_well_formed(raw)


def test_it_rejects_a_token_with_a_trailing_newline() -> None:
    assert not tokens.is_well_formed(tokens.generate_token() + "\n")


def test_the_digest_is_the_sha256_hex_of_the_token() -> None:
    assert tokens.digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    raw = tokens.generate_token()
    assert tokens.digest(raw) == hashlib.sha256(raw.encode()).hexdigest()
    assert re.fullmatch(r"[0-9a-f]{64}", tokens.digest(raw))
    assert tokens.digest(raw) != tokens.digest(tokens.generate_token())


def test_the_display_prefix_is_the_first_twelve_characters() -> None:
    raw = "mnem_" + SECRET
    assert tokens.display_prefix(raw) == "mnem_AAAAAAA"
    assert len(tokens.display_prefix(raw)) == tokens.DISPLAY_PREFIX_LENGTH == 12
    # it must fit the column it is stored in
    assert MCPToken._meta.get_field("prefix").max_length >= tokens.DISPLAY_PREFIX_LENGTH  # type: ignore[operator]


# Services, with the database


@pytest.fixture
def alice(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user(username="alice")


def column_values(rows: Iterable[Mapping[str, object]]) -> list[str]:
    return [str(value) for row in rows for value in row.values()]


@pytest.mark.django_db
def test_creating_a_token_stores_only_its_digest(alice: User) -> None:
    token, raw = create_token(user=alice, name="laptop", allowed_tools=["search"])
    assert tokens.is_well_formed(raw)
    stored = MCPToken.objects.get(pk=token.pk)
    assert stored.digest == hashlib.sha256(raw.encode()).hexdigest()
    assert stored.prefix == raw[:12]
    secret_part = raw[tokens.DISPLAY_PREFIX_LENGTH :]
    values = column_values(list(MCPToken.objects.values())) + column_values(
        list(MCPAuditEvent.objects.values())
    )
    assert values  # the rows were dumped
    assert not [value for value in values if raw in value or secret_part in value]


@pytest.mark.django_db
def test_creating_a_token_writes_one_audit_event(alice: User) -> None:
    token, _ = create_token(user=alice, name="laptop", allowed_tools=["search"], actor="ops")
    (event,) = MCPAuditEvent.objects.all()
    assert (event.kind, event.token_id, event.actor) == (MCPAuditEvent.Kind.TOKEN_CREATED, token.pk, "ops")
    assert event.detail == {
        "name": "laptop",
        "user": "alice",
        "tools": ["search"],
        "scopes": ["read"],
        "libraries": [],
        "rate_limit_per_minute": None,
    }


@pytest.mark.django_db
def test_allowed_tools_are_stored_sorted_without_duplicates(alice: User) -> None:
    token, _ = create_token(user=alice, name="laptop", allowed_tools=["search", "get_chunk", "search"])
    assert MCPToken.objects.get(pk=token.pk).allowed_tools == ["get_chunk", "search"]


@pytest.mark.django_db
def test_it_authenticates_a_valid_token(alice: User) -> None:
    token, raw = create_token(user=alice, name="laptop")
    result = authenticate(raw)
    assert result.ok
    assert result.failure is None
    assert result.token is not None
    assert (result.token.pk, result.token.user.username) == (token.pk, "alice")


@pytest.mark.django_db
@pytest.mark.parametrize("raw", [None, ""])
def test_it_reports_a_missing_token(raw: str | None) -> None:
    result = authenticate(raw)
    assert (result.ok, result.failure, result.token) == (False, AuthFailure.MISSING, None)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "raw", ["nope", "mnem_short", "mnex_" + SECRET, "mnem_" + SECRET[:-1] + "+", "mnem_" + SECRET + "A"]
)
def test_it_rejects_a_malformed_token_without_touching_the_database(
    raw: str, django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(0):
        result = authenticate(raw)
    assert (result.failure, result.token) == (AuthFailure.INVALID, None)


@pytest.mark.django_db
def test_it_rejects_a_well_formed_token_it_does_not_know(alice: User) -> None:
    create_token(user=alice, name="laptop")
    result = authenticate("mnem_" + SECRET)
    assert (result.failure, result.token) == (AuthFailure.INVALID, None)


@pytest.mark.django_db
def test_it_rejects_an_expired_token(alice: User) -> None:
    token, raw = create_token(user=alice, name="laptop", expires_at=timezone.now() - timedelta(seconds=1))
    result = authenticate(raw)
    assert result.failure == AuthFailure.EXPIRED
    assert result.token is not None and result.token.pk == token.pk


@pytest.mark.django_db
def test_it_accepts_a_token_that_expires_later(alice: User) -> None:
    _, raw = create_token(user=alice, name="laptop", expires_at=timezone.now() + timedelta(days=1))
    assert authenticate(raw).ok


@pytest.mark.django_db
def test_it_rejects_a_revoked_token(alice: User) -> None:
    token, raw = create_token(user=alice, name="laptop")
    revoke_token(token=token)
    result = authenticate(raw)
    assert result.failure == AuthFailure.REVOKED
    assert result.token is not None and result.token.pk == token.pk


@pytest.mark.django_db
def test_it_rejects_the_token_of_an_inactive_user(alice: User) -> None:
    _, raw = create_token(user=alice, name="laptop")
    User.objects.filter(pk=alice.pk).update(is_active=False)
    result = authenticate(raw)
    assert (result.failure, result.token) == (AuthFailure.INVALID, None)


@pytest.mark.django_db
def test_a_token_may_call_a_whitelisted_tool_only(alice: User) -> None:
    _, raw = create_token(user=alice, name="laptop", allowed_tools=["search", "get_chunk"])
    assert authenticate(raw, tool="search").ok
    assert authenticate(raw, tool="get_chunk").ok
    assert authenticate(raw, tool="list_libraries").failure == AuthFailure.FORBIDDEN_TOOL
    # without a tool, only the token itself is checked
    assert authenticate(raw).ok


@pytest.mark.django_db
def test_an_empty_whitelist_allows_every_tool(alice: User) -> None:
    _, raw = create_token(user=alice, name="laptop", allowed_tools=[])
    for tool in ["search", "get_chunk", "list_libraries", "anything"]:
        assert authenticate(raw, tool=tool).ok


def stored_last_used(token: MCPToken) -> Any:
    return MCPToken.objects.values_list("last_used_at", flat=True).get(pk=token.pk)


@pytest.mark.django_db
def test_last_used_is_written_on_first_use(alice: User) -> None:
    token, raw = create_token(user=alice, name="laptop")
    assert stored_last_used(token) is None
    before = timezone.now()
    result = authenticate(raw)
    after = timezone.now()
    assert before <= stored_last_used(token) <= after
    assert result.token is not None and result.token.last_used_at == stored_last_used(token)


@pytest.mark.django_db
def test_last_used_is_not_rewritten_within_five_minutes(alice: User, django_assert_num_queries: Any) -> None:
    assert timedelta(minutes=5) == LAST_USED_RESOLUTION
    token, raw = create_token(user=alice, name="laptop")
    recent = timezone.now() - timedelta(minutes=1)
    MCPToken.objects.filter(pk=token.pk).update(last_used_at=recent)
    # one read, no write
    with django_assert_num_queries(1):
        assert authenticate(raw).ok
    assert stored_last_used(token) == recent


@pytest.mark.django_db
def test_last_used_is_rewritten_after_five_minutes(alice: User) -> None:
    token, raw = create_token(user=alice, name="laptop")
    stale = timezone.now() - timedelta(minutes=10)
    MCPToken.objects.filter(pk=token.pk).update(last_used_at=stale)
    before = timezone.now()
    assert authenticate(raw).ok
    assert before <= stored_last_used(token) <= timezone.now()


@pytest.mark.django_db
def test_a_refused_call_does_not_count_as_use(alice: User) -> None:
    token, raw = create_token(user=alice, name="laptop", allowed_tools=["search"])
    assert authenticate(raw, tool="get_chunk").failure == AuthFailure.FORBIDDEN_TOOL
    assert stored_last_used(token) is None


@pytest.mark.django_db
def test_revoking_is_idempotent_and_audited_once(alice: User) -> None:
    token, _ = create_token(user=alice, name="laptop")
    revoke_token(token=token, actor="ops")
    first = MCPToken.objects.get(pk=token.pk).revoked_at
    assert first is not None
    revoke_token(token=MCPToken.objects.get(pk=token.pk), actor="someone-else")
    assert MCPToken.objects.get(pk=token.pk).revoked_at == first
    revoked_events = MCPAuditEvent.objects.filter(kind=MCPAuditEvent.Kind.TOKEN_REVOKED)
    assert [(event.token_id, event.actor, event.detail) for event in revoked_events] == [
        (token.pk, "ops", {"name": "laptop"})
    ]
