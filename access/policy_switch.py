"""The explicit switch of the library access policy (`manage.py access_policy`), and the grants it
may seed from live credentials — on the switch from open to grants only, and only when asked
(`--seed-from-credentials`).

Nothing is inferred beyond what a credential shows:
- a token or OAuth grant confined to libraries gives its owner reader on each of them, editor where
  it has the write scope;
- an unconfined one (under open it read every library) gives reader only on the libraries its
  owner's own calls are recorded against in the query log, and never editor: writing is granted
  by someone, not read off a log.
Existing grants are only ever kept or raised, superusers (who reach everything) get none, and a
dry run lists the same lines without writing any.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from access import access_policy
from access.access_policy import GRANTS, OPEN, POLICIES
from access.library_access import Role
from access.library_grants import grant
from access.models import AccessPolicyState, LibraryGrant, MCPAuditEvent, MCPToken, OAuthGrant
from mnemosyne.library.models import Library, QueryLog


@dataclass(frozen=True)
class Switch:
    before: str
    after: str
    # What was (or, in a dry run, would be) granted, a line each.
    granted: list[str]
    dry_run: bool

    @property
    def changed(self) -> bool:
        return self.before != self.after


class SwitchRefused(ValueError):
    """A switch that cannot be made as asked; the message says why."""


def switch(to: str, *, actor: str, seed: bool = False, dry_run: bool = False) -> Switch:
    """Record `to` as the policy (one transaction, one audit row); with `seed`, only on the switch
    from open to grants, first grant what live credentials are confined to or were seen using."""
    if to not in POLICIES:
        raise SwitchRefused(f"unknown policy {to[:30]!r}: choose {' or '.join(POLICIES)}")
    with transaction.atomic():
        state = AccessPolicyState.objects.select_for_update().order_by("pk").first()
        before = state.policy if state is not None else OPEN
        if seed and not (before == OPEN and to == GRANTS):
            raise SwitchRefused(
                "grants are seeded from credentials only on the switch from open to grants; "
                f"the policy is {before} (give roles with `manage.py grant`)"
            )
        granted = seed_from_credentials(actor=actor, dry_run=dry_run) if seed else []
        if dry_run:
            transaction.set_rollback(True)
            return Switch(before, to, granted, dry_run=True)
        if state is None:
            AccessPolicyState.objects.create(policy=to, changed_by=actor[:150])
        elif before != to:
            state.policy = to
            state.changed_by = actor[:150]
            state.save(update_fields=["policy", "changed_by", "changed_at"])
        if state is None or before != to:
            MCPAuditEvent.objects.create(
                kind=MCPAuditEvent.Kind.POLICY_SWITCHED,
                actor=actor[:150],
                detail={"from": before, "to": to, "granted": granted},
            )
    access_policy.forget()
    return Switch(before, to, granted, dry_run=False)


@dataclass(frozen=True)
class _Credential:
    user: User
    writes: bool
    libraries: list[Library]


def seed_from_credentials(*, actor: str, dry_run: bool) -> list[str]:
    """Grant (or, dry, list) what live credentials show their owners use, a line each."""
    wanted: dict[tuple[int, int], tuple[Role, str]] = {}
    users: dict[int, User] = {}
    libraries: dict[int, Library] = {}
    unconfined: set[int] = set()
    for credential in _live_credentials():
        users[credential.user.pk] = credential.user
        if not credential.libraries:
            unconfined.add(credential.user.pk)
            continue
        role = Role.EDITOR if credential.writes else Role.READER
        for library in credential.libraries:
            libraries[library.pk] = library
            _want(wanted, (credential.user.pk, library.pk), role, "a live credential is confined to it")
    for user_id, library in _libraries_used(users[pk] for pk in unconfined):
        libraries[library.pk] = library
        _want(wanted, (user_id, library.pk), Role.READER, "their calls read it (query log)")
    lines = []
    for (user_id, library_id), (role, why) in sorted(wanted.items()):
        held = LibraryGrant.objects.filter(user_id=user_id, library_id=library_id).first()
        if held is not None and Role.named(held.role) >= role:
            continue
        user, library = users[user_id], libraries[library_id]
        if dry_run:
            where = f"library {library.name!r} ({library.uid})"
            line = f"would grant: user {user.get_username()} {role.label} on {where}"
        else:
            line = grant(library=library, role=role, user=user, actor=actor).describe()
        lines.append(f"{line} ({why})")
    return lines


def _want(
    wanted: dict[tuple[int, int], tuple[Role, str]], key: tuple[int, int], role: Role, why: str
) -> None:
    if key not in wanted or role > wanted[key][0]:
        wanted[key] = (role, why)


def _live_credentials() -> list[_Credential]:
    """Unrevoked, unexpired tokens and OAuth grants of active people who are not superusers."""
    owners = Q(revoked_at__isnull=True, user__is_active=True, user__is_superuser=False)
    tokens = (
        MCPToken.objects.select_related("user")
        .prefetch_related("libraries")
        .filter(owners)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
    )
    oauth = OAuthGrant.objects.select_related("user").prefetch_related("libraries").filter(owners)
    rows: list[MCPToken | OAuthGrant] = [*tokens, *oauth]
    return [_Credential(row.user, "write" in (row.scopes or []), list(row.libraries.all())) for row in rows]


def _libraries_used(owners: Iterable[User]) -> list[tuple[int, Library]]:
    """(user id, library) for each library an owner's successful calls are recorded against: the
    query log's caller is the username, or "<username> (token <name>)"."""
    by_name = {user.get_username(): user.pk for user in owners}
    if not by_name:
        return []
    callers = Q()
    for name in by_name:
        callers |= Q(caller=name) | Q(caller__startswith=f"{name} (token ")
    rows = (
        QueryLog.objects.filter(callers, outcome="ok", library__isnull=False)
        .values_list("caller", "library_id")
        .distinct()
    )
    used: dict[int, set[int]] = defaultdict(set)
    for caller, library_id in rows:
        name = caller.split(" (token ", 1)[0]
        if name in by_name:
            used[by_name[name]].add(library_id)
    found = Library.objects.in_bulk({library for ids in used.values() for library in ids})
    return [(user_id, found[library_id]) for user_id, ids in used.items() for library_id in sorted(ids)]
