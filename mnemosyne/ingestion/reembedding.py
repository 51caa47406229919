"""Re-embedding a library with another model: the new vectors built beside the old, then one switch.

`manage.py reembed --library L --model M`. The chunks' embedding inputs are rebuilt from what is
stored (the item's title and the chunk's section path as a header, its full text from the
ChunkStore; "Image: " before an image chunk's), as the pipeline built them, and embedded with M in
batches into a temporary table; the library keeps its vectors and model meanwhile, so searches go
on with the old model. Then, in one transaction holding the library row (writes hold it FOR SHARE,
vector_models.hold): the chunks written since are embedded too, every chunk's vector replaced, and
the library's model and dimension set. A search sees the old model and vectors or the new, never
a mix. Interrupted before the switch, nothing changed — so is a job cancelled (reembed_jobs.py): it
stops before its next batch, or its switch's transaction rolls back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from django.db import connection, transaction

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion.item_context import CONTEXT_FIELDS, chunk_header
from mnemosyne.lib import cancellation
from mnemosyne.library import vector_models
from mnemosyne.library.chunk_reads import chunk_text
from mnemosyne.library.models import Chunk, ChunkKind, Library

BATCH = 256
_STAGING = "reembed_vectors"


def reembed(library: Library, embedder: Embedder, *, report: Callable[[int, int], None]) -> int:
    """Re-embed every chunk of `library` with `embedder`, then switch; returns the chunks done."""
    vector_models.ensure_index(embedder.dim)
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMPORARY TABLE IF NOT EXISTS {_STAGING} (chunk_id bigint PRIMARY KEY, embedding vector)"
        )
        cursor.execute(f"TRUNCATE {_STAGING}")
    total = Chunk.objects.filter(library=library).count()
    done = _stage(library, embedder, report=lambda count: report(count, total))
    with transaction.atomic():
        Library.objects.select_for_update().filter(pk=library.pk).first()
        # Chunks written while the others were embedded: no write can start now until the switch.
        done += _stage(library, embedder, report=lambda count: report(done + count, total))
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE library_chunk c SET embedding = s.embedding FROM {_STAGING} s "
                "WHERE s.chunk_id = c.id AND c.library_id = %s",
                [library.pk],
            )
        Library.objects.filter(pk=library.pk).update(
            embedding_model=embedder.model_id, embedding_dimensions=embedder.dim
        )
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {_STAGING}")
    return done


def _stage(library: Library, embedder: Embedder, *, report: Callable[[int], None]) -> int:
    """Embed the library's chunks that have no staged vector yet; returns how many."""
    done = 0
    last = 0
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT c.id FROM library_chunk c WHERE c.library_id = %s AND c.id > %s "
                f"AND NOT EXISTS (SELECT FROM {_STAGING} s WHERE s.chunk_id = c.id) ORDER BY c.id LIMIT %s",
                [library.pk, last, BATCH],
            )
            ids = [row[0] for row in cursor.fetchall()]
        batch = list(
            Chunk.objects.filter(id__in=ids)
            .select_related("item")
            .only("id", "kind", "section_path", "storage_key", "text_preview", *CONTEXT_FIELDS)
            .order_by("id")
        )
        if not batch:
            return done
        cancellation.check()  # a job asked to stop stops here; before the switch nothing changed
        vectors = embedder.embed_batch([_embedding_input(chunk) for chunk in batch])
        _insert(batch, vectors)
        done += len(batch)
        last = batch[-1].pk
        report(done)


def _embedding_input(chunk: Chunk) -> str:
    header = chunk_header(chunk.item, chunk.section_path)
    prefix = "Image: " if chunk.kind == ChunkKind.IMAGE else ""
    body = chunk_text(chunk)
    return f"{prefix}{header}\n{body}" if header else f"{prefix}{body}"


def _insert(chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> None:
    rows = [
        (chunk.pk, "[" + ",".join(map(str, vector)) + "]")
        for chunk, vector in zip(chunks, vectors, strict=True)
    ]
    with connection.cursor() as cursor:
        cursor.executemany(f"INSERT INTO {_STAGING} (chunk_id, embedding) VALUES (%s, %s::vector)", rows)
