"""The create_mcp_token management command, against PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone
from pytest_django.fixtures import Settings

from access import tokens
from access.credentials import AuthFailure, authenticate
from access.models import MCPToken

pytestmark = pytest.mark.django_db


def create(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("create_mcp_token", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Settings) -> None:
    # The production hasher takes seconds per user; what is hashed does not matter here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def alice(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user(username="alice", password="a-password")


def test_the_last_line_is_the_token_alone_and_it_authenticates(alice: User) -> None:
    out, _ = create("--user", "alice", "--name", "laptop")
    raw = out.splitlines()[-1]
    assert tokens.is_well_formed(raw)
    result = authenticate(raw)
    assert result.ok
    assert result.token is not None
    assert (result.token.user.username, result.token.name) == ("alice", "laptop")
    assert result.token.digest == tokens.digest(raw)
    # shown once: only on that line
    assert out.count(raw) == 1


def test_an_unknown_user_is_created_without_a_usable_password(django_user_model: type[User]) -> None:
    out, err = create("--user", "newcomer", "--name", "laptop")
    user = django_user_model.objects.get(username="newcomer")
    assert not user.has_usable_password()
    assert "Created user 'newcomer' without a usable password." in err
    assert authenticate(out.splitlines()[-1]).ok


def test_an_existing_user_gets_no_notice(alice: User) -> None:
    _, err = create("--user", "alice", "--name", "laptop")
    assert err == ""
    alice.refresh_from_db()
    assert alice.check_password("a-password")


def test_tools_restrict_what_the_token_may_call(alice: User) -> None:
    out, _ = create("--user", "alice", "--name", "laptop", "--tools", "search, get_chunk")
    raw = out.splitlines()[-1]
    assert MCPToken.objects.get(name="laptop").allowed_tools == ["get_chunk", "search"]
    assert authenticate(raw, tool="search").ok
    assert authenticate(raw, tool="get_chunk").ok
    assert authenticate(raw, tool="list_libraries").failure == AuthFailure.FORBIDDEN_TOOL


def test_without_tools_the_token_may_call_every_tool(alice: User) -> None:
    out, _ = create("--user", "alice", "--name", "laptop")
    assert MCPToken.objects.get(name="laptop").allowed_tools == []
    assert "all tools" in out
    assert authenticate(out.splitlines()[-1], tool="list_items").ok


def test_an_unknown_tool_is_refused_by_name_and_nothing_is_created(django_user_model: type[User]) -> None:
    with pytest.raises(CommandError, match="serach") as excinfo:
        create("--user", "newcomer", "--name", "laptop", "--tools", "search,serach")
    assert "search," not in str(excinfo.value).split(";")[0]  # only the unknown one is named as unknown
    assert not MCPToken.objects.exists()
    assert not django_user_model.objects.filter(username="newcomer").exists()


def test_expires_days_sets_the_expiry(alice: User) -> None:
    before = timezone.now()
    out, _ = create("--user", "alice", "--name", "laptop", "--expires-days", "30")
    after = timezone.now()
    token = MCPToken.objects.get(name="laptop")
    assert token.expires_at is not None
    assert before + timedelta(days=30) <= token.expires_at <= after + timedelta(days=30)
    assert token.expires_at.isoformat() in out
    assert authenticate(out.splitlines()[-1]).ok


def test_without_expires_days_the_token_never_expires(alice: User) -> None:
    out, _ = create("--user", "alice", "--name", "laptop")
    assert MCPToken.objects.get(name="laptop").expires_at is None
    assert "expires never" in out


@pytest.mark.parametrize("days", ["0", "-5"])
def test_expires_days_below_one_is_refused(alice: User, days: str) -> None:
    with pytest.raises(CommandError, match="--expires-days must be at least 1"):
        create("--user", "alice", "--name", "laptop", "--expires-days", days)
    assert not MCPToken.objects.exists()


def test_a_duplicate_name_for_the_same_user_is_refused(alice: User) -> None:
    create("--user", "alice", "--name", "laptop")
    with pytest.raises(CommandError, match="'alice' already has a token named 'laptop'"):
        create("--user", "alice", "--name", "laptop")
    assert MCPToken.objects.filter(user=alice).count() == 1


def test_the_same_name_is_fine_for_another_user(alice: User) -> None:
    create("--user", "alice", "--name", "laptop")
    out, _ = create("--user", "bob", "--name", "laptop")
    result = authenticate(out.splitlines()[-1])
    assert result.token is not None and result.token.user.username == "bob"
    assert MCPToken.objects.filter(name="laptop").count() == 2


def test_a_name_longer_than_100_characters_is_refused_with_a_command_error(alice: User) -> None:
    with pytest.raises(CommandError):
        create("--user", "alice", "--name", "n" * 101)
