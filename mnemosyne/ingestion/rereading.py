"""A library's documents read again from the bytes kept beside their chunks (keys.original_key):
what a new profile knows of them (their identity, how the index writes them) without going back to
where they came from. An item already read under the library's current profile and settings is
left as it is, so a re-read that stopped half way goes on where it stopped."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import PurePath

from mnemosyne.embedding import Embedder, get_embedder
from mnemosyne.ingestion import formats
from mnemosyne.ingestion.documents import DocumentInput
from mnemosyne.ingestion.intake import Read, Refused, read_input
from mnemosyne.ingestion.item_context import given_by_item
from mnemosyne.ingestion.outcomes import IngestResult, Outcome, RunReport, unchanged_results
from mnemosyne.ingestion.pipeline import ingest_documents
from mnemosyne.library.models import Chunk, Collection, Item, Library
from mnemosyne.storage import ChunkNotFound, ChunkStore, get_chunk_store, keys

# What an item's metadata says of where its bytes came from, kept through a re-read.
_ORIGIN_KEYS = ("path", "url", "content_type", "final_url")


def reread_library(
    library: Library,
    *,
    report: Callable[[str], None],
    embedder: Embedder | None = None,
    store: ChunkStore | None = None,
) -> RunReport:
    """Re-read every item of the library from its kept bytes; an item without them is reported
    (it is read again at its next ingest or sync)."""
    embedder = embedder or get_embedder()
    store = store or get_chunk_store()
    summary = RunReport()
    for collection in Collection.objects.filter(library=library).select_related("library").order_by("pk"):

        def on_result(result: IngestResult) -> None:
            summary.results.append(result)
            if result.outcome == Outcome.FAILED:
                report(f"failed {result.source}: {result.error}")
            elif result.outcome != Outcome.UNCHANGED:
                report(f"{result.outcome.value} {result.source} ({result.chunk_count} chunks)")

        for _ in ingest_documents(
            collection=collection,
            documents=_documents(collection, embedder, store, on_result, report),
            embedder=embedder,
            store=store,
            on_progress=on_result,
        ):
            pass
    return summary


def _documents(
    collection: Collection,
    embedder: Embedder,
    store: ChunkStore,
    on_result: Callable[[IngestResult], None],
    report: Callable[[str], None],
) -> Iterator[DocumentInput]:
    items = list(Item.objects.filter(collection=collection).order_by("pk"))
    known = unchanged_results(
        collection=collection, sources=[item.source for item in items], embedder=embedder
    )
    for item in items:
        original = _original(item, store)
        if original is None:
            report(f"skipped {item.source}: its bytes were not kept; ingest or sync it again to re-read it")
            continue

        def get(item: Item = item, data: bytes = original) -> Read:
            metadata = {key: item.metadata[key] for key in _ORIGIN_KEYS if key in item.metadata}
            return Read(data, _filename(item), metadata)

        given = given_by_item(item)
        read = read_input(item.source, get, unchanged=known, given=given or None)
        if isinstance(read, Refused):
            on_result(IngestResult(item.source, Outcome.FAILED, error=read.reason))
        elif isinstance(read, IngestResult):
            on_result(read)
        else:
            yield read


def _original(item: Item, store: ChunkStore) -> bytes | None:
    key = Chunk.objects.filter(item=item).values_list("storage_key", flat=True).first()
    if key is None:
        return None
    try:
        return store.get(keys.original_key(keys.prefix_of(key)))
    except ChunkNotFound:
        return None


def _filename(item: Item) -> str:
    """A name whose suffix picks the item's parser: its source's, else its type's first."""
    suffix = PurePath(item.source.split("?", 1)[0]).suffix.lower()
    if suffix and formats.by_suffix(suffix) is not None:
        return f"document{suffix}"
    found = formats.by_item_type(item.item_type)
    return f"document{found.suffixes[0]}" if found else "document.txt"
