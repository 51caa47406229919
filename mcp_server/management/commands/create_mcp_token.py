"""python manage.py create_mcp_token --user U --name N [--tools search,get_chunk] [--expires-days 30]

The raw token is printed alone on the last line, once; only its digest is stored.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import IntegrityError
from django.utils import timezone

from mcp_server.models import MCPToken
from mcp_server.server import TOOL_SPECS
from mcp_server.services import create_token
from mcp_server.users import ensure_token_owner


class Command(BaseCommand):
    help = "Create an MCP bearer token; it is shown once, on the last line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="Owner's username (created when missing).")
        parser.add_argument("--name", required=True, help="A name for the token, unique per user.")
        parser.add_argument(
            "--tools", default="", help="Comma-separated tools the token may call (default: all)."
        )
        parser.add_argument("--expires-days", type=int, default=None, help="Days until the token expires.")

    def handle(self, *args: Any, **options: Any) -> None:
        known = {spec.name for spec in TOOL_SPECS}
        tools = [name.strip() for name in options["tools"].split(",") if name.strip()]
        unknown = sorted(set(tools) - known)
        if unknown:
            raise CommandError(f"unknown tool(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        days = options["expires_days"]
        if days is not None and days < 1:
            raise CommandError("--expires-days must be at least 1")
        name = options["name"].strip()
        if not name or len(name) > MCPToken._meta.get_field("name").max_length:  # type: ignore[operator]
            raise CommandError("--name must be 1 to 100 characters")
        user, created = ensure_token_owner(options["user"])
        if created:
            self.stderr.write(f"Created user {user.get_username()!r} without a usable password.")
        try:
            token, raw = create_token(
                user=user,
                name=name,
                allowed_tools=tools,
                expires_at=timezone.now() + timedelta(days=days) if days else None,
                actor="create_mcp_token",
            )
        except IntegrityError:
            raise CommandError(
                f"user {user.get_username()!r} already has a token named {options['name']!r}"
            ) from None
        scope = ", ".join(token.allowed_tools) if token.allowed_tools else "all tools"
        expiry = token.expires_at.isoformat() if token.expires_at else "never"
        self.stdout.write(f"Token {token.name!r} for {user.get_username()} ({scope}; expires {expiry}).")
        self.stdout.write("Store it now: it is not shown again.")
        self.stdout.write(raw)
