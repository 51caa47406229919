"""python manage.py mcp_stdio [--local]

Serves the same tools, resources, prompts and completions as the HTTP server over stdio, with the
MCP SDK's stdio server: stdout carries only the protocol, logs go to stderr. The MCP client
(Claude Desktop, Claude Code, …) starts this process itself.

The credential comes from the environment: `MNEMOSYNE_TOKEN` holds a token (create_mcp_token),
checked again at every request (mcp_server/transports/stdio.py). `--local` instead runs as the
local operator (every scope, every library) — only for your own machine. One of the two is required.
"""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import OperationalError

from access import access_policy, identify
from access.refusals import Refusal
from mcp_server.transports import stdio
from mcp_server.transports.stdio import TOKEN_VARIABLE
from mnemosyne.lib import outages
from mnemosyne.lib.schema import require_current_schema


class Command(BaseCommand):
    help = "Serve MCP over stdio (for clients that start the server themselves)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--local",
            action="store_true",
            help=f"Run as the local operator (all scopes, all libraries) instead of {TOKEN_VARIABLE}.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        token = os.environ.get(TOKEN_VARIABLE, "").strip()
        if options["local"] and token:
            raise CommandError(f"give {TOKEN_VARIABLE} or --local, not both")
        if not options["local"] and not token:
            raise CommandError(
                f"stdio needs a credential: set {TOKEN_VARIABLE} to a token (manage.py create_mcp_token), "
                "or pass --local to run as the local operator"
            )
        try:
            require_current_schema()
            access_policy.require_agreement("mcp_stdio")
        except OperationalError as exc:
            raise CommandError(f"cannot reach the database: {outages.summary(exc)}") from None
        except access_policy.PolicyDisagreement as exc:
            raise CommandError(str(exc)) from None
        if token:
            found = identify.identify(token)
            if isinstance(found, Refusal):
                raise CommandError(f"{TOKEN_VARIABLE} is refused: {found.message}")
        stdio.serve(token)
