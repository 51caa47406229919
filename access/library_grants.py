"""Giving and taking library roles (each an audit row).

`grant` and `revoke` are what the admin, the console and `manage.py grant` / `manage.py revoke`
call (and the explicit policy switch, policy_switch.py); each returns the change it made (or that
there was none) in words fit to print. `grant` is the only code that creates or raises a grant:
the model refuses any other write (models.granting).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import Group, User
from django.db import transaction

from access.library_access import Role
from access.models import LibraryGrant, MCPAuditEvent, granting
from mnemosyne.library.models import Library


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
    with granting():
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
