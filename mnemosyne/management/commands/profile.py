"""python manage.py profile --library L [--set PROFILE] [--reread]   |   manage.py profile --list

Shows a library's profile — what its searches and ingests run (mnemosyne/profiles/catalog.py) — or
sets another one and says what that changes. What a document is, and how the index writes it, are
read at ingest: --reread reads the library's documents again from the bytes kept beside their
chunks (documents already read under the new profile are left as they are). --list names every
profile.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mnemosyne.ingestion.rereading import reread_library
from mnemosyne.lib.schema import require_current_schema
from mnemosyne.library.errors import NotFound
from mnemosyne.library.selectors import find_library
from mnemosyne.profiles.catalog import PROFILES, UnknownProfile, profile_of
from mnemosyne.profiles.rules_listing import rule_lines
from mnemosyne.profiles.services import change_profile


class Command(BaseCommand):
    help = "Show or set a library's profile (the domain rules its searches and ingests run)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--library", default="", help="The library's uid or name.")
        parser.add_argument("--set", default="", metavar="PROFILE", help=f"One of {', '.join(PROFILES)}.")
        parser.add_argument(
            "--reread", action="store_true", help="Read the library's documents again under its profile."
        )
        parser.add_argument("--list", action="store_true", help="Name every profile and what it runs.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["list"]:
            for profile in PROFILES.values():
                self.stdout.write(f"{profile.name}: {profile.purpose}")
            return
        if not options["library"]:
            raise CommandError("give --library (its uid or name), or --list")
        require_current_schema()
        try:
            library = find_library(options["library"])
        except NotFound:
            raise CommandError(f"no library with the uid or name {options['library'][:200]!r}") from None
        if options["set"]:
            try:
                change = change_profile(library=library, profile=options["set"].strip())
            except UnknownProfile as exc:
                raise CommandError(str(exc)) from None
            for said in change.describe():
                self.stdout.write(said)
            library = change.library
        else:
            self.stdout.write(
                f"library {library.name!r} ({library.uid}): profile {profile_of(library.library_type).name}"
            )
            for rule in rule_lines(library):
                self.stdout.write(f"  {rule}")
        if options["reread"]:
            summary = reread_library(library, report=self.stdout.write)
            self.stdout.write(f"re-read: {summary.line()}")
