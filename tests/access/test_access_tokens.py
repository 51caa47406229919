"""Token scopes, libraries, rate limits, extension and the token commands, against PostgreSQL."""

from __future__ import annotations

import importlib
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.utils import timezone

from access import decision, identify
from access.credentials import AuthFailure, authenticate, token_library_ids
from access.decision import required_scope
from access.models import MCPAuditEvent, MCPRateWindow, MCPToken
from access.principal import Kind, Principal
from access.refusals import Refusal
from access.services import create_token, extend_token, take_rate_limit_slot
from mcp_server.tools.catalog import spec_named
from mcp_server.transports.challenges import refusal_response
from mnemosyne.library.models import Library
from mnemosyne.library.services import ensure_library

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice() -> User:
    return User.objects.create(username="alice")


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_a_new_token_reads_only_unless_given_the_write_scope(alice: User) -> None:
    reader, _ = create_token(user=alice, name="reader")
    writer, _ = create_token(user=alice, name="writer", scopes=["write", "read"])
    assert reader.scopes == ["read"] and not reader.has_scope("write")
    assert writer.scopes == ["read", "write"]


def test_an_unknown_scope_is_refused(alice: User) -> None:
    with pytest.raises(ValueError, match="admin"):
        create_token(user=alice, name="x", scopes=["admin"])
    assert not MCPToken.objects.exists()


def test_tokens_from_before_scopes_keep_reading_and_writing(alice: User) -> None:
    token, _ = create_token(user=alice, name="old")
    MCPToken.objects.filter(pk=token.pk).update(scopes=[])
    migration = importlib.import_module("mcp_server.migrations.0002_access_control")
    # The models as that migration knew them (they have moved to access/ since).
    then = MigrationLoader(connection).project_state(("mcp_server", "0002_access_control")).apps
    migration.existing_tokens_keep_writing(then, None)
    token.refresh_from_db()
    assert token.scopes == ["read", "write"]


def test_write_tools_need_the_write_scope_and_the_rest_read() -> None:
    assert required_scope(spec_named("upsert_item")) == required_scope(spec_named("delete_item")) == "write"
    assert required_scope(spec_named("search")) == required_scope(spec_named("list_libraries")) == "read"


def test_the_library_boundary_is_the_tokens_libraries_or_none(alice: User) -> None:
    handbook = ensure_library(name="Handbook", library_type="documentation")
    everything, _ = create_token(user=alice, name="all")
    confined, _ = create_token(user=alice, name="one", libraries=[handbook])
    assert token_library_ids(everything) is None
    assert token_library_ids(confined) == frozenset({handbook.pk})
    assert identify.local().library_ids is None


def test_the_rate_limit_counts_calls_per_minute_in_the_database(alice: User) -> None:
    token, _ = create_token(user=alice, name="limited", rate_limit_per_minute=2)
    now = timezone.now().replace(second=10)
    assert take_rate_limit_slot(token, now) is None
    assert take_rate_limit_slot(token, now) is None
    assert take_rate_limit_slot(token, now) == 50
    assert take_rate_limit_slot(token, now + timedelta(minutes=1)) is None
    assert take_rate_limit_slot(token, now + timedelta(minutes=1)) is None
    assert take_rate_limit_slot(token, now + timedelta(minutes=1)) == 50


def test_finished_rate_windows_are_deleted_when_a_new_minute_starts(alice: User) -> None:
    busy, _ = create_token(user=alice, name="busy", rate_limit_per_minute=100)
    idle, _ = create_token(user=alice, name="idle", rate_limit_per_minute=100)
    start = timezone.now().replace(second=5, microsecond=0)
    take_rate_limit_slot(idle, start)
    for minute in range(30):
        for _ in range(3):
            take_rate_limit_slot(busy, start + timedelta(minutes=minute))
    # One row: busy's current minute. Idle's old window went with the first call of a later minute.
    (window,) = MCPRateWindow.objects.all()
    assert (window.token_id, window.window_start, window.count) == (
        busy.pk,
        (start + timedelta(minutes=29)).replace(second=0),
        3,
    )


def test_a_token_without_a_limit_writes_no_counter(alice: User) -> None:
    token, _ = create_token(user=alice, name="free")
    assert take_rate_limit_slot(token) is None
    assert not MCPRateWindow.objects.exists()


def test_extending_a_token_pushes_its_expiry_and_is_audited(alice: User) -> None:
    token, raw = create_token(user=alice, name="old", expires_at=timezone.now() - timedelta(days=1))
    assert authenticate(raw).failure == AuthFailure.EXPIRED
    extend_token(token=token, days=30, actor="ops")
    assert authenticate(raw).ok
    assert token.expires_at is not None and token.expires_at > timezone.now() + timedelta(days=29)
    assert MCPAuditEvent.objects.filter(kind=MCPAuditEvent.Kind.TOKEN_EXTENDED, actor="ops").count() == 1


def test_a_401_points_at_the_protected_resource_metadata() -> None:
    url = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    response = refusal_response(Refusal(AuthFailure.MISSING), metadata_url=url)
    assert response.status_code == 401
    assert f'resource_metadata="{url}"' in response.headers["www-authenticate"]


def test_a_refusal_for_scope_is_a_403_and_a_rate_limit_a_429_with_retry_after() -> None:
    reader = Principal(kind=Kind.TOKEN, actor="reader", scopes=frozenset({"read"}))
    refused = decision.check_call(
        reader, decision.Asked(tool="delete_item", spec=spec_named("delete_item")), transport="test"
    )
    assert isinstance(refused, Refusal)
    assert refused.failure == AuthFailure.INSUFFICIENT_SCOPE
    scoped = refusal_response(refused)
    assert scoped.status_code == 403
    assert 'error="insufficient_scope"' in scoped.headers["www-authenticate"]
    assert 'scope="write"' in scoped.headers["www-authenticate"]
    limited = refusal_response(Refusal(AuthFailure.RATE_LIMITED, retry_after=17))
    assert (limited.status_code, limited.headers["retry-after"]) == (429, "17")


def test_create_command_takes_scopes_libraries_and_rate_limit(alice: User) -> None:
    handbook = ensure_library(name="Handbook", library_type="documentation")
    out = run(
        "create_mcp_token",
        "--user=alice",
        "--name=ci",
        "--scopes=read,write",
        f"--libraries={handbook.uid}",
        "--rate-limit=30",
    )
    raw = out.strip().splitlines()[-1]
    token = authenticate(raw).token
    assert token is not None
    assert token.scopes == ["read", "write"] and token.rate_limit_per_minute == 30
    assert list(token.libraries.all()) == [handbook]
    assert token.created_by == "create_mcp_token"


def test_create_command_defaults_to_read_only(alice: User) -> None:
    raw = run("create_mcp_token", "--user=alice", "--name=ci").strip().splitlines()[-1]
    token = authenticate(raw).token
    assert token is not None and token.scopes == ["read"]


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--scopes=read,admin", "--scopes"),
        ("--libraries=lib_missing", "lib_missing"),
        ("--rate-limit=0", "--rate-limit"),
    ],
)
def test_create_command_refuses_bad_options(alice: User, option: str, message: str) -> None:
    with pytest.raises(CommandError, match=message):
        run("create_mcp_token", "--user=alice", "--name=ci", option)
    assert not MCPToken.objects.exists()


def test_list_command_shows_tokens_without_their_secret(alice: User) -> None:
    _, raw = create_token(user=alice, name="laptop", scopes=["read", "write"])
    out = run("list_mcp_tokens")
    assert "laptop" in out and "scopes=read,write" in out and "active" in out
    assert raw not in out and raw[len("mnem_") + 12 :] not in out


def test_revoke_command_revokes_by_name_or_prefix(alice: User) -> None:
    laptop, laptop_raw = create_token(user=alice, name="laptop")
    _, desktop_raw = create_token(user=alice, name="desktop")
    run("revoke_mcp_token", "laptop")
    assert authenticate(laptop_raw).failure == AuthFailure.REVOKED
    desktop = MCPToken.objects.get(name="desktop")
    run("revoke_mcp_token", desktop.prefix)
    assert authenticate(desktop_raw).failure == AuthFailure.REVOKED
    assert MCPAuditEvent.objects.filter(kind=MCPAuditEvent.Kind.TOKEN_REVOKED).count() == 2
    assert laptop.pk != desktop.pk


def test_revoke_command_refuses_an_ambiguous_or_unknown_reference(alice: User) -> None:
    create_token(user=alice, name="laptop")
    create_token(user=alice, name="desktop")
    with pytest.raises(CommandError, match="several"):
        run("revoke_mcp_token", "mnem_")
    with pytest.raises(CommandError, match="no token"):
        run("revoke_mcp_token", "nothing")
    assert Library.objects.count() == 0
