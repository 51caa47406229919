"""The database side of ingestion: swapping an item's chunks (call inside a transaction)."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.db import connection
from django.db.backends.utils import CursorWrapper

from mnemosyne.graph import ChunkConcepts, get_graph_store
from mnemosyne.ingestion.concepts import extract_concepts
from mnemosyne.ingestion.planning import PlannedChunk
from mnemosyne.library.models import TEXT_PREVIEW_CHARS, Chunk, EmbeddingStatus, Item


def storage_prefix(item_uid: str, version: str) -> str:
    return f"items/{item_uid}/{version}"


def text_key(prefix: str, ordinal: int) -> str:
    return f"{prefix}/{ordinal}.txt"


def image_key(prefix: str, ordinal: int, extension: str) -> str:
    return f"{prefix}/{ordinal}.{extension}"


def replace_chunks(
    *,
    item: Item,
    title: str,
    item_type: str,
    chunks: Sequence[PlannedChunk],
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
    old_ids = list(Chunk.objects.filter(item=locked).values_list("id", flat=True))
    graph = get_graph_store()
    # A Neo4j graph is not reached by PostgreSQL's cascades; in PostgreSQL this is what the cascade does.
    graph.forget_chunks(old_ids)
    Chunk.objects.filter(item=locked).delete()
    collection = locked.collection
    rows = [
        Chunk(
            item=locked,
            collection=collection,
            library_id=collection.library_id,
            ordinal=ordinal,
            kind=chunk.kind,
            mime_type=chunk.image.mime_type if chunk.image else "",
            image_key=image_key(prefix, ordinal, chunk.image_extension) if chunk.image else "",
            text_preview=chunk.span.text[:TEXT_PREVIEW_CHARS],
            embedding=vector,
            section_path=chunk.span.section_path[:1000],
            page=chunk.span.page,
            char_start=chunk.span.char_start,
            char_end=chunk.span.char_end,
            token_count=chunk.span.token_count,
            storage_key=text_key(prefix, ordinal),
        )
        for ordinal, (chunk, vector) in enumerate(zip(chunks, vectors, strict=True))
    ]
    created = Chunk.objects.bulk_create(rows, batch_size=500)
    graph.record_chunk_concepts(
        [
            ChunkConcepts(row.pk, row.library_id, collection.pk, extract_concepts(chunk.span.text))
            for row, chunk in zip(created, chunks, strict=True)
        ]
    )
    write_search_vectors(
        [row.pk for row in created], [chunk.header for chunk in chunks], [chunk.span.text for chunk in chunks]
    )
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
    # The impact orders a term's postings (see Posting.impact); the average length is the
    # corpus's once these chunks are in it, so the first batch into an empty index is ordered
    # like the later ones.
    k1, b = settings.SEARCH_BM25_K1, settings.SEARCH_BM25_B
    cursor.execute(
        """
        WITH occurrences AS (
            SELECT c.id AS chunk_id, c.library_id, c.collection_id, c.kind, u.lexeme,
                   coalesce(array_length(u.positions, 1), 1) AS tf
            FROM library_chunk c, unnest(c.search_vector) AS u
            WHERE c.id = ANY(%s)
        ), lengths AS (
            SELECT chunk_id, sum(tf) AS dl FROM occurrences GROUP BY chunk_id
        ), stats AS (
            SELECT greatest(s.total_length + (SELECT coalesce(sum(dl), 0) FROM lengths), 1)::float8
                   / greatest(s.chunk_count + (SELECT count(*) FROM lengths), 1) AS avgdl
            FROM library_corpus_stats s WHERE s.id = 1
        )
        INSERT INTO library_posting (term_id, chunk_id, tf, dl, library_id, collection_id, is_image, impact)
        SELECT t.id, o.chunk_id, o.tf, l.dl, o.library_id, o.collection_id, o.kind = 'image',
               o.tf * (%s + 1) / (o.tf + %s * (1 - %s + %s * l.dl / s.avgdl))
        FROM occurrences o
        JOIN lengths l ON l.chunk_id = o.chunk_id
        JOIN library_term t ON t.lexeme = o.lexeme
        CROSS JOIN stats s
        """,
        [ids, k1, k1, b, b],
    )
