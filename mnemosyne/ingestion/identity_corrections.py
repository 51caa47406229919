"""A person's corrections to what a document is, and its chunks' context made to follow them.

What a document is (organisation, kind, date, period, title) heads every chunk's context, which
both the full-text index and the embedding see. Set by hand (the admin), it is recorded as given
(a later ingest keeps it), and a background task rebuilds the item's context from what is stored:
each chunk's full text from the ChunkStore under the new header, embedded again, its full-text
vector and postings written again; its pages' vectors; its identity vector. One transaction swaps
them, so a search sees the old context or the new, never half of each.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from django.db import connection, transaction

from mnemosyne.embedding import get_embedder
from mnemosyne.ingestion.item_context import chunk_header, given_by_item, identity_of, stored_pages
from mnemosyne.ingestion.services import library_text_configs, rewrite_pages, write_postings
from mnemosyne.library.chunk_reads import chunk_text
from mnemosyne.library.models import Chunk, ChunkKind, Item
from mnemosyne.profiles.catalog import profile_of
from mnemosyne.profiles.forms import document_form
from mnemosyne.profiles.identity import IDENTITY_KEYS, Identity, document_line, identity_words, with_given

logger = logging.getLogger(__name__)

# Chunks embedded per call to the model.
BATCH = 128


def record_identity(item: Item, values: Mapping[str, object]) -> Identity:
    """Record what a person says the item is (checked values, identity.parse_given) as given;
    returns the identity it now has. Its chunks' context follows by `refresh` (tasks.correct_identity
    queues it)."""
    identity = with_given(identity_of(item), {**given_by_item(item), **values})
    extra = {**(item.metadata.get("identity") or {}), **identity.as_metadata()}
    for key in ("fiscal_year", "fiscal_quarter"):
        if getattr(identity, key) is None:
            extra.pop(key, None)
    Item.objects.filter(pk=item.pk).update(
        title=identity.title[:500] or item.title,
        organisation=identity.organisation[:300],
        document_type=identity.doc_type[:40],
        document_date=identity.date,
        period=identity.period[:40],
        metadata={**item.metadata, "identity": extra},
    )
    return identity


def refresh(item_uid: str) -> int:
    """The refresh itself (the task's body, callable inline); returns the chunks re-embedded."""
    item = Item.objects.select_related("collection").filter(uid=item_uid).first()
    if item is None:
        return 0  # deleted meanwhile
    identity = identity_of(item)
    chunks = list(Chunk.objects.filter(item=item).order_by("ordinal"))
    headers = [chunk_header(item, chunk.section_path) for chunk in chunks]
    bodies = [chunk_text(chunk) for chunk in chunks]
    inputs = [
        f"{'Image: ' if chunk.kind == ChunkKind.IMAGE else ''}{header}\n{body}"
        for chunk, header, body in zip(chunks, headers, bodies, strict=True)
    ]
    embedder = get_embedder()
    vectors = [
        vector
        for start in range(0, len(inputs), BATCH)
        for vector in embedder.embed_batch(inputs[start : start + BATCH])
    ]
    config = library_text_configs({item.collection.library_id})[item.collection.library_id]
    profile = profile_of(item.collection.library.library_type)
    pages = stored_pages(item, document_line(identity))
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT id FROM library_item WHERE id = %s FOR UPDATE", [item.pk])
        ids = [chunk.pk for chunk in chunks]
        cursor.execute(
            """
            UPDATE library_chunk AS c
            SET embedding = v.embedding::vector,
                search_vector = setweight(to_tsvector(%s::regconfig, v.header), 'A')
                             || setweight(to_tsvector(%s::regconfig, v.body), 'B')
            FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[]) AS v(id, header, body, embedding)
            WHERE c.id = v.id
            """,
            [
                config,
                config,
                ids,
                [document_form(header, profile) for header in headers],
                [document_form(body, profile) for body in bodies],
                ["[" + ",".join(map(str, vector)) + "]" for vector in vectors],
            ],
        )
        cursor.execute("DELETE FROM library_posting WHERE chunk_id = ANY(%s)", [ids])
        write_postings(cursor, ids)
        rewrite_pages(cursor, item.pk, pages, config, profile)
        cursor.execute(
            "UPDATE library_item SET identity_vector = to_tsvector(%s::regconfig, %s) WHERE id = %s",
            [config, document_form(identity_words(identity), profile), item.pk],
        )
    return len(chunks)


def corrections(values: Mapping[str, object], item: Item) -> dict[str, object]:
    """Of the values an edit holds, those that differ from what the item says now."""
    now = {
        "title": item.title,
        "organisation": item.organisation,
        "doc_type": item.document_type,
        "date": item.document_date,
        "period": item.period,
    }
    return {key: value for key, value in values.items() if key in IDENTITY_KEYS and now.get(key) != value}
