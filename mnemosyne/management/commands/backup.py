"""python manage.py backup DIR

Writes the database and the chunk store, consistent with each other, into DIR (new or empty):
database.dump, chunks/, manifest.json (mnemosyne/library/backups.py). Ingestion may go on meanwhile.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mnemosyne.lib.schema import require_current_schema
from mnemosyne.library import backups
from mnemosyne.storage import get_chunk_store


class Command(BaseCommand):
    help = "Back up the database and the chunk store into a new directory."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path, help="A new or empty directory for the backup.")

    def handle(self, *args: Any, **options: Any) -> None:
        require_current_schema()
        try:
            summary = backups.backup(options["directory"], store=get_chunk_store(), report=self.stdout.write)
        except backups.BackupError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"Backed up {summary.items} items, {summary.chunks} chunks, {summary.objects} stored objects "
            f"to {options['directory']}."
        )
        if summary.missing:
            self.stderr.write(
                f"{len(summary.missing)} objects the database names were not in the chunk store "
                f"(listed in manifest.json), e.g. {summary.missing[0]}"
            )
