"""The library access policy is a decision recorded in the database: changed only by `manage.py
access_policy` (audited), never by a process whose LIBRARY_ACCESS says otherwise; grants seeded
from credentials only on that explicit switch, and only what the credentials show.
Over real transports: test_access_policy_servers.py."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from access import access_policy, identify
from access.library_access import Role, roles_of
from access.library_grants import grant, revoke
from access.models import AccessPolicyState, LibraryGrant, MCPAuditEvent, OAuthClient, OAuthGrant
from access.services import create_token
from mnemosyne.library.models import Library, QueryLog
from mnemosyne.library.services import ensure_library
from tests.commands import refused

pytestmark = pytest.mark.django_db


@pytest.fixture
def libraries() -> tuple[Library, Library]:
    return (
        ensure_library(name="Handbook", library_type="documentation"),
        ensure_library(name="Personnel", library_type="documentation"),
    )


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue().strip(), err.getvalue().strip()


def reach(raw: str) -> tuple[list[int] | None, bool]:
    """The libraries a token reads now (None: every one) and whether it may write somewhere."""
    found = identify.identify(raw)
    assert not isinstance(found, identify.Refusal)
    seen = None if found.library_ids is None else sorted(found.library_ids)
    return seen, found.has_scope("write") and (found.editable_ids is None or bool(found.editable_ids))


def test_a_database_that_never_chose_is_under_the_setting_and_else_open(settings: Any) -> None:
    settings.LIBRARY_ACCESS = ""
    assert access_policy.in_force() == "open"
    settings.LIBRARY_ACCESS = "grants"
    assert access_policy.in_force() == "grants"
    assert not AccessPolicyState.objects.exists()


def test_the_recorded_policy_wins_over_any_setting(settings: Any) -> None:
    run("access_policy", "grants")
    for setting in ("", "open", "grants"):
        settings.LIBRARY_ACCESS = setting
        assert access_policy.in_force() == "grants"


def test_a_server_under_another_setting_refuses_to_start_in_one_line(settings: Any) -> None:
    run("access_policy", "grants")
    settings.LIBRARY_ACCESS = "open"
    with pytest.raises(access_policy.PolicyDisagreement) as raised:
        access_policy.require_agreement("serve")
    said = str(raised.value)
    assert said == (
        "serve not started: LIBRARY_ACCESS=open here, but this database's recorded access policy is "
        "grants: unset LIBRARY_ACCESS or set it to grants, or change the policy with "
        "`manage.py access_policy open`"
    )
    assert AccessPolicyState.objects.get().policy == "grants"
    settings.LIBRARY_ACCESS = ""
    access_policy.require_agreement("serve")  # unset follows the record
    settings.LIBRARY_ACCESS = "grants"
    access_policy.require_agreement("serve")


def test_a_fresh_databases_first_server_records_an_explicit_setting_and_an_unset_one_nothing(
    settings: Any,
) -> None:
    settings.LIBRARY_ACCESS = ""
    access_policy.require_agreement("serve")
    assert not AccessPolicyState.objects.exists()
    settings.LIBRARY_ACCESS = "grants"
    access_policy.require_agreement("uvicorn")
    state = AccessPolicyState.objects.get()
    assert (state.policy, state.changed_by) == ("grants", "uvicorn")
    recorded = MCPAuditEvent.objects.get(kind="policy_switched")
    assert recorded.detail == {"from": None, "to": "grants", "granted": [], "how": "first choice"}
    settings.LIBRARY_ACCESS = "open"
    with pytest.raises(access_policy.PolicyDisagreement):
        access_policy.require_agreement("uvicorn")


def test_migrate_and_a_restart_under_other_settings_leave_every_reach_as_it_was(
    libraries: tuple[Library, Library], settings: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sequence that once widened grants: a deployment under grants, people granted one
    library with unconfined tokens; `migrate` in a shell without the setting, and with the old one;
    a restart under grants."""
    handbook, personnel = libraries
    settings.LIBRARY_ACCESS = "grants"
    access_policy.require_agreement("serve")
    alice, bob = User.objects.create(username="alice"), User.objects.create(username="bob")
    grant(library=handbook, role=Role.READER, user=alice, actor="test")
    grant(library=personnel, role=Role.READER, user=bob, actor="test")
    _, alice_raw = create_token(user=alice, name="laptop")
    _, bob_raw = create_token(user=bob, name="laptop")
    revoke(library=personnel, user=bob, actor="test")  # a revoked grant must stay revoked
    before = {"alice": reach(alice_raw), "bob": reach(bob_raw)}
    assert before == {"alice": ([handbook.pk], False), "bob": ([], False)}
    grants_before = list(LibraryGrant.objects.values_list("user__username", "library_id", "role"))

    for setting in ("", "open"):
        settings.LIBRARY_ACCESS = setting
        call_command("migrate", interactive=False, verbosity=1, stdout=StringIO())
    assert "the recorded access policy was left as it is" in capsys.readouterr().err
    settings.LIBRARY_ACCESS = "grants"
    access_policy.require_agreement("serve")

    assert AccessPolicyState.objects.get().policy == "grants"
    assert {"alice": reach(alice_raw), "bob": reach(bob_raw)} == before
    assert list(LibraryGrant.objects.values_list("user__username", "library_id", "role")) == grants_before
    assert MCPAuditEvent.objects.filter(kind="policy_switched").count() == 1  # the first choice only


def test_seeding_grants_only_what_credentials_are_confined_to_or_were_seen_using(
    libraries: tuple[Library, Library],
) -> None:
    handbook, personnel = libraries
    confined, writer, user_of_handbook, idle = (
        User.objects.create(username=name) for name in ("confined", "writer", "handbook-reader", "idle")
    )
    boss = User.objects.create(username="boss", is_superuser=True)
    create_token(user=confined, name="c", libraries=[personnel])
    create_token(user=writer, name="w", scopes=["read", "write"], libraries=[handbook])
    create_token(user=user_of_handbook, name="laptop")
    create_token(user=idle, name="unused")
    create_token(user=boss, name="b")
    oauth_user = User.objects.create(username="oauth-user")
    client = OAuthClient.objects.create(client_id="client-1", information={})
    OAuthGrant.objects.create(user=oauth_user, client=client, scopes=["read"], resource="x").libraries.set(
        [handbook]
    )
    # The query log shows handbook-reader's token reading Handbook (and a refused call on Personnel).
    for library, outcome in ((handbook, "ok"), (personnel, "error")):
        QueryLog.objects.create(
            at="2026-11-01T10:00Z",
            tool="search",
            transport="http",
            caller="handbook-reader (token laptop)",
            library=library,
            ms=3.0,
            outcome=outcome,
        )

    dry, _ = run("access_policy", "grants", "--seed-from-credentials", "--dry-run")
    assert not LibraryGrant.objects.exists() and not AccessPolicyState.objects.exists()
    assert not MCPAuditEvent.objects.filter(kind__in=["policy_switched", "grant_given"]).exists()
    said, _ = run("access_policy", "grants", "--seed-from-credentials")

    expected = {
        confined.pk: {personnel.pk: Role.READER},
        writer.pk: {handbook.pk: Role.EDITOR},
        user_of_handbook.pk: {handbook.pk: Role.READER},
        oauth_user.pk: {handbook.pk: Role.READER},
    }
    assert {user: roles_of(user) for user in expected} == expected
    assert roles_of(idle.pk) == {} and roles_of(boss.pk) == {}
    assert said.splitlines()[-1] == "recorded: the access policy open → grants"
    granted = said.splitlines()[:-1]
    assert len(granted) == 4
    assert [line.split(" (")[0].replace("would grant:", "") for line in dry.splitlines()[:-1]] == [
        line.split(" (")[0].replace("granted:", "").replace(" is now", "") for line in granted
    ]
    assert dry.splitlines()[-1] == "would record: the access policy open → grants"
    switched = MCPAuditEvent.objects.get(kind="policy_switched")
    assert switched.detail["granted"] == granted and switched.actor == "manage.py access_policy"


def test_seeding_happens_only_on_the_switch_from_open_to_grants(libraries: tuple[Library, Library]) -> None:
    run("access_policy", "grants")
    said = refused("access_policy", "grants", "--seed-from-credentials")
    assert said.startswith("grants are seeded from credentials only on the switch from open to grants")
    assert not LibraryGrant.objects.exists()


def test_the_switch_to_open_needs_yes_and_bad_requests_change_nothing() -> None:
    run("access_policy", "grants")
    assert "add --yes" in refused("access_policy", "open")
    assert refused("access_policy", "everyone").startswith("unknown policy 'everyone'")
    assert refused("access_policy", "--dry-run") == "name the policy to switch to: open or grants"
    assert AccessPolicyState.objects.get().policy == "grants"
    said, _ = run("access_policy", "open", "--yes")
    assert said == "recorded: the access policy grants → open"
    assert [row.detail["to"] for row in MCPAuditEvent.objects.order_by("pk")] == ["grants", "open"]


def test_the_command_shows_the_policy_and_a_disagreeing_setting(settings: Any) -> None:
    settings.LIBRARY_ACCESS = ""
    said, _ = run("access_policy")
    assert said == (
        "no access policy recorded: this database is under open "
        "(record one with `manage.py access_policy open|grants`)"
    )
    run("access_policy", "grants")
    settings.LIBRARY_ACCESS = "open"
    said, note = run("access_policy")
    assert said.startswith("access policy: grants (recorded ") and said.endswith(
        " by manage.py access_policy)"
    )
    assert note.startswith(
        "note: LIBRARY_ACCESS=open here, but this database's recorded access policy is grants"
    )
