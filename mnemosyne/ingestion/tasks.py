"""Background ingestion on Django's Tasks framework: one task per file or URL.

`ingest --background` enqueues; `python manage.py db_worker` (django-tasks-db) runs the tasks, and
any number of workers on any number of machines can share the queue in PostgreSQL. A file is read
by the worker at the path it had when enqueued, so workers on other machines need the same paths.

A worker killed mid-item leaves nothing half-written: the pipeline swaps an item's chunks in one
transaction and marks it complete only then, so the item stays "processing" with its previous
chunks, and the next run (inline or in the background) ingests it again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from django.db import transaction
from django.tasks import task

from mnemosyne.embedding import get_embedder
from mnemosyne.ingestion import formats
from mnemosyne.ingestion.fetch import FetchFailed, check_url
from mnemosyne.ingestion.identity import given_as_text, parse_given
from mnemosyne.ingestion.inputs import InputFile, Skipped, collect_inputs, is_url
from mnemosyne.ingestion.outcomes import IngestResult, Outcome, unchanged_results
from mnemosyne.ingestion.pipeline import DocumentInput, ingest_documents
from mnemosyne.ingestion.runner import (
    Report,
    RunSummary,
    prune_missing,
    read_file,
    read_url,
)
from mnemosyne.ingestion.task_timing import timed
from mnemosyne.library.models import Collection
from mnemosyne.storage import ChunkStore, get_chunk_store


class IngestTaskFailed(Exception):
    """The file or URL was not ingested; the task result records why."""


@task
@timed
def ingest_source(
    *, collection_id: int, location: str, source: str, given: dict[str, str] | None = None
) -> dict[str, object]:
    """Ingest one file (absolute path) or URL as the item `source`; raise when it is not ingested.
    `given` is what a person says the document is (identity.parse_given, as text)."""
    return _ingest_source(
        collection_id=collection_id, location=location, source=source, given=parse_given(given or {})
    )


def _ingest_source(
    *, collection_id: int, location: str, source: str, given: Mapping[str, object]
) -> dict[str, object]:
    collection = Collection.objects.get(pk=collection_id)
    embedder = get_embedder()
    document: DocumentInput | Skipped | IngestResult
    if is_url(location):
        document = read_url(location, given=given)
    else:
        document = read_file(
            InputFile(path=Path(location), source=source),
            unchanged=unchanged_results(
                collection=collection, sources=[source], embedder=embedder, given=given
            ),
            given=given,
        )
    if isinstance(document, Skipped):
        raise IngestTaskFailed(f"skipped {source}: {document.reason}")
    if isinstance(document, IngestResult):
        result = document
    else:
        (result,) = ingest_documents(
            collection=collection, documents=[document], embedder=embedder, store=get_chunk_store()
        )
    if result.outcome == Outcome.FAILED:
        raise IngestTaskFailed(f"failed {source}: {result.error}")
    return {
        "source": result.source,
        "outcome": result.outcome.value,
        "item_uid": result.item_uid,
        "chunk_count": result.chunk_count,
    }


def enqueue_paths(
    paths: Sequence[Path | str],
    *,
    collection: Collection,
    report: Report,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    prune: bool = False,
    store: ChunkStore | None = None,
    given: Mapping[str, object] | None = None,
) -> RunSummary:
    """Enqueue one ingest task per file found and per URL; prune (if asked) right away."""
    given_text = given_as_text(given or {})
    summary = RunSummary()
    inputs = collect_inputs(
        paths, formats.suffixes_for(collection.library.library_type), include=include, exclude=exclude
    )
    for entry in inputs.skipped:
        summary.skipped.append(entry)
        report(f"skipped {entry.path}: {entry.reason}")
    jobs: list[tuple[str, str]] = [(str(f.path), f.source) for f in inputs.files]
    for url in inputs.urls:
        try:
            check_url(url)
        except FetchFailed as exc:
            summary.results.append(IngestResult(url, Outcome.FAILED, error=str(exc)))
            report(f"failed {url}: {exc}")
        else:
            jobs.append((url, url))
    # All or none: a queue holding half a run would be hard to reason about.
    with transaction.atomic():
        for location, source in jobs:
            ingest_source.enqueue(
                collection_id=collection.pk, location=location, source=source, given=given_text
            )
    summary.enqueued = len(jobs)
    if prune:
        summary.pruned = prune_missing(
            collection=collection,
            directories=inputs.directories,
            store=store or get_chunk_store(),
            report=report,
        )
    return summary
