"""Library grants in the admin: a superuser gives, moves and takes back grants (each an audit row,
through library_grants); a library's manager, under LIBRARY_ACCESS=grants, sees and changes the
grants of the libraries they manage and of no other."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from pytest_django.fixtures import Settings

from access.library_access import Role
from access.library_grants import grant
from access.models import LibraryGrant, MCPAuditEvent
from mnemosyne.library.models import Library
from mnemosyne.library.services import ensure_library

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:access_librarygrant_changelist"


@pytest.fixture
def libraries() -> tuple[Library, Library]:
    return ensure_library(name="Runbooks"), ensure_library(name="People")


def audit(kind: str) -> list[tuple[str, str]]:
    rows = MCPAuditEvent.objects.filter(kind=kind).order_by("pk")
    return [(row.actor, row.detail["holder"]) for row in rows]


def test_a_superuser_gives_moves_and_takes_back_a_grant(
    admin_client: Client, libraries: tuple[Library, Library]
) -> None:
    runbooks, _ = libraries
    alice, bob = User.objects.create(username="alice"), User.objects.create(username="bob")
    answer = admin_client.post(
        reverse("admin:access_librarygrant_add"),
        {"library": runbooks.pk, "user": alice.pk, "group": "", "role": "editor"},
    )
    assert answer.status_code == 302, answer.content.decode()[:500]
    held = LibraryGrant.objects.get()
    assert (held.user, held.role) == (alice, "editor")

    # Moving the grant to bob takes alice's back first: two rows, one each way.
    answer = admin_client.post(
        reverse("admin:access_librarygrant_change", args=[held.pk]),
        {"library": runbooks.pk, "user": bob.pk, "group": "", "role": "reader"},
    )
    assert answer.status_code == 302, answer.content.decode()[:500]
    assert list(LibraryGrant.objects.values_list("user__username", "role")) == [("bob", "reader")]
    assert audit(MCPAuditEvent.Kind.GRANT_REVOKED) == [("admin", "user alice")]

    moved = LibraryGrant.objects.get()
    answer = admin_client.post(reverse("admin:access_librarygrant_delete", args=[moved.pk]), {"post": "yes"})
    assert answer.status_code == 302
    assert not LibraryGrant.objects.exists()
    assert audit(MCPAuditEvent.Kind.GRANT_GIVEN) == [("admin", "user alice"), ("admin", "user bob")]
    assert audit(MCPAuditEvent.Kind.GRANT_REVOKED) == [("admin", "user alice"), ("admin", "user bob")]


def test_a_manager_sees_and_changes_only_the_grants_of_their_libraries(
    client: Client, settings: Settings, libraries: tuple[Library, Library]
) -> None:
    settings.LIBRARY_ACCESS = "grants"
    runbooks, people = libraries
    dana = User.objects.create(username="dana", is_staff=True)
    carol = User.objects.create(username="carol")
    grant(library=runbooks, role=Role.MANAGER, user=dana, actor="test")
    grant(library=people, role=Role.READER, user=carol, actor="test")
    client.force_login(dana)

    listed = client.get(reverse(CHANGELIST))
    assert listed.status_code == 200
    assert list(listed.context["cl"].result_list.values_list("library__name", flat=True)) == ["Runbooks"]
    hidden = LibraryGrant.objects.get(library=people)
    # Another library's grant is, to the admin, one that does not exist: back to the index.
    other = client.get(reverse("admin:access_librarygrant_change", args=[hidden.pk]))
    assert other.status_code == 302 and other.headers["Location"] == reverse("admin:index")

    # The add form offers only the libraries dana manages; a post naming another is refused.
    refused = client.post(
        reverse("admin:access_librarygrant_add"),
        {"library": people.pk, "user": carol.pk, "group": "", "role": "editor"},
    )
    assert refused.status_code == 200 and "library" in refused.context["adminform"].form.errors
    assert LibraryGrant.objects.get(library=people).role == "reader"
    given = client.post(
        reverse("admin:access_librarygrant_add"),
        {"library": runbooks.pk, "user": carol.pk, "group": "", "role": "reader"},
    )
    assert given.status_code == 302
    assert LibraryGrant.objects.filter(library=runbooks, user=carol, role="reader").exists()


def test_without_managing_a_library_the_grants_are_not_in_the_admin(
    client: Client, settings: Settings
) -> None:
    settings.LIBRARY_ACCESS = "grants"
    staff = User.objects.create(username="erin", is_staff=True)
    client.force_login(staff)
    assert client.get(reverse(CHANGELIST)).status_code == 403
