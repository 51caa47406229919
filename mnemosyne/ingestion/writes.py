"""The database side of ingestion: swapping an item's chunks (call inside a transaction)."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection
from django.db.backends.utils import CursorWrapper

from mnemosyne.ingestion.chunking import ChunkSpan
from mnemosyne.library.models import TEXT_PREVIEW_CHARS, Chunk, EmbeddingStatus, Item


def storage_prefix(item_uid: str, version: str) -> str:
    return f"items/{item_uid}/{version}"


def replace_chunks(
    *,
    item: Item,
    title: str,
    item_type: str,
    spans: Sequence[ChunkSpan],
    headers: Sequence[str],
    vectors: Sequence[list[float]],
    prefix: str,
    digest: str,
    metadata: dict[str, object],
) -> set[str]:
    """Replace the item's chunks and mark it complete; return the storage prefixes now unused."""
    locked = Item.objects.select_related("collection").select_for_update(of=("self",)).get(pk=item.pk)
    old_prefixes = {
        key.rsplit("/", 1)[0]
        for key in Chunk.objects.filter(item=locked).values_list("storage_key", flat=True)
    }
    Chunk.objects.filter(item=locked).delete()
    collection = locked.collection
    rows = [
        Chunk(
            item=locked,
            collection=collection,
            library_id=collection.library_id,
            ordinal=ordinal,
            text_preview=span.text[:TEXT_PREVIEW_CHARS],
            embedding=vector,
            section_path=span.section_path[:1000],
            page=span.page,
            char_start=span.char_start,
            char_end=span.char_end,
            token_count=span.token_count,
            storage_key=f"{prefix}/{ordinal}.txt",
        )
        for ordinal, (span, vector) in enumerate(zip(spans, vectors, strict=True))
    ]
    created = Chunk.objects.bulk_create(rows, batch_size=500)
    write_search_vectors([chunk.pk for chunk in created], list(headers), [span.text for span in spans])
    locked.title = title[:500]
    locked.item_type = item_type
    locked.content_hash = digest
    locked.metadata = metadata
    locked.chunk_count = len(rows)
    locked.embedding_status = EmbeddingStatus.COMPLETE
    locked.embedding_error = ""
    locked.save()
    return old_prefixes


def write_search_vectors(ids: list[int], headers: list[str], bodies: list[str]) -> None:
    """Full-text vectors over the full chunk text; headings weigh more than body text."""
    if not ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE library_chunk AS c
            SET search_vector = setweight(to_tsvector('english', v.header), 'A')
                             || setweight(to_tsvector('english', v.body), 'B')
            FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS v(id, header, body)
            WHERE c.id = v.id
            """,
            [ids, headers, bodies],
        )
        write_postings(cursor, ids)


def write_postings(cursor: CursorWrapper, ids: list[int]) -> None:
    """Index the chunks' lexemes for BM25 (document frequencies follow by trigger)."""
    # Two statements: the second must see terms another transaction committed meanwhile.
    cursor.execute(
        """
        INSERT INTO library_term (lexeme, document_frequency)
        SELECT DISTINCT u.lexeme, 0
        FROM library_chunk c, unnest(c.search_vector) AS u
        WHERE c.id = ANY(%s)
        ON CONFLICT (lexeme) DO NOTHING
        """,
        [ids],
    )
    cursor.execute(
        """
        WITH occurrences AS (
            SELECT c.id AS chunk_id, c.library_id, c.collection_id, c.kind, u.lexeme,
                   coalesce(array_length(u.positions, 1), 1) AS tf
            FROM library_chunk c, unnest(c.search_vector) AS u
            WHERE c.id = ANY(%s)
        )
        INSERT INTO library_posting (term_id, chunk_id, tf, dl, library_id, collection_id, is_image)
        SELECT t.id, o.chunk_id, o.tf, sum(o.tf) OVER (PARTITION BY o.chunk_id),
               o.library_id, o.collection_id, o.kind = 'image'
        FROM occurrences o JOIN library_term t ON t.lexeme = o.lexeme
        """,
        [ids],
    )
