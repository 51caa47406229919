"""The arguments `manage.py grant` and `manage.py revoke` share: who (--user or --group) and which
library (--library, by uid or exact name), each refused in one line when wrong."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import Group, User
from django.core.management.base import CommandError, CommandParser

from mnemosyne.library.models import Library


@dataclass(frozen=True)
class Holder:
    library: Library
    user: User | None = None
    group: Group | None = None
    new_group: bool = False


def add_holder_arguments(parser: CommandParser) -> None:
    parser.add_argument("--user", default="", help="A username.")
    parser.add_argument("--group", default="", help="A Django group's name (its members hold the role).")
    parser.add_argument("--library", default="", help="The library's uid, or its exact name.")


@contextlib.contextmanager
def one_line() -> Iterator[None]:
    """A bad value is one line naming it (ValueError → CommandError)."""
    try:
        yield
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def holder_and_library(options: dict[str, Any], *, create_group: bool) -> Holder:
    username, group_name = options["user"].strip(), options["group"].strip()
    if bool(username) == bool(group_name):
        raise ValueError("give exactly one of --user or --group")
    library = _library(options["library"].strip())
    if username:
        user = User.objects.filter(username=username).first()
        if user is None:
            raise ValueError(f"--user: no user named {username[:150]!r}")
        return Holder(library, user=user)
    group = Group.objects.filter(name=group_name).first()
    if group is not None:
        return Holder(library, group=group)
    if not create_group:
        raise ValueError(f"--group: no group named {group_name[:150]!r}")
    if len(group_name) > 150:
        raise ValueError("--group: a group's name has at most 150 characters")
    return Holder(library, group=Group.objects.create(name=group_name), new_group=True)


def _library(reference: str) -> Library:
    if not reference:
        raise ValueError("give --library (its uid or exact name)")
    found = list(Library.objects.filter(uid=reference)) or list(Library.objects.filter(name=reference))
    if not found:
        raise ValueError(f"--library: no library with uid or name {reference[:200]!r}")
    if len(found) > 1:
        raise ValueError(f"--library: several libraries are named {reference[:200]!r}; give its uid")
    return found[0]
