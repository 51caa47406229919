"""Writes to the library tree. Keyword-only, typed, one transaction each."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from mnemosyne.graph import get_graph_store
from mnemosyne.ingestion.embedding import Embedder
from mnemosyne.ingestion.parsing import DocumentRejected, parse_bytes
from mnemosyne.ingestion.pipeline import Outcome, ingest_document
from mnemosyne.library.errors import InvalidArgument, NotFound
from mnemosyne.library.models import Chunk, ChunkKind, Collection, Item, Library, LibraryType
from mnemosyne.storage import ChunkStore, StorageError

logger = logging.getLogger(__name__)

# What upsert_item accepts, and the file suffix the parser recognises each by.
UPSERT_MIME_TYPES = {
    "text/plain": ".txt",
    "text/markdown": ".md",
    "text/html": ".html",
    "application/pdf": ".pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
}
MAX_EXTERNAL_ID_CHARS = 500


def validate_library_type(library_type: str) -> str:
    if library_type not in LibraryType.values:
        raise InvalidArgument(
            f"unknown library_type {library_type!r}; expected one of {', '.join(LibraryType.values)}"
        )
    return library_type


@transaction.atomic
def ensure_library(*, name: str, library_type: str | None = None, description: str | None = None) -> Library:
    """Return the library called `name`, creating it when missing.

    An explicitly given type or description updates an existing library.
    """
    name = name.strip()
    if not name:
        raise InvalidArgument("a library needs a name")
    if library_type is not None:
        validate_library_type(library_type)
    library, created = Library.objects.select_for_update().get_or_create(
        name=name,
        defaults={
            "library_type": library_type or LibraryType.GENERAL,
            "description": description or "",
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
class UpsertResult:
    item: Item
    outcome: Outcome  # created, updated or unchanged
    chunk_count: int


def upsert_source(*, external_id: str | None, content: bytes) -> str:
    """The item's identity in its collection: the caller's id, or else the content's digest.

    Without an external id the same bytes are the same item, so repeating a call never duplicates.
    """
    if external_id is None:
        return f"content:{hashlib.sha256(content).hexdigest()[:32]}"
    external_id = external_id.strip()
    if not external_id or len(external_id) > MAX_EXTERNAL_ID_CHARS or not external_id.isprintable():
        raise InvalidArgument(f"external_id must be 1-{MAX_EXTERNAL_ID_CHARS} printable characters")
    return f"external:{external_id}"


def upsert_item(
    *,
    collection: Collection,
    title: str,
    content: bytes,
    mime_type: str,
    embedder: Embedder,
    store: ChunkStore,
    external_id: str | None = None,
    metadata: Mapping[str, object] | None = None,
) -> UpsertResult:
    """Create or replace one item through the ingest pipeline (which writes it in one transaction).

    Everything that can be refused (size, type, unreadable or empty content) is refused before
    anything is written; a new item whose ingestion still fails is removed again.
    """
    title = title.strip()
    if not title:
        raise InvalidArgument("title must not be empty")
    limit = settings.INGEST_MAX_FILE_BYTES
    if len(content) > limit:
        raise InvalidArgument(f"the content is {len(content)} bytes, over INGEST_MAX_FILE_BYTES ({limit})")
    suffix = UPSERT_MIME_TYPES.get(mime_type.split(";")[0].strip().lower())
    if suffix is None:
        raise InvalidArgument(
            f"unsupported mime_type {mime_type!r}; supported: {', '.join(sorted(UPSERT_MIME_TYPES))}"
        )
    source = upsert_source(external_id=external_id, content=content)
    try:
        # Named after the title: a parser falls back on the file name (e.g. an image without a caption).
        stem = re.sub(r"[^\w\- ]+", " ", title).strip()[:100] or "upload"
        parsed = parse_bytes(content, filename=f"{stem}{suffix}")
    except DocumentRejected as exc:
        raise InvalidArgument(f"cannot ingest the content: {exc}") from exc
    user_metadata = dict(metadata or {})
    # Title and metadata are part of the digest: changing either updates the item.
    digest = hashlib.sha256(
        json.dumps([title, user_metadata], sort_keys=True, default=str).encode()
        + hashlib.sha256(content).digest()
    ).hexdigest()
    existed = Item.objects.filter(collection=collection, source=source).exists()
    result = ingest_document(
        collection=collection,
        source=source,
        parsed=dataclasses.replace(parsed, title=title[:500]),
        digest=digest,
        embedder=embedder,
        store=store,
        metadata={"external_id": external_id, "mime_type": mime_type, "metadata": user_metadata},
    )
    if result.outcome == Outcome.FAILED:
        if not existed and result.item_uid is not None:
            delete_item(item_uid=result.item_uid, dry_run=False, store=store)
        raise InvalidArgument(f"ingestion failed: {result.error}")
    item = Item.objects.select_related("collection", "collection__library").get(uid=result.item_uid)
    return UpsertResult(item=item, outcome=result.outcome, chunk_count=result.chunk_count)


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
        # A Neo4j graph is not reached by PostgreSQL's cascades (in PostgreSQL this is what they do).
        get_graph_store().forget_chunks(chunk_ids)
        Item.objects.filter(pk=item.pk).delete()
    try:
        store.delete_prefix(f"items/{item_uid}")
    except StorageError:
        logger.exception(
            "deleted item %s, but its objects could not be removed from the chunk store", item_uid
        )
        return DeletionReport(item, len(chunk_ids), image_count, deleted=True, storage_cleaned=False)
    return DeletionReport(item, len(chunk_ids), image_count, deleted=True, storage_cleaned=True)
