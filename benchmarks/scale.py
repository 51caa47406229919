"""Grow the search index to N chunks with perturbed copies of the real (ingested) chunks.

Copies are whole items (the last one possibly cut short) in a collection of their own, written
the way ingest writes them: rows with their embeddings (the HNSW index is maintained as they go
in), tsvectors and BM25 postings through `write_search_vectors`, concept mentions through the
GraphStore, and the perturbed full text into the ChunkStore. Only the model is skipped.

`bulk` (the million-chunk index) keeps the build affordable the way a bulk load would be done: the
chunk rows go in by COPY, and the secondary indexes of the chunk and posting tables (HNSW, GIN,
the postings' B-trees) are dropped first and built once after loading.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np
from django.db import connection, transaction

from benchmarks import corpus, database
from benchmarks.results import BuildTimes
from mnemosyne import graph
from mnemosyne.graph import ChunkConcepts
from mnemosyne.graph.concepts import Concept, extract_concepts
from mnemosyne.ingestion import services
from mnemosyne.ingestion.item_context import chunk_header
from mnemosyne.library.models import TEXT_PREVIEW_CHARS, Chunk, Collection, EmbeddingStatus, Item
from mnemosyne.library.services import ensure_collection
from mnemosyne.storage import ChunkStore, get_chunk_store, keys

COPY_COLLECTION = "synthetic"
BATCH_CHUNKS = 1000
LOG_EVERY_BATCHES = 20
# The tables whose secondary indexes a bulk build drops and builds again after loading.
INDEXED_TABLES = ("library_chunk", "library_posting")

Log = Callable[[str], None]


@dataclass
class SourceChunk:
    chunk: Chunk
    text: str
    header: str
    concepts: list[Concept]


@dataclass
class SourceItem:
    item: Item
    chunks: list[SourceChunk]


@dataclass
class _Timer:
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, phase: str, started: float) -> None:
        self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - started


def load_sources(real: Collection, store: ChunkStore) -> list[SourceItem]:
    """The real items with their chunks' full text, and the concepts extracted from it once."""
    chunks_by_item: dict[int, list[SourceChunk]] = {}
    for chunk in Chunk.objects.filter(collection=real).select_related("item").order_by("item_id", "ordinal"):
        text = store.get(chunk.storage_key).decode("utf-8")
        chunks_by_item.setdefault(chunk.item_id, []).append(
            SourceChunk(
                chunk=chunk,
                text=text,
                header=chunk_header(chunk.item, chunk.section_path),
                concepts=extract_concepts(text),
            )
        )
    items = Item.objects.filter(pk__in=list(chunks_by_item)).order_by("pk")
    return [SourceItem(item, chunks_by_item[item.pk]) for item in items]


def _copies(sources: list[SourceItem], needed: int) -> Iterator[tuple[SourceItem, int]]:
    """(source item, chunks to copy), round after round over the sources, until `needed` are planned."""
    while needed > 0 and sources:
        for source in sources:
            take = min(len(source.chunks), needed)
            yield source, take
            needed -= take
            if needed <= 0:
                return


def grow_to(target: int, *, real: Collection, seed: int, log: Log, bulk: bool = False) -> BuildTimes | None:
    """Add copies until the index holds `target` chunks; None when it already holds that many."""
    present = Chunk.objects.count()
    real_chunks = Chunk.objects.filter(collection=real).count()
    if present >= target:
        return None
    store = get_chunk_store()
    sources = load_sources(real, store)
    copies = ensure_collection(library=real.library, name=COPY_COLLECTION)
    text_rng, vector_rng = random.Random(seed), np.random.default_rng(seed)
    timer = _Timer()
    batch: list[tuple[SourceItem, int]] = []
    batch_chunks = done = written = 0
    needed = target - present
    index_seconds: dict[str, float] = {}
    deferred = database.indexes_built_after(INDEXED_TABLES, index_seconds, log) if bulk else nullcontext()
    with deferred:
        for planned in _copies(sources, needed):
            batch.append(planned)
            batch_chunks += planned[1]
            if batch_chunks >= BATCH_CHUNKS:
                _write_batch(batch, copies, store, text_rng, vector_rng, timer, bulk=bulk)
                done += batch_chunks
                written += 1
                batch, batch_chunks = [], 0
                if written % LOG_EVERY_BATCHES == 0:
                    log(f"  {present + done:,} / {target:,} chunks")
        _write_batch(batch, copies, store, text_rng, vector_rng, timer, bulk=bulk)
    started = time.perf_counter()
    database.vacuum_analyze()
    timer.add("vacuum", started)
    return BuildTimes(
        real_chunks=real_chunks,
        copied_chunks=Chunk.objects.filter(collection=copies).count(),
        rows_seconds=timer.seconds.get("rows", 0.0),
        search_index_seconds=timer.seconds.get("search_index", 0.0),
        graph_seconds=timer.seconds.get("graph", 0.0),
        store_seconds=timer.seconds.get("store", 0.0),
        vacuum_seconds=timer.seconds.get("vacuum", 0.0),
        index_seconds=index_seconds,
    )


def _write_batch(
    batch: list[tuple[SourceItem, int]],
    copies: Collection,
    store: ChunkStore,
    text_rng: random.Random,
    vector_rng: np.random.Generator,
    timer: _Timer,
    *,
    bulk: bool,
) -> None:
    if not batch:
        return
    items = [
        Item(
            collection=copies,
            title=source.item.title,
            item_type=source.item.item_type,
            metadata={"benchmark_copy_of": source.item.uid},
            embedding_status=EmbeddingStatus.COMPLETE,
            chunk_count=take,
        )
        for source, take in batch
    ]
    for item, (source, _) in zip(items, batch, strict=True):
        item.source = f"{source.item.source}#copy-{item.uid}"  # unique in the collection
    texts: list[str] = []
    rows: list[Chunk] = []
    originals: list[SourceChunk] = []
    for item, (source, take) in zip(items, batch, strict=True):
        prefix = keys.version_prefix(item.uid, "benchmark")
        for original in source.chunks[:take]:
            text = corpus.perturb_text(original.text, text_rng)
            chunk = original.chunk
            rows.append(
                Chunk(
                    item=item,
                    collection=copies,
                    library_id=copies.library_id,
                    ordinal=chunk.ordinal,
                    kind=chunk.kind,
                    text_preview=text[:TEXT_PREVIEW_CHARS],
                    embedding=corpus.perturb_vector(np.asarray(chunk.embedding), vector_rng),
                    section_path=chunk.section_path,
                    page=chunk.page,
                    char_start=chunk.char_start,
                    char_end=chunk.char_end,
                    token_count=chunk.token_count,
                    storage_key=keys.text_key(prefix, chunk.ordinal),
                )
            )
            texts.append(text)
            originals.append(original)
    # Perturbing (above) is the benchmark's own work; from here on it is what ingest would do.
    started = time.perf_counter()
    with transaction.atomic():
        Item.objects.bulk_create(items)
        created = _copy_chunks(rows) if bulk else Chunk.objects.bulk_create(rows)
    timer.add("rows", started)

    started = time.perf_counter()
    with transaction.atomic():
        services.write_search_vectors(
            [row.pk for row in created],
            [original.header for original in originals],
            texts,
            ["english"] * len(created),
        )
    timer.add("search_index", started)

    started = time.perf_counter()
    # A copy mentions the concepts of the chunk it was copied from (extracted once per real chunk).
    graph.record_chunk_concepts(
        [
            ChunkConcepts(row.pk, copies.library_id, copies.pk, original.concepts)
            for row, original in zip(created, originals, strict=True)
        ]
    )
    timer.add("graph", started)

    started = time.perf_counter()
    for row, text in zip(created, texts, strict=True):
        store.put(row.storage_key, text.encode("utf-8"))
    timer.add("store", started)


def _copy_chunks(rows: list[Chunk]) -> list[Chunk]:
    """Insert the rows with COPY (ids drawn from the table's sequence first); returns them with ids."""
    fields = [field for field in Chunk._meta.concrete_fields if not field.primary_key]
    columns = ", ".join(["id", *(str(field.column) for field in fields)])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence('library_chunk', 'id')) FROM generate_series(1, %s)",
            [len(rows)],
        )
        ids = [row[0] for row in cursor.fetchall()]
        with cursor.cursor.copy(f"COPY library_chunk ({columns}) FROM STDIN") as copy:
            for pk, row in zip(ids, rows, strict=True):
                row.pk, row.item_id = pk, row.item.pk  # the item got its id after the row was made
                copy.write_row(
                    [
                        pk,
                        *(
                            field.get_db_prep_save(getattr(row, field.attname), connection)
                            for field in fields
                        ),
                    ]
                )
    return rows
