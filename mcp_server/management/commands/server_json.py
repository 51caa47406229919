"""python manage.py server_json --name NAMESPACE/mnemosyne [--url URL] [--output FILE]: this
deployment's MCP Registry entry (mcp_server/registry_entry.py), to publish with `mcp-publisher`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcp_server.registry_entry import BadEntry, server_json
from mcp_server.server import SERVER_NAME, SERVER_VERSION


class Command(BaseCommand):
    help = "Write this server's MCP Registry entry (server.json, schema 2025-12-11)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--name",
            required=True,
            help="<namespace>/<name> in a namespace you can verify with the registry, e.g. "
            "io.github.your-user/mnemosyne.",
        )
        parser.add_argument(
            "--url",
            help="The server's MCP endpoint, e.g. https://mnemosyne.example.org/mcp/ (default: a "
            "template whose host the person installing it fills in).",
        )
        parser.add_argument("--output", help="Write it to this file instead of standard output.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            entry = server_json(
                name=options["name"],
                version=SERVER_VERSION,
                title=SERVER_NAME.capitalize(),
                url=options["url"],
            )
        except BadEntry as exc:
            raise CommandError(str(exc)) from None
        text = json.dumps(entry, indent=2, ensure_ascii=False) + "\n"
        if options["output"]:
            Path(options["output"]).write_text(text, encoding="utf-8")
            self.stdout.write(f"wrote {options['output']}")
        else:
            self.stdout.write(text, ending="")
