"""Ingest one document: parse → chunk → embed in batches → one transaction that swaps the chunks.

A changed item's old chunks stay searchable until the transaction that replaces
them commits; a failure leaves them untouched and marks the item failed with the reason.
"""

from __future__ import annotations

import enum
import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction

from mnemosyne.ingestion.chunking import SECTION_SEPARATOR, ChunkSpan, chunk_text
from mnemosyne.ingestion.embedding import Embedder
from mnemosyne.ingestion.parsing import ParsedDocument
from mnemosyne.library.models import TEXT_PREVIEW_CHARS, Chunk, Collection, EmbeddingStatus, Item
from mnemosyne.storage import ChunkStore

logger = logging.getLogger(__name__)

# Batches of chunks progress is reported for; the embedder batches internally too.
PROGRESS_BATCH = 64


class Outcome(enum.StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    FAILED = "failed"


@dataclass(frozen=True)
class IngestResult:
    source: str
    outcome: Outcome
    item_uid: str | None = None
    chunk_count: int = 0
    error: str = ""


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def ingest_config_signature(embedder: Embedder) -> str:
    """What, besides the bytes, decides an item's chunks; a change re-ingests it."""
    return f"{embedder.model_id}|{settings.CHUNK_MAX_TOKENS}|{settings.CHUNK_OVERLAP_TOKENS}|v1"


def embedding_input(title: str, span: ChunkSpan) -> str:
    # The heading path gives a short chunk the context a reader would have.
    header = SECTION_SEPARATOR.join(part for part in (title, span.section_path) if part)
    return f"{header}\n{span.text}" if header else span.text


def storage_prefix(item_uid: str, version: str) -> str:
    return f"items/{item_uid}/{version}"


def find_unchanged(*, collection: Collection, source: str, digest: str, signature: str) -> Item | None:
    item = Item.objects.filter(collection=collection, source=source).first()
    if (
        item is not None
        and item.content_hash == digest
        and item.embedding_status == EmbeddingStatus.COMPLETE
        and item.metadata.get("ingest_config") == signature
    ):
        return item
    return None


def ingest_document(
    *,
    collection: Collection,
    source: str,
    parsed: ParsedDocument,
    digest: str,
    embedder: Embedder,
    store: ChunkStore,
    metadata: dict[str, object] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> IngestResult:
    """Ingest a parsed document as the item `source` of `collection`."""
    signature = ingest_config_signature(embedder)
    unchanged = find_unchanged(collection=collection, source=source, digest=digest, signature=signature)
    if unchanged is not None:
        return IngestResult(source, Outcome.UNCHANGED, unchanged.uid, unchanged.chunk_count)

    item, created = Item.objects.get_or_create(
        collection=collection,
        source=source,
        defaults={"title": parsed.title, "item_type": parsed.item_type},
    )
    Item.objects.filter(pk=item.pk).update(embedding_status=EmbeddingStatus.PROCESSING, embedding_error="")
    try:
        spans = chunk_text(
            parsed.text,
            max_tokens=settings.CHUNK_MAX_TOKENS,
            overlap_tokens=settings.CHUNK_OVERLAP_TOKENS,
            count_tokens=embedder.count_tokens,
            markdown=parsed.markdown,
        )
        vectors = _embed(parsed.title, spans, embedder, on_progress)
        version = digest[:16]
        prefix = storage_prefix(item.uid, version)
        for ordinal, span in enumerate(spans):
            store.put(f"{prefix}/{ordinal}.txt", span.text.encode("utf-8"))
        old_keys = _replace_chunks(
            item=item,
            parsed=parsed,
            spans=spans,
            vectors=vectors,
            prefix=prefix,
            digest=digest,
            metadata={**(metadata or {}), "ingest_config": signature},
        )
    except Exception as exc:
        logger.exception("ingesting %s failed", source)
        reason = f"{type(exc).__name__}: {exc}"
        Item.objects.filter(pk=item.pk).update(
            embedding_status=EmbeddingStatus.FAILED, embedding_error=reason
        )
        return IngestResult(source, Outcome.FAILED, item.uid, error=reason)
    # Old objects go only after the new chunks are committed.
    for old_prefix in old_keys - {prefix}:
        store.delete_prefix(old_prefix)
    return IngestResult(source, Outcome.CREATED if created else Outcome.UPDATED, item.uid, len(spans))


def _embed(
    title: str, spans: Sequence[ChunkSpan], embedder: Embedder, on_progress: Callable[[int], None] | None
) -> list[list[float]]:
    vectors: list[list[float]] = []
    for start in range(0, len(spans), PROGRESS_BATCH):
        batch = spans[start : start + PROGRESS_BATCH]
        vectors.extend(embedder.embed_batch([embedding_input(title, span) for span in batch]))
        if on_progress is not None:
            on_progress(len(batch))
    return vectors


@transaction.atomic
def _replace_chunks(
    *,
    item: Item,
    parsed: ParsedDocument,
    spans: Sequence[ChunkSpan],
    vectors: Sequence[list[float]],
    prefix: str,
    digest: str,
    metadata: dict[str, object],
) -> set[str]:
    """Swap the item's chunks in one transaction; return the storage prefixes now unused."""
    locked = Item.objects.select_for_update().get(pk=item.pk)
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
    _write_search_vectors(
        [chunk.pk for chunk in created],
        [SECTION_SEPARATOR.join(p for p in (parsed.title, span.section_path) if p) for span in spans],
        [span.text for span in spans],
    )
    locked.title = parsed.title
    locked.item_type = parsed.item_type
    locked.content_hash = digest
    locked.metadata = metadata
    locked.chunk_count = len(rows)
    locked.embedding_status = EmbeddingStatus.COMPLETE
    locked.embedding_error = ""
    locked.save()
    return old_prefixes


def _write_search_vectors(ids: list[int], headers: list[str], bodies: list[str]) -> None:
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
