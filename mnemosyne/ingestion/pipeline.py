"""Ingest documents: parse → chunk → embed in batches across documents → one transaction per batch.

The model is the bottleneck, so everything else is arranged around keeping it busy:

- chunks of several small documents share one call to the model (it is fastest on full batches);
- a batch's items are looked up, claimed and written with a handful of statements, not a handful
  per item;
- the next batch is embedded in a background thread while this one is written (the model runs
  outside the GIL), so parsing, chunking and database writes overlap the model instead of adding
  to it. All database work stays on the calling thread.

Each batch swaps the chunks of its items in one transaction (batch_writes.py): a changed item's
old chunks stay searchable until the new ones are committed. When that transaction fails, its items
are written again one per transaction, so one bad item fails alone with the reason and never blocks
the others.
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from django.conf import settings

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion.batch_writes import Batch, Claimed, WriteTarget, failed, finish
from mnemosyne.ingestion.document_identity import identify
from mnemosyne.ingestion.documents import DocumentInput, ParsedDocument
from mnemosyne.ingestion.item_context import given_by_item
from mnemosyne.ingestion.outcomes import IngestResult, Outcome, ingest_config_signature, up_to_date
from mnemosyne.ingestion.planning import PlannedChunk, plan_chunks, with_document
from mnemosyne.lib import cancellation, progress
from mnemosyne.lib.metrics import INGESTED_CHUNKS, INGESTED_ITEMS
from mnemosyne.library import services, vector_models
from mnemosyne.library.models import Collection, Item
from mnemosyne.profiles.catalog import Profile, profile_of
from mnemosyne.profiles.identity import Identity, document_line, with_given
from mnemosyne.storage import ChunkStore

logger = logging.getLogger(__name__)

# Chunks embedded per call to the model when documents are batched together.
EMBED_BATCH_CHUNKS = 128
# Chunks embedded in one call to the model, between two progress reports and cancellation checks.
EMBED_SLICE = 128
# Documents per batch at most, however few chunks they have (bounds a batch's statements).
BATCH_DOCUMENTS = 256


@dataclass
class _Planned:
    """A document and its chunks, or why it has none."""

    document: DocumentInput
    chunks: list[PlannedChunk]
    error: BaseException | None = None
    identity: Identity = field(default_factory=Identity)
    # Seconds reading its identity and planning its chunks took.
    chunk_seconds: float = 0.0


def ingest_documents(
    *,
    collection: Collection,
    documents: Iterable[DocumentInput],
    embedder: Embedder,
    store: ChunkStore,
    on_progress: Callable[[IngestResult], None] | None = None,
    batch_chunks: int = EMBED_BATCH_CHUNKS,
) -> Iterator[IngestResult]:
    """Ingest a stream of documents, yielding one result per document once it is written.

    At most two batches are held at a time: the one being written and the one being embedded.
    """
    signature = ingest_config_signature(embedder, collection.library.library_type)
    # The library's vectors are this model's (recorded now if it has none): another model's
    # vectors would not be comparable with them.
    vector_models.claim(collection.library, model_id=embedder.model_id, dimensions=embedder.dim)
    target = WriteTarget(library_id=collection.library_id, model_id=embedder.model_id)
    model_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-embed")
    # The library's profile names the readers of what each document is (mnemosyne/profiles).
    profile = profile_of(collection.library.library_type)
    try:
        in_flight: Batch | None = None
        for group in _groups(documents, batch_chunks, embedder, profile):
            batch = _claim(group, collection=collection, signature=signature)
            inputs = [chunk.embedding_input for entry in batch.claimed for chunk in entry.chunks]
            if inputs:
                # In the model's thread with this one's context: the caller's progress and cancellation.
                batch.vectors = model_thread.submit(
                    contextvars.copy_context().run, _embedded, embedder, inputs
                )
            if in_flight is not None:
                yield from (_report(r, on_progress) for r in finish(in_flight, store, signature, target))
            in_flight = batch
        if in_flight is not None:
            yield from (_report(r, on_progress) for r in finish(in_flight, store, signature, target))
    finally:
        # Interrupted: a batch not yet started is dropped (its items stay processing, retryable).
        model_thread.shutdown(wait=True, cancel_futures=True)


def ingest_document(
    *,
    collection: Collection,
    source: str,
    parsed: ParsedDocument,
    digest: str,
    embedder: Embedder,
    store: ChunkStore,
    metadata: dict[str, object] | None = None,
    given: Mapping[str, object] | None = None,
    original: bytes = b"",
) -> IngestResult:
    """Ingest one parsed document as the item `source` of `collection`."""
    document = DocumentInput(
        source=source,
        parsed=parsed,
        digest=digest,
        metadata=metadata or {},
        given=given or {},
        original=original,
    )
    (result,) = ingest_documents(collection=collection, documents=[document], embedder=embedder, store=store)
    return result


def _report(result: IngestResult, on_progress: Callable[[IngestResult], None] | None) -> IngestResult:
    INGESTED_ITEMS.labels(result.outcome.value).inc()
    if result.outcome in (Outcome.CREATED, Outcome.UPDATED):
        INGESTED_CHUNKS.inc(result.chunk_count)
    if on_progress is not None:
        on_progress(result)
    return result


def _groups(
    documents: Iterable[DocumentInput], batch_chunks: int, embedder: Embedder, profile: Profile
) -> Iterator[list[_Planned]]:
    """Planned documents, grouped until at least `batch_chunks` chunks (or BATCH_DOCUMENTS) are pending."""
    group: list[_Planned] = []
    pending_chunks = 0
    for document in documents:
        # The same source twice (a URL given twice) is written in turn, never in one batch.
        if any(planned.document.source == document.source for planned in group):
            yield group
            group, pending_chunks = [], 0
        planned = _plan(document, embedder, profile)
        group.append(planned)
        pending_chunks += len(planned.chunks)
        if pending_chunks >= batch_chunks or len(group) >= BATCH_DOCUMENTS:
            yield group
            group, pending_chunks = [], 0
    if group:
        yield group


def chunks_of(parsed: ParsedDocument, embedder: Embedder, *, document: str = "") -> list[PlannedChunk]:
    """A parsed document's chunks, planned under the settings as ingest plans them."""
    return plan_chunks(
        parsed,
        max_tokens=settings.CHUNK_MAX_TOKENS,
        overlap_tokens=settings.CHUNK_OVERLAP_TOKENS,
        count_tokens=embedder.count_tokens,
        locate_tokens=embedder.token_starts,
        section_tokens=settings.CHUNK_SECTION_TOKENS,
        document=document,
    )


def _plan(document: DocumentInput, embedder: Embedder, profile: Profile) -> _Planned:
    started = time.perf_counter()
    try:
        identity = identify(document.parsed, profile=profile, given=document.given)
        chunks = chunks_of(document.parsed, embedder, document=document_line(identity))
    except Exception as exc:
        logger.exception("chunking %s failed", document.source)
        return _Planned(document, [], exc)
    if not chunks:
        return _Planned(document, [], ValueError("no text or images to index"))
    return _Planned(document, chunks, identity=identity, chunk_seconds=time.perf_counter() - started)


def _embedded(embedder: Embedder, inputs: list[str]) -> tuple[list[list[float]], float]:
    """The inputs' vectors, in one call to the model; or, when someone follows the work or may
    cancel it (a queued upload, a tool call), EMBED_SLICE at a time, saying between slices how far
    it is and stopping there if it was cancelled (lib/progress.py, lib/cancellation.py). One call
    where no one listens: the CLI's ingest measured 5 % slower in slices (the model batches by
    length within a call)."""
    started = time.perf_counter()
    if not progress.listening() and cancellation.current() is None:
        return embedder.embed_batch(inputs), time.perf_counter() - started
    vectors: list[list[float]] = []
    for start in range(0, len(inputs), EMBED_SLICE):
        cancellation.check()
        vectors.extend(embedder.embed_batch(inputs[start : start + EMBED_SLICE]))
        progress.report(f"embedded {len(vectors)} of {len(inputs)} chunks")
    return vectors, time.perf_counter() - started


def _with_item_corrections(planned: _Planned, item: Item) -> tuple[Identity, list[PlannedChunk]]:
    """What a person set on the item before (in the admin, say) stays, unless this ingest gives
    those values anew; the chunks' context follows."""
    kept = {key: value for key, value in given_by_item(item).items() if key not in planned.document.given}
    if not kept:
        return planned.identity, planned.chunks
    identity = with_given(planned.identity, {**kept, **planned.document.given})
    line = document_line(identity)
    return identity, with_document(planned.chunks, identity.title, line)


def _claim(group: Sequence[_Planned], *, collection: Collection, signature: str) -> Batch:
    """Find or create the group's items; unchanged ones are done, the rest are marked processing."""
    sources = [planned.document.source for planned in group]
    items = {item.source: item for item in Item.objects.filter(collection=collection, source__in=sources)}
    missing = [planned for planned in group if planned.document.source not in items]
    created: set[str] = set()  # uids of the items this call inserted
    if missing:
        # Another process may create the same items meanwhile: theirs are kept, and read back; an
        # item is ours (created) only when the row read back carries the uid we gave it.
        new_items = [
            Item(
                collection=collection,
                source=planned.document.source,
                title=planned.document.parsed.title[:500],
                item_type=planned.document.parsed.item_type,
            )
            for planned in missing
        ]
        Item.objects.bulk_create(new_items, ignore_conflicts=True)
        created = {item.uid for item in new_items}
        items.update(
            (item.source, item)
            for item in Item.objects.filter(
                collection=collection, source__in=[planned.document.source for planned in missing]
            )
        )
    batch = Batch(results=[], claimed=[])
    processing: list[int] = []
    for planned in group:
        document = planned.document
        item = items[document.source]
        if up_to_date(item, document.digest, signature, document.given):
            batch.results.append(IngestResult(document.source, Outcome.UNCHANGED, item.uid, item.chunk_count))
        elif planned.error is not None:
            batch.results.append(failed(item, document.source, planned.error))
        else:
            processing.append(item.pk)
            identity, chunks = _with_item_corrections(planned, item)
            batch.claimed.append(
                Claimed(document, item, item.uid in created, chunks, identity, planned.chunk_seconds)
            )
    services.mark_processing(item_ids=processing)
    return batch
