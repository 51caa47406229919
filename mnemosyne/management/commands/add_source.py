"""python manage.py add_source PATH|s3://BUCKET/PREFIX --library L --collection C [--git]
[--include P]… [--exclude P]… [--meta KEY=VALUE]… [--every MINUTES] [--no-sync]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from mnemosyne.ingestion.sync.adding import new_source
from mnemosyne.ingestion.sync.listings import SourceUnavailable
from mnemosyne.ingestion.sync.runs import sync_source
from mnemosyne.ingestion.tasks import schedule_next
from mnemosyne.lib.schema import require_current_schema
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import LibraryType
from mnemosyne.library.services import ensure_collection, ensure_library
from mnemosyne.profiles.identity import InvalidIdentity, given_as_text, given_metadata


class Command(BaseCommand):
    help = (
        "Attach a directory, a git working tree or an S3 prefix to a collection and keep the collection "
        "in sync with it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "path",
            help="The directory, the git working tree with --git, s3://bucket/prefix, or a website's "
            "start page or sitemap.xml (pages under its directory only).",
        )
        parser.add_argument("--library", required=True, help="Library name (created when missing).")
        parser.add_argument("--collection", required=True, help="Collection name (created when missing).")
        parser.add_argument("--library-type", choices=LibraryType.values, default=None)
        parser.add_argument(
            "--git", action="store_true", help="A git working tree: its committed files at HEAD are synced."
        )
        parser.add_argument(
            "--include", action="append", default=[], metavar="PATTERN",
            help="Only files matching this gitignore-style pattern (repeatable), e.g. 'docs/**/*.md'.",
        )  # fmt: skip
        parser.add_argument(
            "--exclude", action="append", default=[], metavar="PATTERN",
            help="Leave out files matching this gitignore-style pattern (repeatable), e.g. 'drafts/'.",
        )  # fmt: skip
        parser.add_argument(
            "--every", type=int, default=None, metavar="MINUTES",
            help="Sync on a schedule, every MINUTES, run by the background workers (db_worker).",
        )  # fmt: skip
        parser.add_argument(
            "--max-pages", type=int, default=200, help="A website: at most this many pages (200)."
        )
        parser.add_argument(
            "--max-depth",
            type=int,
            default=3,
            help="A website without a sitemap: links followed from the start page (3).",
        )
        parser.add_argument(
            "--meta", action="append", default=[], metavar="KEY=VALUE",
            help="What its documents are, over what is read from them (repeatable): organisation, doc_type, "
            "date (YYYY-MM-DD), period (FY2019, Q3 FY2023), title.",
        )  # fmt: skip
        parser.add_argument("--no-sync", action="store_true", help="Do not sync it now.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            document = given_as_text(given_metadata(options["meta"]))
        except InvalidIdentity as exc:
            raise CommandError(str(exc)) from exc
        require_current_schema()
        every = options["every"]
        try:
            # All or nothing: a location refused leaves no library or collection behind.
            with transaction.atomic():
                library = ensure_library(name=options["library"], library_type=options["library_type"])
                collection = ensure_collection(library=library, name=options["collection"])
                source = new_source(
                    collection,
                    options["path"],
                    git=options["git"],
                    include=options["include"],
                    exclude=options["exclude"],
                    every_minutes=every,
                    max_pages=options["max_pages"],
                    max_depth=options["max_depth"],
                    document=document,
                )
        except InvalidArgument as exc:
            raise CommandError(str(exc)) from exc
        location = source.location
        self.stdout.write(
            f"Source {source.uid}: {source.kind} {location} → {library.name} / {collection.name}"
        )
        if not options["no_sync"]:
            try:
                result = sync_source(source, report=lambda line: self.stdout.write(f"  {line}"))
            except SourceUnavailable as exc:
                raise CommandError(f"source {source.uid} added, but it cannot be synced: {exc}") from exc
            self.stdout.write(f"Synced: {result.line()}")
        if every:
            schedule_next(source)
            self.stdout.write(f"Scheduled every {every} min (run by `python manage.py db_worker`).")
