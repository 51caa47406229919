"""Writes to the library tree. Keyword-only, typed, one transaction each."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date

from django.db import connection, transaction

from mnemosyne import graph
from mnemosyne.library.errors import InvalidArgument, NotFound
from mnemosyne.library.languages import DEFAULT_LANGUAGE, validate_language
from mnemosyne.library.models import Chunk, ChunkKind, Collection, EmbeddingStatus, Item, Library, LibraryType
from mnemosyne.storage import ChunkStore, StorageError, keys

logger = logging.getLogger(__name__)


def validate_library_type(library_type: str) -> str:
    if library_type not in LibraryType.values:
        raise InvalidArgument(
            f"unknown library_type {library_type!r}; expected one of {', '.join(LibraryType.values)}"
        )
    return library_type


@transaction.atomic
def ensure_library(
    *, name: str, library_type: str | None = None, description: str | None = None, language: str | None = None
) -> Library:
    """Return the library called `name`, creating it when missing.

    An explicitly given type, description or language updates an existing library (a new language
    needs its chunks re-indexed: ingestion.writes.reindex_library).
    """
    name = name.strip()
    if not name:
        raise InvalidArgument("a library needs a name")
    if library_type is not None:
        validate_library_type(library_type)
    if language is not None:
        language = validate_language(language)
    library, created = Library.objects.select_for_update().get_or_create(
        name=name,
        defaults={
            "library_type": library_type or LibraryType.GENERAL,
            "description": description or "",
            "language": language or DEFAULT_LANGUAGE,
        },
    )
    if not created:
        changed = []
        if library_type is not None and library.library_type != library_type:
            library.library_type = library_type
            changed.append("library_type")
        if description is not None and library.description != description:
            library.description = description
            changed.append("description")
        if language is not None and library.language != language:
            library.language = language
            changed.append("language")
        if changed:
            library.save(update_fields=[*changed, "updated_at"])
    return library


@transaction.atomic
def ensure_collection(*, library: Library, name: str, description: str | None = None) -> Collection:
    name = name.strip()
    if not name:
        raise InvalidArgument("a collection needs a name")
    collection, created = Collection.objects.get_or_create(
        library=library, name=name, defaults={"description": description or ""}
    )
    if not created and description is not None and collection.description != description:
        collection.description = description
        collection.save(update_fields=["description", "updated_at"])
    return collection


@dataclass(frozen=True)
class DeletionReport:
    item: Item
    chunk_count: int
    image_chunk_count: int
    deleted: bool
    # False when the rows went but the chunk store could not be cleaned (objects left behind).
    storage_cleaned: bool


def delete_item(*, item_uid: str, dry_run: bool = True, store: ChunkStore) -> DeletionReport:
    """Report what deleting an item removes; delete it (rows, graph mentions, stored text) unless dry_run."""
    with transaction.atomic():
        item = (
            Item.objects.select_related("collection", "collection__library")
            .select_for_update(of=("self",))
            .filter(uid=item_uid)
            .first()
        )
        if item is None:
            raise NotFound("item", item_uid)
        chunks = Chunk.objects.filter(item=item)
        chunk_ids = list(chunks.values_list("id", flat=True))
        image_count = chunks.filter(kind=ChunkKind.IMAGE).count()
        if dry_run:
            return DeletionReport(item, len(chunk_ids), image_count, deleted=False, storage_cleaned=False)
        # Mentions go with their chunks (and a Neo4j projection learns of it after commit).
        graph.forget_chunks(chunk_ids)
        Item.objects.filter(pk=item.pk).delete()
    try:
        store.delete_prefix(keys.item_prefix(item_uid))
    except StorageError as exc:  # an outage is logged once by the store's watcher; this says what it cost
        logger.warning(
            "deleted item %s, but its objects could not be removed from the chunk store: %s", item_uid, exc
        )
        return DeletionReport(item, len(chunk_ids), image_count, deleted=True, storage_cleaned=False)
    return DeletionReport(item, len(chunk_ids), image_count, deleted=True, storage_cleaned=True)


# Item status, written here only: pending → processing → complete, or failed with the reason.


@contextlib.contextmanager
def advisory_lock(name: str, *, wait: bool = True) -> Iterator[bool]:
    """Hold a PostgreSQL advisory lock (session level) on `name` while inside; yields whether it is
    held: a second holder waits, or with wait=False gets False at once. Released at the end, or by
    PostgreSQL if the connection is lost."""
    digest = hashlib.blake2b(name.encode(), digest_size=8).digest()
    key = int.from_bytes(digest, "big", signed=True)
    with connection.cursor() as cursor:
        if wait:
            cursor.execute("SELECT pg_advisory_lock(%s)", [key])
            held = True
        else:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
            held = bool(cursor.fetchone()[0])
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [key])


def item_lock(*, collection_id: int, source: str) -> contextlib.AbstractContextManager[bool]:
    """The advisory lock on one item's identity: uploads of one item run one at a time."""
    return advisory_lock(f"{collection_id}\x00{source}")


def mark_processing(*, item_ids: Sequence[int]) -> None:
    """The items are being (re-)ingested; their previous chunks stay searchable meanwhile."""
    if item_ids:
        Item.objects.filter(pk__in=item_ids).update(
            embedding_status=EmbeddingStatus.PROCESSING, embedding_error=""
        )


def mark_failed(*, item_id: int, reason: str) -> None:
    """Ingestion of the item failed; `reason` is shown to users (list_items, the admin)."""
    Item.objects.filter(pk=item_id).update(embedding_status=EmbeddingStatus.FAILED, embedding_error=reason)


@dataclass(frozen=True)
class CompletedItem:
    """What an item's row records once its new chunks replace the old ones."""

    item_id: int
    title: str
    item_type: str
    digest: str
    metadata: dict[str, object]
    chunk_count: int
    # What the document is (profiles/identity.py), and the words it may be named by (in the form
    # the library's index reads them: profiles/forms.py), indexed in its text-search configuration.
    organisation: str = ""
    document_type: str = ""
    document_date: date | None = None
    period: str = ""
    identity_words: str = ""
    text_config: str = "english"


def mark_complete(*, items: Sequence[CompletedItem]) -> None:
    """One UPDATE for a batch of items (bulk_update's CASE expressions cost more than the rows).

    Call inside the transaction that swaps their chunks.
    """
    if not items:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE library_item AS i
            SET title = v.title, item_type = v.item_type, content_hash = v.digest,
                metadata = v.metadata::jsonb, chunk_count = v.chunk_count,
                organisation = v.organisation, document_type = v.document_type,
                document_date = v.document_date, period = v.period,
                identity_vector = to_tsvector(v.config, v.words),
                embedding_status = %s, embedding_error = '', updated_at = now()
            FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[], %s::integer[],
                        %s::text[], %s::text[], %s::date[], %s::text[], %s::text[], %s::regconfig[])
                 AS v(id, title, item_type, digest, metadata, chunk_count,
                      organisation, document_type, document_date, period, words, config)
            WHERE i.id = v.id
            """,
            [
                EmbeddingStatus.COMPLETE.value,
                [entry.item_id for entry in items],
                [entry.title[:500] for entry in items],
                [entry.item_type for entry in items],
                [entry.digest for entry in items],
                [json.dumps(entry.metadata) for entry in items],
                [entry.chunk_count for entry in items],
                [entry.organisation[:300] for entry in items],
                [entry.document_type[:40] for entry in items],
                [entry.document_date for entry in items],
                [entry.period[:40] for entry in items],
                [entry.identity_words for entry in items],
                [entry.text_config for entry in items],
            ],
        )
