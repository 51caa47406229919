"""python manage.py ingest PATH_OR_URL... --library NAME --collection NAME [--include/--exclude GLOB]
[--meta KEY=VALUE] [--prune] [--background]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.ingestion.services import reindex_library
from mnemosyne.ingestion.tasks import enqueue_paths
from mnemosyne.lib.schema import require_current_schema
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import Library, LibraryType
from mnemosyne.library.services import ensure_collection, ensure_library
from mnemosyne.profiles.identity import InvalidIdentity, given_metadata


class Command(BaseCommand):
    help = (
        "Ingest files, directories and http(s) URLs (.txt, .md, .pdf, .html, .docx, images) into a "
        "collection, creating the library and collection when missing. Unchanged files are skipped by "
        "content hash; a file or URL that cannot be ingested is reported and the run goes on. Exits "
        "non-zero only when no input could be ingested."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "paths",
            nargs="+",
            metavar="PATH_OR_URL",
            help="Files, directories (walked recursively, hidden files ignored) or http(s) URLs.",
        )
        parser.add_argument("--library", required=True, help="Library name (created when missing).")
        parser.add_argument(
            "--library-type",
            choices=LibraryType.values,
            default=None,
            help="Library type, and so its profile (the domain rules its searches and ingests run: "
            "`manage.py profile --list`), for a new library or to change an existing one's.",
        )
        parser.add_argument(
            "--language",
            default=None,
            metavar="CODE",
            help=(
                "The library's language, an ISO 639 code (en, de, fr, ja, …; default en for a new "
                "library): its stemming and stop words in full-text search, 'simple' matching for "
                "languages PostgreSQL does not stem. Changing an existing library's re-indexes its chunks."
            ),
        )
        parser.add_argument("--collection", required=True, help="Collection name (created when missing).")
        parser.add_argument(
            "--include",
            action="append",
            default=[],
            metavar="GLOB",
            help=(
                "In directories, consider only files matching this glob (repeatable), relative to the "
                "directory: '*.md' matches at any depth, '**' spans directories ('guides/**/*.md')."
            ),
        )
        parser.add_argument(
            "--exclude",
            action="append",
            default=[],
            metavar="GLOB",
            help="In directories, ignore files matching this glob (repeatable), e.g. 'drafts/**'.",
        )
        parser.add_argument(
            "--prune",
            action="store_true",
            help=(
                "Delete the collection's items from the given directories whose file no longer exists "
                "(with their chunks and stored text). Items from URLs are never pruned."
            ),
        )
        parser.add_argument(
            "--background",
            action="store_true",
            help=(
                "Enqueue one task per file or URL and return at once; `python manage.py db_worker` "
                "processes them (any number of workers, on any machine sharing the database)."
            ),
        )
        parser.add_argument(
            "--meta",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help=(
                "What the documents are, over what is read from them (repeatable): title, organisation, "
                "doc_type (10-K, 10-Q, 8-K, earnings release, paper, manual, …), date (YYYY-MM-DD), "
                "period (FY2019, Q3 FY2023). Kept at every later ingest of the same items."
            ),
        )
        parser.add_argument("--no-progress", action="store_true", help="Never show a progress bar.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            given = given_metadata(options["meta"])
        except InvalidIdentity as exc:
            raise CommandError(str(exc)) from exc
        require_current_schema()
        before, type_before = (
            Library.objects.filter(name=options["library"].strip())
            .values_list("language", "library_type")
            .first()
        ) or (None, None)
        try:
            library = ensure_library(
                name=options["library"], library_type=options["library_type"], language=options["language"]
            )
            collection = ensure_collection(library=library, name=options["collection"])
        except InvalidArgument as exc:
            raise CommandError(str(exc)) from exc
        if type_before is not None and type_before != library.library_type:
            self.stdout.write(
                f"Library {library.name!r} profile {type_before} → {library.library_type}: its searches run "
                "the new profile's rules now, and its documents are read again under it as an ingest or "
                "sync reaches them (or `manage.py profile --library … --reread`)."
            )
        if before is not None and before != library.language:
            self.stdout.write(f"Re-indexing library {library.name!r} for language {library.language!r} …")
            count = reindex_library(library)
            self.stdout.write(f"Re-indexed {count} chunk(s).")
        common: dict[str, Any] = {
            "collection": collection,
            "report": lambda line: self.stdout.write(line),
            "include": options["include"],
            "exclude": options["exclude"],
            "prune": options["prune"],
            "given": given,
        }
        if options["background"]:
            summary = enqueue_paths(options["paths"], **common)
            self.stdout.write(
                f"Enqueued {summary.enqueued} ingest task(s). Run `python manage.py db_worker` to process "
                "them (as many workers as you like, on any machine that shares the database and sees "
                "the same paths)."
            )
        else:
            summary = ingest_paths(
                options["paths"], progress=False if options["no_progress"] else None, **common
            )
        self.stdout.write(f"{library.name} / {collection.name}: {summary.line()}")
        if summary.every_input_failed():
            raise CommandError("no input could be ingested")
