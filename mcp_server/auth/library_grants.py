"""Giving and taking library roles (each an audit row), and the switch to LIBRARY_ACCESS=grants.

`grant` and `revoke` are what the admin and `manage.py grant` / `manage.py revoke` call; each
returns the change it made (or that there was none) in words fit to print.

`reconcile_policy` runs where the server starts (and after `migrate`): the first time it finds the
policy switched from `open` to `grants`, it grants every active person what their live tokens and
OAuth grants already used — reader on the libraries they read, editor where they may write — so
every credential answers as before until someone changes a grant; it says what it granted, in the
log and in an audit row.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.contrib.auth.models import Group, User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from mcp_server.auth.library_access import GRANTS, Role, policy
from mcp_server.models import AccessPolicyState, LibraryGrant, MCPAuditEvent, MCPToken, OAuthGrant
from mnemosyne.library.models import Library

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GrantChange:
    holder: str
    library: Library
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def describe(self) -> str:
        where = f"library {self.library.name!r} ({self.library.uid})"
        if not self.changed:
            state = f"already {self.before}" if self.before else "had no role"
            return f"unchanged: {self.holder} {state} on {where}"
        if self.after is None:
            return f"revoked: {self.holder} is no longer {self.before} on {where}"
        if self.before is None:
            return f"granted: {self.holder} is now {self.after} on {where}"
        return f"changed: {self.holder} {self.before} → {self.after} on {where}"


def holder_name(user: User | None, group: Group | None) -> str:
    return f"user {user.get_username()}" if user is not None else f"group {group.name if group else '?'}"


@transaction.atomic
def grant(
    *,
    library: Library,
    role: Role,
    user: User | None = None,
    group: Group | None = None,
    actor: str,
    address: str = "",
) -> GrantChange:
    """Give (or change to) `role` on `library` for a user or a group."""
    _one_holder(user, group)
    row = LibraryGrant.objects.select_for_update().filter(library=library, user=user, group=group).first()
    before = row.role if row is not None else None
    change = GrantChange(holder_name(user, group), library, before, role.label)
    if not change.changed:
        return change
    if row is None:
        LibraryGrant.objects.create(
            library=library, user=user, group=group, role=role.label, granted_by=actor
        )
    else:
        row.role = role.label
        row.granted_by = actor
        row.save(update_fields=["role", "granted_by", "updated_at"])
    _audit(MCPAuditEvent.Kind.GRANT_GIVEN, change, actor, address)
    return change


@transaction.atomic
def revoke(
    *, library: Library, user: User | None = None, group: Group | None = None, actor: str, address: str = ""
) -> GrantChange:
    """Take away whatever role the user or group holds on `library`."""
    _one_holder(user, group)
    row = LibraryGrant.objects.select_for_update().filter(library=library, user=user, group=group).first()
    change = GrantChange(holder_name(user, group), library, row.role if row else None, None)
    if row is not None:
        row.delete()
        _audit(MCPAuditEvent.Kind.GRANT_REVOKED, change, actor, address)
    return change


def _one_holder(user: User | None, group: Group | None) -> None:
    if (user is None) == (group is None):
        raise ValueError("a grant is for one user or one group")


def _audit(kind: str, change: GrantChange, actor: str, address: str) -> None:
    MCPAuditEvent.objects.create(
        kind=kind,
        actor=actor[:150],
        address=address[:64],
        detail={
            "holder": change.holder,
            "library": change.library.uid,
            "library_name": change.library.name,
            "before": change.before,
            "after": change.after,
        },
    )


def reconcile_policy() -> list[str]:
    """Notice a switch of LIBRARY_ACCESS; on a switch to grants, keep live credentials answering
    as before by granting what they use. Returns what it did, a line each (nothing: no switch)."""
    current = policy()
    with transaction.atomic():
        state = AccessPolicyState.objects.select_for_update().first()
        last = state.policy if state is not None else None
        if last == current:
            return []
        lines = _seed_from_credentials() if current == GRANTS else []
        if state is None:
            AccessPolicyState.objects.create(policy=current)
        else:
            state.policy = current
            state.save(update_fields=["policy", "changed_at"])
        if last is None and current != GRANTS:
            return []  # the first start under the default: nothing switched
        summary = f"LIBRARY_ACCESS switched from {last or 'open'} to {current}"
        MCPAuditEvent.objects.create(
            kind=MCPAuditEvent.Kind.POLICY_SWITCHED,
            actor="system",
            detail={"from": last or "open", "to": current, "granted": lines},
        )
    for line in [summary, *lines]:
        logger.warning("%s", line)
    return [summary, *lines]


def _seed_from_credentials() -> list[str]:
    """Reader on every library a live token or OAuth grant of an active non-superuser reads, editor
    where it may also write; existing grants are only ever raised, never lowered."""
    now = timezone.now()
    every = list(Library.objects.all())
    wanted: dict[tuple[int, int], Role] = {}
    users: dict[int, User] = {}
    tokens = (
        MCPToken.objects.select_related("user")
        .prefetch_related("libraries")
        .filter(revoked_at__isnull=True, user__is_active=True, user__is_superuser=False)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
    )
    oauth = (
        OAuthGrant.objects.select_related("user")
        .prefetch_related("libraries")
        .filter(revoked_at__isnull=True, user__is_active=True, user__is_superuser=False)
    )
    used: list[tuple[User, list[str], list[Library]]] = [
        (token.user, token.scopes or [], list(token.libraries.all())) for token in tokens
    ] + [(grant.user, grant.scopes or [], list(grant.libraries.all())) for grant in oauth]
    for user, scopes, libraries in used:
        role = Role.EDITOR if "write" in scopes else Role.READER
        users[user.pk] = user
        for library in libraries or every:
            key = (user.pk, library.pk)
            wanted[key] = max(role, wanted.get(key, Role.READER))
    by_id = {library.pk: library for library in every}
    lines = []
    for (user_id, library_id), role in sorted(wanted.items()):
        held = LibraryGrant.objects.filter(user_id=user_id, library_id=library_id).first()
        if held is not None and Role.named(held.role) >= role:
            continue
        change = grant(library=by_id[library_id], role=role, user=users[user_id], actor="system")
        lines.append(change.describe() + " (a live credential already used it)")
    return lines
