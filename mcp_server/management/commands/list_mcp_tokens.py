"""python manage.py list_mcp_tokens: every token with its prefix, scopes and state (never the secret)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.utils import timezone

from access.models import MCPToken
from mnemosyne.lib.schema import require_current_schema


def _state(token: MCPToken) -> str:
    if token.is_revoked:
        return "revoked"
    return "expired" if token.is_expired(timezone.now()) else "active"


class Command(BaseCommand):
    help = "List MCP tokens: name, owner, prefix, scopes, tools, libraries, state, expiry, last use."

    def handle(self, *args: Any, **options: Any) -> None:
        require_current_schema()
        tokens = (
            MCPToken.objects.select_related("user").prefetch_related("libraries").order_by("user", "name")
        )
        for token in tokens:
            libraries = ",".join(sorted(library.uid for library in token.libraries.all())) or "all"
            fields = [
                token.name,
                token.user.get_username(),
                f"{token.prefix}…",
                "scopes=" + ",".join(token.scopes),
                "tools=" + (",".join(token.allowed_tools) or "all"),
                f"libraries={libraries}",
                f"rate={token.rate_limit_per_minute or '-'}",
                _state(token),
                f"expires={token.expires_at.isoformat() if token.expires_at else 'never'}",
                f"last_used={token.last_used_at.isoformat() if token.last_used_at else 'never'}",
            ]
            self.stdout.write("  ".join(fields))
        if not tokens:
            self.stdout.write("No MCP tokens.")
