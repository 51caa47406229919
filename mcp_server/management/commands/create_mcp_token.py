"""python manage.py create_mcp_token --user U --name N [--tools search,get_chunk] [--expires-days 30]
    [--scopes read,write] [--libraries uid,uid] [--rate-limit 60]

The raw token is printed alone on the last line, once; only its digest is stored. Without --scopes
the token may only read; --libraries confines it to those libraries (the rest is invisible).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import IntegrityError, transaction
from django.utils import timezone

from access.models import SCOPES, MCPToken
from access.services import create_token
from access.users import ensure_token_owner
from mcp_server.tools.catalog import TOOL_SPECS
from mnemosyne.lib.schema import require_current_schema
from mnemosyne.library.models import Library


def _names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


class Command(BaseCommand):
    help = "Create an MCP bearer token; it is shown once, on the last line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="Owner's username (created when missing).")
        parser.add_argument("--name", required=True, help="A name for the token, unique per user.")
        parser.add_argument(
            "--tools", default="", help="Comma-separated tools the token may call (default: all)."
        )
        parser.add_argument("--expires-days", type=int, default=None, help="Days until the token expires.")
        parser.add_argument(
            "--scopes", default="read", help="Comma-separated scopes: read, write (default: read)."
        )
        parser.add_argument(
            "--libraries", default="", help="Comma-separated library uids the token may see (default: all)."
        )
        parser.add_argument("--rate-limit", type=int, default=None, help="Calls per minute (default: none).")
        parser.add_argument(
            "--sign-results", action="store_true", help="Sign every result (HMAC-SHA256, see docs)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        require_current_schema()
        known = {spec.name for spec in TOOL_SPECS}
        tools = [name.strip() for name in options["tools"].split(",") if name.strip()]
        unknown = sorted(set(tools) - known)
        if unknown:
            raise CommandError(f"unknown tool(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        scopes = _names(options["scopes"])
        if not scopes or set(scopes) - set(SCOPES):
            raise CommandError(f"--scopes must be a comma-separated subset of {', '.join(SCOPES)}")
        library_uids = _names(options["libraries"])
        libraries = list(Library.objects.filter(uid__in=library_uids))
        missing = sorted(set(library_uids) - {library.uid for library in libraries})
        if missing:
            raise CommandError(f"unknown library uid(s): {', '.join(missing)}")
        rate_limit = options["rate_limit"]
        if rate_limit is not None and rate_limit < 1:
            raise CommandError("--rate-limit must be at least 1")
        days = options["expires_days"]
        if days is not None and days < 1:
            raise CommandError("--expires-days must be at least 1")
        name = options["name"].strip()
        if not name or len(name) > MCPToken._meta.get_field("name").max_length:  # type: ignore[operator]
            raise CommandError("--name must be 1 to 100 characters")
        try:
            with transaction.atomic():  # a refused token leaves no new user behind
                user, created = ensure_token_owner(options["user"])
                token, raw = create_token(
                    user=user,
                    name=name,
                    allowed_tools=tools,
                    expires_at=timezone.now() + timedelta(days=days) if days else None,
                    scopes=scopes,
                    libraries=libraries,
                    rate_limit_per_minute=rate_limit,
                    sign_results=options["sign_results"],
                    actor="create_mcp_token",
                    address="command line",
                )
        except IntegrityError:
            raise CommandError(
                f"user {options['user']!r} already has a token named {options['name']!r}"
            ) from None
        except ValueError as exc:
            raise CommandError(f"refused: {exc}") from None
        if created:
            self.stderr.write(f"Created user {user.get_username()!r} without a usable password.")
        tools_text = ", ".join(token.allowed_tools) if token.allowed_tools else "all tools"
        expiry = token.expires_at.isoformat() if token.expires_at else "never"
        where = ", ".join(sorted(library_uids)) if library_uids else "all libraries"
        scopes_text = ", ".join(token.scopes)
        self.stdout.write(
            f"Token {token.name!r} for {user.get_username()} ({tools_text}; scopes {scopes_text}; "
            f"{where}; expires {expiry})."
        )
        self.stdout.write("Store it now: it is not shown again.")
        self.stdout.write(raw)
