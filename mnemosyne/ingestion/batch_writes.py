"""A batch of ingest's documents written: wait for its vectors, store each item's chunk objects,
then swap the items' chunks in one transaction (pipeline.py prepares the batches).

A changed item's old chunks stay searchable until the new ones are committed. When the batch's
transaction fails, its items are written again one per transaction, so one bad item fails alone
with the reason and never blocks the others. Each written item records its time per stage.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from django.db import transaction

from mnemosyne.ingestion import chunk_objects, failures, reading_notes
from mnemosyne.ingestion.documents import DocumentInput
from mnemosyne.ingestion.outcomes import IngestResult, Outcome
from mnemosyne.ingestion.planning import PlannedChunk, page_texts
from mnemosyne.ingestion.services import ItemChunks, forget_logged_statements, record_stages, replace_chunks
from mnemosyne.lib import cancellation
from mnemosyne.library import services, vector_models
from mnemosyne.library.models import Item
from mnemosyne.profiles.identity import Identity, document_line
from mnemosyne.storage import ChunkStore, StorageError, keys

logger = logging.getLogger(__name__)


@dataclass
class Claimed:
    """A document whose item is marked processing and whose chunks are to be embedded and written."""

    document: DocumentInput
    item: Item
    created: bool
    chunks: list[PlannedChunk]
    identity: Identity = field(default_factory=Identity)
    chunk_seconds: float = 0.0


@dataclass
class Batch:
    results: list[IngestResult]
    claimed: list[Claimed]
    # The batch's vectors, and the seconds the model took for them.
    vectors: Future[tuple[list[list[float]], float]] | None = None


@dataclass(frozen=True)
class WriteTarget:
    """The library written to and the model whose vectors are written (checked at each write)."""

    library_id: int
    model_id: str


def finish(batch: Batch, store: ChunkStore, signature: str, target: WriteTarget) -> list[IngestResult]:
    """Wait for the batch's vectors, then store and write its items."""
    if not batch.claimed or batch.vectors is None:
        return batch.results
    try:
        vectors, embed_seconds = batch.vectors.result()
    except cancellation.Cancelled as exc:
        return batch.results + [_stopped(entry, exc) for entry in batch.claimed]
    except Exception as exc:
        logger.exception("embedding a batch of %d documents failed", len(batch.claimed))
        return batch.results + [failed(entry.item, entry.document.source, exc) for entry in batch.claimed]
    entries: list[ItemChunks] = []
    offset = 0
    for claimed in batch.claimed:
        entries.append(_entry(claimed, vectors[offset : offset + len(claimed.chunks)], signature))
        offset += len(claimed.chunks)
    started = time.perf_counter()
    written = _write(batch.claimed, entries, store, target)
    _record_stages(batch.claimed, written, embed_seconds, time.perf_counter() - started)
    forget_logged_statements()
    return batch.results + written


def _record_stages(
    claimed: Sequence[Claimed], written: Sequence[IngestResult], embed_seconds: float, write_seconds: float
) -> None:
    """Each written item's time per stage in its metadata ("stages", seconds): read and parse (OCR
    apart) as its door timed them, chunk, and its share of the batch's embedding and writing by
    its share of the batch's chunks. For the console's ingestion view; a failure here is logged."""
    ok = {result.item_uid for result in written if result.outcome in (Outcome.CREATED, Outcome.UPDATED)}
    total = sum(len(entry.chunks) for entry in claimed) or 1
    stages: dict[int, dict[str, float]] = {}
    for entry in claimed:
        if entry.item.uid not in ok:
            continue
        share = len(entry.chunks) / total
        parsed = entry.document.parsed.seconds
        found = {
            "read": entry.document.read_seconds,
            "parse": parsed.get("parse"),
            "ocr": parsed.get("ocr"),
            "chunk": entry.chunk_seconds,
            "embed": embed_seconds * share,
            "write": write_seconds * share,
        }
        stages[entry.item.pk] = {name: round(value, 4) for name, value in found.items() if value is not None}
    try:
        record_stages(stages)
    except Exception:
        logger.exception("recording the stages' times of %d items failed", len(stages))


def _entry(claimed: Claimed, vectors: list[list[float]], signature: str) -> ItemChunks:
    document = claimed.document
    # The version names the content and the configuration that chunked it, so a re-ingest under
    # another configuration never overwrites the objects the current chunks point at.
    version = hashlib.sha256(f"{document.digest}|{signature}".encode()).hexdigest()[:16]
    identity = claimed.identity
    extra = identity.as_metadata()
    return ItemChunks(
        item=claimed.item,
        title=identity.title or document.parsed.title,
        item_type=document.parsed.item_type,
        chunks=claimed.chunks,
        vectors=vectors,
        prefix=keys.version_prefix(claimed.item.uid, version),
        digest=document.digest,
        metadata={
            **document.metadata,
            **reading_notes.as_metadata(document.parsed),
            **({"identity": extra} if extra else {}),
            "ingest_config": signature,
        },
        identity=identity,
        pages=page_texts(document.parsed, document_line(identity)),
        original=document.original,
    )


def _write(
    claimed: Sequence[Claimed], entries: Sequence[ItemChunks], store: ChunkStore, target: WriteTarget
) -> list[IngestResult]:
    stored: list[tuple[Claimed, ItemChunks]] = []
    results: list[IngestResult] = []
    for claim, entry in zip(claimed, entries, strict=True):
        try:
            chunk_objects.put(entry, store)
        except Exception as exc:
            if isinstance(exc, StorageError):  # the outage itself is logged once, by the store's watcher
                logger.warning("storing the chunks of %s failed: %s", claim.document.source, exc)
            else:
                logger.exception("storing the chunks of %s failed", claim.document.source)
            chunk_objects.discard_new(entry, store)
            results.append(failed(claim.item, claim.document.source, exc))
        else:
            stored.append((claim, entry))
    try:
        with transaction.atomic():
            # The library still takes this model's vectors (a re-embedding may have switched it).
            vector_models.hold(target.library_id, model_id=target.model_id)
            old_prefixes = replace_chunks([entry for _, entry in stored])
    except Exception:
        if len(stored) == 1:
            claim, entry = stored[0]
            return [*results, _write_one(claim, entry, store, target)]
        # Find the item at fault: each on its own.
        logger.warning("writing a batch of %d items failed; writing them one at a time", len(stored))
        return results + [_write_one(claim, entry, store, target) for claim, entry in stored]
    for claim, entry in stored:
        chunk_objects.delete_old(store, old_prefixes[claim.item.pk], keep=entry.prefix)
        results.append(_written(claim, entry))
    return results


def _write_one(claim: Claimed, entry: ItemChunks, store: ChunkStore, target: WriteTarget) -> IngestResult:
    try:
        with transaction.atomic():
            vector_models.hold(target.library_id, model_id=target.model_id)
            old_prefixes = replace_chunks([entry])
    except Exception as exc:
        logger.exception("writing %s failed", claim.document.source)
        chunk_objects.discard_new(entry, store)
        return failed(claim.item, claim.document.source, exc)
    chunk_objects.delete_old(store, old_prefixes[claim.item.pk], keep=entry.prefix)
    return _written(claim, entry)


def _written(claim: Claimed, entry: ItemChunks) -> IngestResult:
    outcome = Outcome.CREATED if claim.created else Outcome.UPDATED
    notes = reading_notes.in_words(claim.document.parsed)
    return IngestResult(claim.document.source, outcome, claim.item.uid, len(entry.chunks), notes=notes)


def _stopped(claimed: Claimed, exc: cancellation.Cancelled) -> IngestResult:
    """Its caller stopped it before its chunks were written: a new item fails (and is removed by
    whoever created it, as uploads do); one that was there keeps its status and its chunks."""
    if claimed.created:
        return failed(claimed.item, claimed.document.source, exc)
    before = claimed.item
    Item.objects.filter(pk=before.pk).update(
        embedding_status=before.embedding_status, embedding_error=before.embedding_error
    )
    return IngestResult(claimed.document.source, Outcome.FAILED, before.uid, error=str(exc))


def failed(item: Item, source: str, exc: BaseException) -> IngestResult:
    reason = failures.reason(exc)
    services.mark_failed(item_id=item.pk, reason=reason)
    return IngestResult(source, Outcome.FAILED, item.uid, error=reason)
