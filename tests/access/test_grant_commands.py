"""`manage.py grant` / `manage.py revoke`, and tokens that may not give more than their owner has.
The access policy and its switch: test_access_policy.py."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from access.library_access import Role, reach_of, roles_of
from access.library_grants import grant
from access.models import LibraryGrant, MCPAuditEvent
from mnemosyne.library.models import Library
from mnemosyne.library.services import ensure_library
from tests.commands import refused, run

pytestmark = pytest.mark.django_db


@pytest.fixture
def handbook() -> Library:
    return ensure_library(name="Handbook", library_type="documentation")


def test_grant_gives_changes_and_says_what_changed(handbook: Library) -> None:
    alice = User.objects.create(username="alice")
    said = run("grant", "--user", "alice", "--library", "Handbook", "--role", "reader")
    assert said == f"granted: user alice is now reader on library 'Handbook' ({handbook.uid})"
    assert run("grant", "--user", "alice", "--library", handbook.uid, "--role", "editor").startswith(
        "changed: user alice reader → editor"
    )
    assert run("grant", "--user", "alice", "--library", handbook.uid, "--role", "editor").startswith(
        "unchanged: user alice already editor"
    )
    assert roles_of(alice.pk) == {handbook.pk: Role.EDITOR}
    kinds = list(MCPAuditEvent.objects.order_by("pk").values_list("kind", "actor"))
    assert kinds == [("grant_given", "manage.py grant"), ("grant_given", "manage.py grant")]


def test_a_group_grant_reaches_its_members_and_revoke_takes_it_away(handbook: Library, settings: Any) -> None:
    settings.LIBRARY_ACCESS = "grants"
    bob = User.objects.create(username="bob")
    said = run("grant", "--group", "engineering", "--library", "Handbook", "--role", "manager")
    assert said.splitlines() == [
        "created group 'engineering'",
        f"granted: group engineering is now manager on library 'Handbook' ({handbook.uid})",
    ]
    bob.groups.add(Group.objects.get(name="engineering"))
    assert reach_of(bob).managed == frozenset({handbook.pk})
    said = run("revoke", "--group", "engineering", "--library", "Handbook")
    assert said == f"revoked: group engineering is no longer manager on library 'Handbook' ({handbook.uid})"
    assert run("revoke", "--group", "engineering", "--library", "Handbook").startswith("unchanged:")
    assert MCPAuditEvent.objects.filter(kind="grant_revoked").count() == 1
    assert reach_of(bob).readable == frozenset()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--user", "alice", "--library", "Handbook", "--role", "owner"], "--role: unknown role 'owner'"),
        (
            ["--user", "alice", "--library", "Nowhere", "--role", "reader"],
            "no library with uid or name 'Nowhere'",
        ),
        (["--library", "Handbook", "--role", "reader"], "give exactly one of --user or --group"),
        (["--user", "alice", "--group", "g", "--library", "Handbook", "--role", "reader"], "exactly one"),
        (
            ["--user", "nobody-here", "--library", "Handbook", "--role", "reader"],
            "no user named 'nobody-here'",
        ),
        (["--group", "new-group", "--library", "Nowhere", "--role", "reader"], "no library"),
    ],
)
def test_bad_grants_are_refused_in_one_line_and_change_nothing(
    handbook: Library, args: list[str], message: str
) -> None:
    User.objects.create(username="alice")
    said = refused("grant", *args)
    assert message in said and "\n" not in said
    assert not LibraryGrant.objects.exists()
    assert not Group.objects.exists()
    assert not MCPAuditEvent.objects.exists()


def test_under_grants_a_token_may_not_give_more_than_its_owner_has(handbook: Library, settings: Any) -> None:
    settings.LIBRARY_ACCESS = "grants"
    other = ensure_library(name="Personnel", library_type="documentation")
    said = refused("create_mcp_token", "--user", "carol", "--name", "laptop")
    assert (
        said == "refused: carol has no grant on any library, so the token would see nothing; "
        "grant one first (manage.py grant)"
    )
    assert not User.objects.filter(username="carol").exists()  # nothing left behind
    carol = User.objects.create(username="carol")
    grant(library=handbook, role=Role.READER, user=carol, actor="test")
    assert "may not read every library asked for" in refused(
        "create_mcp_token", "--user", "carol", "--name", "x", "--libraries", other.uid
    )
    assert "is not an editor of any library" in refused(
        "create_mcp_token", "--user", "carol", "--name", "x", "--scopes", "read,write"
    )
    assert "Token 'laptop' for carol" in run("create_mcp_token", "--user", "carol", "--name", "laptop")
