"""python manage.py synonyms list --library L
python manage.py synonyms import --library L --name N FILE   (FILE '-': standard input)
python manage.py synonyms export --library L --name N [FILE]  |  export --profile P [--name N] [FILE]
python manage.py synonyms delete --library L --name N

A library's own synonym sets (mnemosyne/profiles/models.py), in the Solr / Elasticsearch synonym
file format: `a, b, c` equivalents, `a => b` one way, `#` comments. An import reports each line it
cannot read, by number, and keeps the rest; a set whose `=>` rules run in a circle, or that would
expand a term into more than a bounded number of terms, is refused whole and nothing changes.
`export --profile` writes a set a profile ships (the filings glossary), to start a library's own from.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mnemosyne.lib.schema import require_current_schema
from mnemosyne.library.errors import NotFound
from mnemosyne.library.models import Library
from mnemosyne.library.selectors import find_library
from mnemosyne.profiles.catalog import PROFILES, UnknownProfile, named
from mnemosyne.profiles.models import SynonymSet
from mnemosyne.profiles.rules_listing import rule_lines
from mnemosyne.profiles.services import delete_synonym_set, save_synonym_set
from mnemosyne.profiles.shipped import shipped_text
from mnemosyne.profiles.synonyms import SynonymSetRefused

ACTIONS = ("list", "import", "export", "delete")


class Command(BaseCommand):
    help = "List, import, export or delete a library's synonym sets (Solr / Elasticsearch format)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=ACTIONS)
        parser.add_argument("file", nargs="?", default="", help="The file to import from or export to.")
        parser.add_argument("--library", default="", help="The library's uid or name.")
        parser.add_argument("--name", default="", help="The set's name.")
        parser.add_argument(
            "--profile", default="", help=f"export: a set a profile ships ({', '.join(PROFILES)})."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "export" and options["profile"]:
            self._export_shipped(options["profile"], options["name"], options["file"])
            return
        require_current_schema()
        library = self._library(options["library"])
        if action == "list":
            for line in rule_lines(library):
                if line.kind == "synonyms":
                    self.stdout.write(f"{line.name}: {line.detail}")
            return
        name = options["name"].strip()
        if not name:
            raise CommandError(f"{action} needs --name")
        if action == "import":
            self._import(library, name, options["file"])
        elif action == "export":
            found = SynonymSet.objects.filter(library=library, name=name).first()
            if found is None:
                raise CommandError(f"library {library.name!r} has no synonym set {name[:64]!r}")
            self._write(found.text, options["file"])
        elif not delete_synonym_set(library=library, name=name):
            raise CommandError(f"library {library.name!r} has no synonym set {name[:64]!r}")
        else:
            self.stdout.write(f"deleted: synonym set {name!r} of library {library.name!r}")

    def _library(self, reference: str) -> Library:
        if not reference:
            raise CommandError("give --library (its uid or name)")
        try:
            return find_library(reference)
        except NotFound:
            raise CommandError(f"no library with the uid or name {reference[:200]!r}") from None

    def _import(self, library: Library, name: str, file: str) -> None:
        if not file:
            raise CommandError("import needs a FILE ('-' for standard input)")
        try:
            text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read {file[:200]}: {getattr(exc, 'strerror', None) or exc}") from None
        try:
            saved = save_synonym_set(library=library, name=name, text=text, actor="manage.py synonyms")
        except SynonymSetRefused as exc:
            raise CommandError(f"refused, nothing changed: {exc}") from None
        for line in saved.describe():
            self.stdout.write(line)

    def _export_shipped(self, profile_name: str, name: str, file: str) -> None:
        try:
            profile = named(profile_name.strip())
        except UnknownProfile as exc:
            raise CommandError(str(exc)) from None
        if not profile.glossaries:
            raise CommandError(f"the {profile.name} profile ships no synonym set")
        wanted = name.strip() or profile.glossaries[0]
        if wanted not in profile.glossaries:
            raise CommandError(
                f"the {profile.name} profile ships {', '.join(profile.glossaries)}, not {wanted!r}"
            )
        self._write(shipped_text(wanted), file)

    def _write(self, text: str, file: str) -> None:
        if not file or file == "-":
            self.stdout.write(text, ending="")
            return
        try:
            Path(file).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot write {file[:200]}: {exc.strerror or exc}") from None
        self.stdout.write(f"written: {file}")
