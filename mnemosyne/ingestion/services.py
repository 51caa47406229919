"""The database side of ingestion: swapping the chunks of a batch of items (call inside a transaction)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.db import connection, transaction
from django.db.backends.utils import CursorWrapper
from django.db.models.expressions import RawSQL

from mnemosyne import graph
from mnemosyne.graph import ChunkConcepts
from mnemosyne.graph.concepts import extract_concepts
from mnemosyne.ingestion.item_context import chunk_header, identity_of, stored_pages
from mnemosyne.ingestion.planning import PlannedChunk
from mnemosyne.library import services
from mnemosyne.library.chunk_reads import chunk_text
from mnemosyne.library.languages import text_search_config
from mnemosyne.library.models import TEXT_PREVIEW_CHARS, Chunk, Item, Library
from mnemosyne.profiles.catalog import Profile, profile_of
from mnemosyne.profiles.forms import document_form
from mnemosyne.profiles.identity import Identity, document_line, identity_words
from mnemosyne.storage.keys import image_key, prefix_of, text_key


@dataclass(frozen=True)
class ItemChunks:
    """An item's new chunks, embedded, with what its row records once they replace the old ones."""

    item: Item
    title: str
    item_type: str
    chunks: Sequence[PlannedChunk]
    vectors: Sequence[list[float]]
    prefix: str
    digest: str
    metadata: dict[str, object]
    identity: Identity = field(default_factory=Identity)
    # A paged document's pages: (number, the page's context and text), each one more unit of
    # full-text ranking (library_page).
    pages: Sequence[tuple[int, str]] = ()
    # The bytes it was read from (kept under keys.original_key); empty: not kept.
    original: bytes = b""


def replace_chunks(entries: Sequence[ItemChunks]) -> dict[int, set[str]]:
    """Replace each item's chunks and mark it complete (call inside one transaction).

    A handful of statements for the whole batch, whatever its number of items: on a corpus of
    small documents the per-statement round trips, not the rows, would otherwise bound ingest.
    Returns, per item id, the storage prefixes its old chunks used.
    """
    if not entries:
        return {}
    by_pk = {entry.item.pk: entry for entry in entries}
    # Locked in id order, so concurrent writers of overlapping batches cannot deadlock on items.
    locked = {
        item.pk: item
        for item in Item.objects.select_related("collection")
        .select_for_update(of=("self",))
        .filter(pk__in=by_pk)
        .order_by("pk")
    }
    old_prefixes: dict[int, set[str]] = {pk: set() for pk in by_pk}
    old_ids: list[int] = []
    for chunk_id, item_id, key in Chunk.objects.filter(item_id__in=by_pk).values_list(
        "id", "item_id", "storage_key"
    ):
        old_ids.append(chunk_id)
        old_prefixes[item_id].add(prefix_of(key))
    # Mentions go with their chunks (and a Neo4j projection learns of it after commit).
    graph.forget_chunks(old_ids)
    Chunk.objects.filter(item_id__in=by_pk).delete()
    rows: list[Chunk] = []
    planned: list[PlannedChunk] = []
    library_ids = {item.collection.library_id for item in locked.values()}
    configs = library_text_configs(library_ids)
    profiles = library_profiles(library_ids)
    for pk, entry in by_pk.items():
        item = locked[pk]
        library_id = item.collection.library_id
        rows.extend(_chunk_rows(item, entry, configs[library_id], profiles[library_id]))
        planned.extend(entry.chunks)
    created = Chunk.objects.bulk_create(rows, batch_size=1000)
    graph.record_chunk_concepts(
        [
            ChunkConcepts(row.pk, row.library_id, row.collection_id, extract_concepts(chunk.span.text))
            for row, chunk in zip(created, planned, strict=True)
        ]
    )
    with connection.cursor() as cursor:
        write_postings(cursor, [row.pk for row in created])
        write_pages(cursor, [(locked[pk], entry) for pk, entry in by_pk.items()], configs, profiles)
    services.mark_complete(
        items=[
            services.CompletedItem(
                item_id=entry.item.pk,
                title=entry.title,
                item_type=entry.item_type,
                digest=entry.digest,
                metadata=entry.metadata,
                chunk_count=len(entry.chunks),
                organisation=entry.identity.organisation,
                document_type=entry.identity.doc_type,
                document_date=entry.identity.date,
                period=entry.identity.period,
                identity_words=document_form(
                    identity_words(entry.identity), profiles[locked[pk].collection.library_id]
                ),
                text_config=configs[locked[pk].collection.library_id],
            )
            for pk, entry in by_pk.items()
        ]
    )
    return old_prefixes


def write_pages(
    cursor: CursorWrapper,
    entries: Sequence[tuple[Item, ItemChunks]],
    configs: dict[int, str],
    profiles: dict[int, Profile],
) -> None:
    """Replace the items' pages (library_page): each page's full-text vector and length."""
    cursor.execute("DELETE FROM library_page WHERE item_id = ANY(%s)", [[item.pk for item, _ in entries]])
    rows = [
        (
            item.pk,
            item.collection.library_id,
            item.collection_id,
            number,
            document_form(text, profiles[item.collection.library_id]),
        )
        for item, entry in entries
        for number, text in entry.pages
    ]
    if not rows:
        return
    item_ids, library_ids, collection_ids, numbers, texts = (
        list(column) for column in zip(*rows, strict=True)
    )
    cursor.execute(
        """
        INSERT INTO library_page (item_id, library_id, collection_id, number, search_vector, length)
        SELECT v.item_id, v.library_id, v.collection_id, v.number, t.vector,
               (SELECT coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0) FROM unnest(t.vector) u)
        FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::integer[], %s::text[], %s::regconfig[])
             AS v(item_id, library_id, collection_id, number, body, config)
        CROSS JOIN LATERAL (SELECT to_tsvector(v.config, v.body) AS vector) t
        """,
        [item_ids, library_ids, collection_ids, numbers, texts, [configs[i] for i in library_ids]],
    )


def record_stages(stages: Mapping[int, Mapping[str, float]]) -> None:
    """Each item's seconds per stage into its metadata["stages"]: one statement for a batch."""
    if not stages:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE library_item AS i SET metadata = jsonb_set(i.metadata, '{stages}', v.stages::jsonb)
            FROM unnest(%s::bigint[], %s::text[]) AS v(id, stages)
            WHERE i.id = v.id
            """,
            [list(stages), [json.dumps(dict(item)) for item in stages.values()]],
        )


def forget_logged_statements() -> None:
    """Drop the SQL this thread's connection logged, as Django does at each request.

    With DEBUG on (a development checkout's default) Django keeps a connection's last 9,000
    statements, and a batch's INSERT carries its vectors as text, about half a megabyte for 128
    chunks: a long ingest would hold hundreds of megabytes of it. Kept while a test captures them.
    """
    if settings.DEBUG and not connection.force_debug_cursor:
        connection.queries_log.clear()


def _chunk_rows(item: Item, entry: ItemChunks, text_config: str, profile: Profile) -> list[Chunk]:
    collection = item.collection
    prefix = entry.prefix
    return [
        Chunk(
            item=item,
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
            page_end=chunk.span.page_end,
            locations=[list(location) for location in chunk.span.locations],
            ocr_confidence=chunk.span.ocr_confidence,
            char_start=chunk.span.char_start,
            char_end=chunk.span.char_end,
            token_count=chunk.span.token_count,
            storage_key=text_key(prefix, ordinal),
            search_vector=search_vector(
                text_config, document_form(chunk.header, profile), document_form(chunk.span.text, profile)
            ),
        )
        for ordinal, (chunk, vector) in enumerate(zip(entry.chunks, entry.vectors, strict=True))
    ]


# A chunk's full-text vector: over its full text, in its library's language; headings weigh more
# than body text. One expression for new rows (search_vector) and re-indexed ones
# (write_search_vectors), each filling in where the configuration, heading and body come from.
SEARCH_VECTOR_SQL = (
    "setweight(to_tsvector({config}, {header}), 'A') || setweight(to_tsvector({config}, {body}), 'B')"
)


def search_vector(config: str, header: str, body: str) -> RawSQL:
    """A new chunk row's full-text vector, computed by its INSERT. Set by an UPDATE after it
    instead, every row would be written twice: the update cannot be HOT (search_vector has its GIN
    index), so it adds an entry to each of the table's indexes, HNSW included, and leaves a dead
    row for vacuum."""
    sql = SEARCH_VECTOR_SQL.format(config="%s::regconfig", header="%s", body="%s")
    return RawSQL(sql, [config, header, config, body], output_field=SearchVectorField())


def library_text_configs(library_ids: set[int]) -> dict[int, str]:
    """Each library's text-search configuration (its language's)."""
    languages = Library.objects.filter(id__in=library_ids).values_list("id", "language")
    return {library_id: text_search_config(language) for library_id, language in languages}


def library_profiles(library_ids: set[int]) -> dict[int, Profile]:
    """Each library's profile (its type's): how its index writes text (profiles/forms.py)."""
    types = Library.objects.filter(id__in=library_ids).values_list("id", "library_type")
    return {library_id: profile_of(library_type) for library_id, library_type in types}


def write_search_vectors(ids: list[int], headers: list[str], bodies: list[str], configs: list[str]) -> None:
    """Full-text vectors and postings of chunks already written (a library's new language): over
    the full chunk text, in each chunk's library's language; headings weigh more than body text."""
    if not ids:
        return
    with connection.cursor() as cursor:
        vector = SEARCH_VECTOR_SQL.format(config="v.config", header="v.header", body="v.body")
        cursor.execute(
            f"""
            UPDATE library_chunk AS c
            SET search_vector = {vector}
            FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::regconfig[]) AS v(id, header, body, config)
            WHERE c.id = v.id
            """,
            [ids, headers, bodies, configs],
        )
        write_postings(cursor, ids)


# Chunks re-indexed per statement when a library's language changes.
REINDEX_BATCH = 500


def reindex_library(library: Library, report: Callable[[int], None] = lambda done: None) -> int:
    """Rebuild the full-text vectors and postings of a library's chunks in its (new) language,
    a batch per transaction; returns how many chunks were re-indexed."""
    config = text_search_config(library.language)
    profile = profile_of(library.library_type)
    done = 0
    last = 0
    while True:
        batch = list(
            Chunk.objects.filter(library=library, id__gt=last)
            .select_related("item")
            .order_by("id")[:REINDEX_BATCH]
        )
        if not batch:
            reindex_documents(library)
            return done
        ids = [chunk.pk for chunk in batch]
        headers = [document_form(chunk_header(chunk.item, chunk.section_path), profile) for chunk in batch]
        bodies = [document_form(chunk_text(chunk), profile) for chunk in batch]
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("DELETE FROM library_posting WHERE chunk_id = ANY(%s)", [ids])
            write_search_vectors(ids, headers, bodies, [config] * len(ids))
        done += len(batch)
        last = ids[-1]
        report(done)


def reindex_documents(library: Library) -> None:
    """The identity and page vectors of a library's items in its (new) language, an item per
    transaction (reindex_library does their chunks)."""
    config = text_search_config(library.language)
    profile = profile_of(library.library_type)
    for item in Item.objects.filter(collection__library=library).order_by("id"):
        identity = identity_of(item)
        pages = stored_pages(item, document_line(identity))
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "UPDATE library_item SET identity_vector = to_tsvector(%s::regconfig, %s) WHERE id = %s",
                [config, document_form(identity_words(identity), profile), item.pk],
            )
            rewrite_pages(cursor, item.pk, pages, config, profile)


def rewrite_pages(
    cursor: CursorWrapper, item_id: int, pages: Sequence[tuple[int, str]], config: str, profile: Profile
) -> None:
    """Replace the full-text vectors of an item's pages (their text and context rebuilt)."""
    for number, text in pages:
        cursor.execute(
            """
            UPDATE library_page SET search_vector = t.vector,
                length = (SELECT coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0)
                          FROM unnest(t.vector) u)
            FROM (SELECT to_tsvector(%s::regconfig, %s) AS vector) t
            WHERE item_id = %s AND number = %s
            """,
            [config, document_form(text, profile), item_id, number],
        )


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
