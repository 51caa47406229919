"""python manage.py revoke --user U | --group G --library L

Takes away the role a user or a group holds on one library (by uid or exact name); prints what
changed. It counts from the very next request of their tokens, OAuth grants and sessions.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from access.library_grants import revoke
from access.management.grant_arguments import add_holder_arguments, holder_and_library, one_line
from mnemosyne.lib.schema import require_current_schema


class Command(BaseCommand):
    help = "Take away the role a user or a group holds on a library."

    def add_arguments(self, parser: CommandParser) -> None:
        add_holder_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        with one_line():
            require_current_schema()
            holder = holder_and_library(options, create_group=False)
            change = revoke(
                library=holder.library, user=holder.user, group=holder.group, actor="manage.py revoke"
            )
        self.stdout.write(change.describe())
