"""python manage.py reembed --library LIBRARY --model MODEL

Re-embeds one library's chunks with another model (mnemosyne/ingestion/reembedding.py): the new
vectors are built beside the old ones, then the library switches to them and to MODEL in one
transaction, so searches keep working — with the old model — until then. MODEL is loaded as
EMBEDDING_MODEL would be: from EMBEDDING_URL when that is set, else the bundled model or a local
directory. Servers embed queries with their own EMBEDDING_MODEL: set it to MODEL on them too.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from mnemosyne.embedding import EmbeddingError, load
from mnemosyne.ingestion.reembedding import reembed
from mnemosyne.lib.schema import require_current_schema
from mnemosyne.library.errors import LibraryError
from mnemosyne.library.models import Library


class Command(BaseCommand):
    help = "Re-embed a library's chunks with another model, switching to it at once when done."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--library", required=True, help="The library's uid or name.")
        parser.add_argument("--model", required=True, help="The model to embed with (as EMBEDDING_MODEL).")

    def handle(self, *args: Any, **options: Any) -> None:
        require_current_schema()
        wanted = options["library"]
        library = Library.objects.filter(uid=wanted).first() or Library.objects.filter(name=wanted).first()
        if library is None:
            raise CommandError(f"no library with the uid or name {wanted!r}")
        try:
            embedder = load(options["model"])
        except (EmbeddingError, LibraryError) as exc:
            raise CommandError(str(exc)) from None
        except ImproperlyConfigured as exc:  # not the bundled model nor a model directory
            raise CommandError(f"--model: {exc}") from None
        if library.embedding_model == embedder.model_id:
            self.stdout.write(
                f"{library.name!r} is already embedded with {embedder.model_id!r}; nothing to do."
            )
            return
        before = library.embedding_model or "no model yet"
        with tqdm(unit="chunk", disable=not sys.stderr.isatty(), desc="re-embedding") as bar:

            def report(done: int, total: int) -> None:
                bar.total = max(total, done)
                bar.update(done - bar.n)

            try:
                done = reembed(library, embedder, report=report)
            except (EmbeddingError, LibraryError) as exc:
                raise CommandError(f"{exc} (nothing was changed)") from None
        self.stdout.write(
            f"{library.name!r}: {done} chunks re-embedded; {before} → {embedder.model_id} "
            f"({embedder.dim} dimensions). Serve it with EMBEDDING_MODEL={options['model']}."
        )
