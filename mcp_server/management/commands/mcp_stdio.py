"""python manage.py mcp_stdio [--local]

Serves the same tools, resources, prompts and completions as the HTTP server over stdio, with the
MCP SDK's stdio server: stdout carries only the protocol, logs go to stderr. The MCP client
(Claude Desktop, Claude Code, …) starts this process itself.

The credential comes from the environment, as the MCP authorization spec says of stdio:
`MNEMOSYNE_TOKEN` holds a token (create_mcp_token), whose scopes, tool whitelist, library boundary
and rate limits apply as over HTTP; it is checked again at every request, so revoking it takes
effect at once. `--local` instead runs as the local operator (every scope, every library) — only
for your own machine. One of the two is required.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import anyio
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import OperationalError

from mcp_server import sdk
from mcp_server.auth import access
from mcp_server.auth.access import Refusal
from mcp_server.server import build_server
from mnemosyne import outages
from mnemosyne.embedding import get_embedder
from mnemosyne.management.schema import require_current_schema

TOKEN_VARIABLE = "MNEMOSYNE_TOKEN"


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
        except OperationalError as exc:
            raise CommandError(f"cannot reach the database: {outages.summary(exc)}") from None
        if token:
            found = access.identify(token)
            if isinstance(found, Refusal):
                raise CommandError(f"{TOKEN_VARIABLE} is refused: {found.message}")
        operator = access.local("local")

        def caller() -> Any:
            # Every request: a token revoked meanwhile is refused from then on.
            return access.identify(token) if token else operator

        # The model loads meanwhile, so the first search does not wait for all of it.
        threading.Thread(target=get_embedder, name="load-embedder", daemon=True).start()
        server = build_server(caller_source=caller, transport="stdio")
        anyio.run(sdk.run_stdio, server)
