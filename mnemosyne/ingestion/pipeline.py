"""Ingest documents: parse → chunk → embed in batches across documents → one transaction per item.

Chunks of several small documents share one call to the model (the model is the
bottleneck, and it is fastest on full batches). Each item is still written in its
own transaction, which swaps its chunks: a changed item's old chunks stay
searchable until the new ones are committed, and a failure leaves them untouched
and marks the item failed with the reason.
"""

from __future__ import annotations

import enum
import hashlib
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction

from mnemosyne.ingestion import writes
from mnemosyne.ingestion.embedding import Embedder
from mnemosyne.ingestion.parsing import ParsedDocument
from mnemosyne.ingestion.planning import PlannedChunk, plan_chunks
from mnemosyne.library.models import Collection, EmbeddingStatus, Item
from mnemosyne.storage import ChunkStore

logger = logging.getLogger(__name__)

# Chunks embedded per call to the model when documents are batched together.
EMBED_BATCH_CHUNKS = 128


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


@dataclass(frozen=True)
class DocumentInput:
    source: str
    parsed: ParsedDocument
    digest: str
    metadata: dict[str, object] = field(default_factory=dict)


@dataclass
class _Pending:
    document: DocumentInput
    item: Item
    created: bool
    chunks: list[PlannedChunk]
    vectors: list[list[float]] = field(default_factory=list)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def ingest_config_signature(embedder: Embedder) -> str:
    """What, besides the bytes, decides an item's chunks; a change re-ingests it."""
    return f"{embedder.model_id}|{settings.CHUNK_MAX_TOKENS}|{settings.CHUNK_OVERLAP_TOKENS}|v2"


def ingest_documents(
    *,
    collection: Collection,
    documents: Iterable[DocumentInput],
    embedder: Embedder,
    store: ChunkStore,
    on_progress: Callable[[IngestResult], None] | None = None,
    batch_chunks: int = EMBED_BATCH_CHUNKS,
) -> Iterator[IngestResult]:
    """Ingest a stream of documents, yielding one result per document as it is written."""
    signature = ingest_config_signature(embedder)
    pending: list[_Pending] = []
    pending_chunks = 0
    for document in documents:
        result = _prepare(document, collection=collection, embedder=embedder, signature=signature)
        if isinstance(result, IngestResult):
            yield _report(result, on_progress)
            continue
        pending.append(result)
        pending_chunks += len(result.chunks)
        if pending_chunks >= batch_chunks:
            yield from (_report(r, on_progress) for r in _flush(pending, embedder, store, signature))
            pending, pending_chunks = [], 0
    yield from (_report(r, on_progress) for r in _flush(pending, embedder, store, signature))


def ingest_document(
    *,
    collection: Collection,
    source: str,
    parsed: ParsedDocument,
    digest: str,
    embedder: Embedder,
    store: ChunkStore,
    metadata: dict[str, object] | None = None,
) -> IngestResult:
    """Ingest one parsed document as the item `source` of `collection`."""
    document = DocumentInput(source=source, parsed=parsed, digest=digest, metadata=metadata or {})
    (result,) = ingest_documents(collection=collection, documents=[document], embedder=embedder, store=store)
    return result


def _report(result: IngestResult, on_progress: Callable[[IngestResult], None] | None) -> IngestResult:
    if on_progress is not None:
        on_progress(result)
    return result


def _prepare(
    document: DocumentInput, *, collection: Collection, embedder: Embedder, signature: str
) -> IngestResult | _Pending:
    item = Item.objects.filter(collection=collection, source=document.source).first()
    if (
        item is not None
        and item.content_hash == document.digest
        and item.embedding_status == EmbeddingStatus.COMPLETE
        and item.metadata.get("ingest_config") == signature
    ):
        return IngestResult(document.source, Outcome.UNCHANGED, item.uid, item.chunk_count)
    created = item is None
    if item is None:
        item, created = Item.objects.get_or_create(
            collection=collection,
            source=document.source,
            defaults={"title": document.parsed.title[:500], "item_type": document.parsed.item_type},
        )
    Item.objects.filter(pk=item.pk).update(embedding_status=EmbeddingStatus.PROCESSING, embedding_error="")
    try:
        chunks = plan_chunks(
            document.parsed,
            max_tokens=settings.CHUNK_MAX_TOKENS,
            overlap_tokens=settings.CHUNK_OVERLAP_TOKENS,
            count_tokens=embedder.count_tokens,
        )
    except Exception as exc:
        logger.exception("chunking %s failed", document.source)
        return _fail(item, document.source, exc)
    if not chunks:
        return _fail(item, document.source, ValueError("no text or images to index"))
    return _Pending(document=document, item=item, created=created, chunks=chunks)


def _flush(
    pending: Sequence[_Pending], embedder: Embedder, store: ChunkStore, signature: str
) -> list[IngestResult]:
    if not pending:
        return []
    inputs = [chunk.embedding_input for p in pending for chunk in p.chunks]
    try:
        vectors = embedder.embed_batch(inputs)
    except Exception as exc:
        logger.exception("embedding a batch of %d chunks failed", len(inputs))
        return [_fail(p.item, p.document.source, exc) for p in pending]
    offset = 0
    results = []
    for entry in pending:
        entry.vectors = vectors[offset : offset + len(entry.chunks)]
        offset += len(entry.chunks)
        results.append(_write(entry, store, signature))
    return results


def _write(entry: _Pending, store: ChunkStore, signature: str) -> IngestResult:
    document = entry.document
    prefix = writes.storage_prefix(entry.item.uid, document.digest[:16])
    try:
        for ordinal, chunk in enumerate(entry.chunks):
            store.put(writes.text_key(prefix, ordinal), chunk.span.text.encode("utf-8"))
            if chunk.image is not None:
                store.put(writes.image_key(prefix, ordinal, chunk.image_extension), chunk.image.data)
        with transaction.atomic():
            old_prefixes = writes.replace_chunks(
                item=entry.item,
                title=document.parsed.title,
                item_type=document.parsed.item_type,
                chunks=entry.chunks,
                vectors=entry.vectors,
                prefix=prefix,
                digest=document.digest,
                metadata={**document.metadata, "ingest_config": signature},
            )
    except Exception as exc:
        logger.exception("writing %s failed", document.source)
        return _fail(entry.item, document.source, exc)
    # Old objects go only after the new chunks are committed.
    for old_prefix in old_prefixes - {prefix}:
        store.delete_prefix(old_prefix)
    outcome = Outcome.CREATED if entry.created else Outcome.UPDATED
    return IngestResult(document.source, outcome, entry.item.uid, len(entry.chunks))


def _fail(item: Item, source: str, exc: BaseException) -> IngestResult:
    reason = f"{type(exc).__name__}: {exc}"
    Item.objects.filter(pk=item.pk).update(embedding_status=EmbeddingStatus.FAILED, embedding_error=reason)
    return IngestResult(source, Outcome.FAILED, item.uid, error=reason)
