"""python manage.py ingest PATH... --library NAME [--library-type T] --collection NAME"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import LibraryType
from mnemosyne.library.services import ensure_collection, ensure_library


class Command(BaseCommand):
    help = "Ingest files and directories (.txt, .md) into a collection, creating it when missing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path, help="Files or directories to ingest.")
        parser.add_argument("--library", required=True, help="Library name (created when missing).")
        parser.add_argument(
            "--library-type",
            choices=LibraryType.values,
            default=None,
            help="Library type, for a new library or to change an existing one's.",
        )
        parser.add_argument("--collection", required=True, help="Collection name (created when missing).")
        parser.add_argument("--no-progress", action="store_true", help="Never show a progress bar.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            library = ensure_library(name=options["library"], library_type=options["library_type"])
            collection = ensure_collection(library=library, name=options["collection"])
        except InvalidArgument as exc:
            raise CommandError(str(exc)) from exc
        summary = ingest_paths(
            options["paths"],
            collection=collection,
            report=lambda line: self.stdout.write(line),
            progress=False if options["no_progress"] else None,
        )
        self.stdout.write(f"{library.name} / {collection.name}: {summary.line()}")
        counts = summary.counts()
        if counts["failed"] and not (counts["created"] or counts["updated"] or counts["unchanged"]):
            raise CommandError("every file failed to ingest")
