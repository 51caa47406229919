"""python manage.py revoke_mcp_token NAME_OR_PREFIX: revoke exactly one token, by name or prefix."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q

from access.models import MCPToken
from access.services import revoke_token
from mnemosyne.lib.schema import require_current_schema


class Command(BaseCommand):
    help = "Revoke one MCP token, given its name or the start of its prefix (e.g. mnem_AbC1)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("reference", help="The token's name, or its prefix as list_mcp_tokens shows.")

    def handle(self, *args: Any, **options: Any) -> None:
        require_current_schema()
        reference = options["reference"].strip().rstrip("…")
        if not reference:
            raise CommandError("give a token name or prefix")
        matches = list(
            MCPToken.objects.select_related("user").filter(
                Q(name=reference) | Q(prefix__startswith=reference)
            )
        )
        if not matches:
            raise CommandError(f"no token named or prefixed {reference!r}")
        if len(matches) > 1:
            found = ", ".join(f"{t.name} ({t.user.get_username()}, {t.prefix}…)" for t in matches)
            raise CommandError(f"{reference!r} matches several tokens: {found}; give a longer prefix")
        token = revoke_token(token=matches[0], actor="revoke_mcp_token")
        self.stdout.write(f"Revoked {token.name!r} ({token.user.get_username()}, {token.prefix}…).")
