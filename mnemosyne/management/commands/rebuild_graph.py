"""python manage.py rebuild_graph [--library NAME]

Re-extracts concepts from every chunk (or one library's) and records them in the graph tables,
which re-projects every one of them to Neo4j when GRAPH_BACKEND=neo4j: the repair after switching
GRAPH_BACKEND, after Neo4j lost data, or for chunks ingested before the graph existed.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from mnemosyne import graph
from mnemosyne.graph import ChunkConcepts
from mnemosyne.graph.concepts import extract_concepts
from mnemosyne.lib.schema import require_current_schema
from mnemosyne.library.chunk_reads import chunk_text
from mnemosyne.library.models import Chunk, Library

BATCH = 500


class Command(BaseCommand):
    help = "Rebuild the concept graph from the stored chunks."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--library", help="Only this library (by name).")

    def handle(self, *args: Any, **options: Any) -> None:
        require_current_schema()
        chunks = Chunk.objects.defer("embedding", "search_vector").order_by("id")
        if options["library"]:
            library = Library.objects.filter(name=options["library"]).first()
            if library is None:
                raise CommandError(f"no library named {options['library']!r}")
            chunks = chunks.filter(library=library)
        total = chunks.count()
        batch: list[ChunkConcepts] = []
        with tqdm(total=total, unit="chunk", disable=not sys.stderr.isatty()) as bar:
            for chunk in chunks.iterator(chunk_size=BATCH):
                concepts = extract_concepts(chunk_text(chunk))
                batch.append(ChunkConcepts(chunk.id, chunk.library_id, chunk.collection_id, concepts))
                if len(batch) >= BATCH:
                    graph.record_chunk_concepts(batch)
                    bar.update(len(batch))
                    batch = []
            if batch:
                graph.record_chunk_concepts(batch)
                bar.update(len(batch))
        self.stdout.write(f"Recorded the concepts of {total} chunks.")
