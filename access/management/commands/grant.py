"""python manage.py grant --user U | --group G --library L --role reader|editor|manager

Gives a user, or a Django group (created when new), a role on one library (by uid or exact name),
or changes the role it holds; prints what changed. Roles take effect at the very next request of
every token, OAuth grant and session of the people concerned (under LIBRARY_ACCESS=grants).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from access.library_access import Role
from access.library_grants import grant
from access.management.grant_arguments import add_holder_arguments, holder_and_library, one_line
from mnemosyne.lib.schema import require_current_schema


class Command(BaseCommand):
    help = "Give a user or a group a role (reader, editor, manager) on a library."

    def add_arguments(self, parser: CommandParser) -> None:
        add_holder_arguments(parser)
        parser.add_argument("--role", default="", help="reader, editor or manager.")

    def handle(self, *args: Any, **options: Any) -> None:
        with one_line():
            try:
                role = Role.named(options["role"] or "")
            except ValueError as exc:
                raise ValueError(f"--role: {exc}") from None
            require_current_schema()
            holder = holder_and_library(options, create_group=True)
            change = grant(
                library=holder.library,
                role=role,
                user=holder.user,
                group=holder.group,
                actor="manage.py grant",
            )
        if holder.new_group and holder.group is not None:
            self.stdout.write(f"created group {holder.group.name!r}")
        self.stdout.write(change.describe())
