"""python manage.py restore DIR [--replace]

Loads a backup made by `backup` into the configured database (in one transaction) and chunk store.
A database that already holds items is replaced only with --replace. With GRAPH_BACKEND=neo4j, run
`rebuild_graph` afterwards to project the restored graph.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from mnemosyne.library import backups
from mnemosyne.storage import get_chunk_store


class Command(BaseCommand):
    help = "Restore a backup made by `backup` into the configured database and chunk store."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path, help="A directory written by `manage.py backup`.")
        parser.add_argument(
            "--replace",
            action="store_true",
            help="Replace a database that already holds items (its contents are lost).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            summary = backups.restore(
                options["directory"],
                store=get_chunk_store(),
                replace=options["replace"],
                report=self.stdout.write,
            )
        except backups.BackupError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"Restored {summary.items} items, {summary.chunks} chunks, {summary.objects} stored objects."
        )
        if settings.GRAPH_BACKEND == "neo4j":
            self.stdout.write(
                "Run `python manage.py rebuild_graph` to project the restored graph into Neo4j."
            )
