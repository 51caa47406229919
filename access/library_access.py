"""Which libraries a person may read, change and manage, computed afresh at every request.

The database's recorded policy chooses (access_policy.py; LIBRARY_ACCESS only the first choice of
a fresh database):
- `open` (the default): every active user reads every library; what a token may write is its
  scopes' business, as before grants existed;
- `grants`: a person reaches only the libraries granted to them or to one of their Django groups
  (LibraryGrant: reader < editor < manager); superusers reach everything.

A credential (token, OAuth grant, browser session) never reaches further than its owner does now:
`reach_of(user)` is read at each request (one indexed query under `grants`, none under `open`), so
a revoked grant, a group left or a user deactivated counts from the very next call.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q

from access import access_policy
from access.access_policy import GRANTS as GRANTS
from access.access_policy import OPEN as OPEN
from access.models import LibraryGrant


class Role(enum.IntEnum):
    READER = 1
    EDITOR = 2
    MANAGER = 3

    @classmethod
    def named(cls, name: str) -> Role:
        """The role called `name` (reader, editor, manager); ValueError names the choices."""
        try:
            return cls[name.strip().upper()]
        except KeyError:
            raise ValueError(
                f"unknown role {name[:50]!r}: choose {', '.join(role.label for role in cls)}"
            ) from None

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Reach:
    """Library ids by what may be done in them; None is every library."""

    readable: frozenset[int] | None
    editable: frozenset[int] | None
    managed: frozenset[int] | None

    def narrowed(self, library_ids: frozenset[int] | None) -> Reach:
        """This reach within `library_ids` (a token's or an OAuth grant's own libraries)."""
        if library_ids is None:
            return self
        return Reach(
            readable=_within(self.readable, library_ids),
            editable=_within(self.editable, library_ids),
            managed=_within(self.managed, library_ids),
        )

    def may(self, role: Role, library_id: int) -> bool:
        ids = {Role.READER: self.readable, Role.EDITOR: self.editable, Role.MANAGER: self.managed}[role]
        return ids is None or library_id in ids


EVERYTHING = Reach(readable=None, editable=None, managed=None)
NOTHING = Reach(readable=frozenset(), editable=frozenset(), managed=frozenset())


def policy() -> str:
    return access_policy.in_force()


def reach_of(user: AbstractBaseUser | AnonymousUser) -> Reach:
    """What this user reaches now: nothing when inactive, everything for a superuser."""
    if not user.is_authenticated or not user.is_active:
        return NOTHING
    if getattr(user, "is_superuser", False):
        return EVERYTHING
    if policy() == OPEN:
        # Reads everywhere; a token's scopes decide writes; managing grants is for superusers.
        return Reach(readable=None, editable=None, managed=frozenset())
    roles = roles_of(user.pk)
    return Reach(
        readable=frozenset(roles),
        editable=frozenset(library for library, role in roles.items() if role >= Role.EDITOR),
        managed=frozenset(library for library, role in roles.items() if role >= Role.MANAGER),
    )


def roles_of(user_id: int) -> dict[int, Role]:
    """The best role the user holds on each library, directly or through a group: one query
    (the grants' user and group indexes, and auth_user_groups' user index)."""
    rows = LibraryGrant.objects.filter(Q(user_id=user_id) | Q(group__user__id=user_id)).values_list(
        "library_id", "role"
    )
    best: dict[int, Role] = {}
    for library_id, name in rows:
        role = Role.named(name)
        if role > best.get(library_id, 0):
            best[library_id] = role
    return best


def _within(ids: frozenset[int] | None, limit: frozenset[int]) -> frozenset[int]:
    return limit if ids is None else ids & limit


def credential_problem(
    user: AbstractBaseUser, scopes: list[str] | frozenset[str], library_ids: frozenset[int] | None
) -> str | None:
    """Why a token or OAuth grant for `user` would give more than they have (under grants), or None.

    `library_ids` are the credential's own libraries (None: every library its owner reaches)."""
    name = user.get_username()
    if not user.is_active:
        return f"{name} is deactivated"
    if policy() == OPEN:
        return None
    reach = reach_of(user)
    if reach.readable is not None and not reach.readable:
        return (
            f"{name} has no grant on any library, so the token would see nothing; "
            "grant one first (manage.py grant)"
        )
    if library_ids and reach.readable is not None and not library_ids <= reach.readable:
        return f"{name} may not read every library asked for; they read only those granted to them"
    if "write" in scopes and reach.editable is not None:
        where = library_ids if library_ids else reach.readable
        if where is not None and not (where & reach.editable):
            return f"{name} is not an editor of any library asked for, so the token may not write"
    return None
