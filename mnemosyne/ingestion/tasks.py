"""Every background task (Django's Tasks framework), each counted and timed by one decorator, and
the calls that queue them: a file or URL to ingest (`ingest --background`), an upload
(`upsert_item`), a source's sync (scheduled, or asked for), an item's context after a person
corrected what it is, a library's documents read again under a new profile, a library re-embedded
with the servers' model.

`python manage.py db_worker` (django-tasks-db) runs the tasks, and any number of workers on any
number of machines can share the queue in PostgreSQL. A file is read by the worker at the path it
had when enqueued, so workers on other machines need the same paths. (Tasks queued by a version
that declared them in other modules are renamed by migration library 0016.)

A worker killed mid-item leaves nothing half-written: the pipeline swaps an item's chunks in one
transaction and marks it complete only then, so the item stays "processing" with its previous
chunks, and the next run (inline or in the background) ingests it again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path

from django.db import transaction
from django.tasks import task
from django.utils import timezone

from mnemosyne.embedding import get_embedder
from mnemosyne.ingestion import formats, reembed_jobs, sync_jobs, uploads
from mnemosyne.ingestion.documents import DocumentInput
from mnemosyne.ingestion.fetch import FetchFailed, check_url
from mnemosyne.ingestion.identity_corrections import record_identity, refresh
from mnemosyne.ingestion.inputs import InputFile, Skipped, collect_inputs, is_url
from mnemosyne.ingestion.outcomes import IngestResult, Outcome, RunReport, unchanged_results
from mnemosyne.ingestion.pipeline import ingest_documents
from mnemosyne.ingestion.rereading import reread_library
from mnemosyne.ingestion.runner import Report, prune_missing, read_file, read_url
from mnemosyne.ingestion.sync.listings import SourceUnavailable
from mnemosyne.ingestion.sync.runs import sync_source
from mnemosyne.ingestion.task_timing import timed
from mnemosyne.ingestion.upload_jobs import run_upload
from mnemosyne.library.models import Collection, IngestJob, Item, Library, ReembedJob, Source
from mnemosyne.profiles.identity import Identity, given_as_text, parse_given
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
) -> RunReport:
    """Enqueue one ingest task per file found and per URL; prune (if asked) right away."""
    given_text = given_as_text(given or {})
    summary = RunReport()
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
        summary.deleted = prune_missing(
            collection=collection,
            directories=inputs.directories,
            store=store or get_chunk_store(),
            report=report,
        )
    return summary


def enqueue_upload(
    *,
    collection: Collection,
    title: str,
    content: bytes,
    mime_type: str,
    external_id: str | None = None,
    metadata: Mapping[str, object] | None = None,
    document: Mapping[str, object] | None = None,
    requested_by: str = "",
) -> IngestJob:
    """Queue an upload (upload_jobs.py) for `requested_by` (access.principal's caller_key); refused
    at once (InvalidArgument) for what can be told without parsing it."""
    title, _ = uploads.check_upload(title=title, content=content, mime_type=mime_type)
    uploads.check_document(document, title=title)
    if external_id is not None:
        uploads.upsert_source(external_id=external_id, content=content)  # checks the id
    with transaction.atomic():
        job = IngestJob.objects.create(
            collection=collection,
            title=title[:500],
            mime_type=mime_type,
            external_id=external_id,
            metadata=dict(metadata or {}),
            document=dict(document or {}),
            content=content,
            size=len(content),
            requested_by=requested_by,
            progress="waiting for a worker",
            updated_at=timezone.now(),
        )
        ingest_upload.enqueue(job_uid=job.uid)
    return job


@task
@timed
def ingest_upload(*, job_uid: str) -> dict[str, object]:
    """Ingest a queued upload; the job records the item or the reason it was not ingested."""
    return run_upload(job_uid)


@task
@timed
def sync_scheduled(*, source_uid: str, due: str) -> dict[str, object]:
    """A scheduled sync; the next one is queued when it ends. A task whose due time is no longer
    the source's (rescheduled since) does nothing."""
    source = Source.objects.select_related("collection__library").filter(uid=source_uid).first()
    if source is None or source.next_sync_at is None or source.next_sync_at.isoformat() != due:
        return {"source": source_uid, "skipped": "superseded"}
    outcome: dict[str, object]
    try:
        outcome = dict(sync_source(source).counts())
    except SourceUnavailable as exc:
        outcome = {"error": str(exc)}
    finally:
        schedule_next(source)
    return {"source": source_uid, **outcome}


def schedule_next(source: Source) -> None:
    """Queue the source's next scheduled sync (every_minutes from now), or clear it when unscheduled."""
    if not source.every_minutes:
        Source.objects.filter(pk=source.pk).update(next_sync_at=None)
        return
    due = timezone.now() + timedelta(minutes=source.every_minutes)
    Source.objects.filter(pk=source.pk).update(next_sync_at=due)
    source.next_sync_at = due
    sync_scheduled.using(run_after=due).enqueue(source_uid=source.uid, due=due.isoformat())


def enqueue_sync(source: Source, *, requested_by: str = "") -> IngestJob:
    """Queue a sync of `source` for a worker (sync_jobs.py), as a job for `requested_by` (a
    caller_key, or "")."""
    with transaction.atomic():
        job = IngestJob.objects.create(
            kind=IngestJob.Kind.SYNC,
            collection_id=source.collection_id,
            source=source,
            title=f"Sync of {sync_jobs.source_name(source)}"[:500],
            requested_by=requested_by,
            progress="waiting for a worker",
            updated_at=timezone.now(),
        )
        sync_job.enqueue(job_uid=job.uid)
    return job


def enqueue_reembed(library: Library, *, model: str, requested_by: str = "") -> ReembedJob:
    """Queue the re-embedding of `library` with `model` (the servers' own) for a worker
    (reembed_jobs.py), as a job for `requested_by` (a caller_key, or "")."""
    with transaction.atomic():
        job = ReembedJob.objects.create(
            library=library,
            model=model,
            model_before=library.embedding_model,
            requested_by=requested_by,
            progress="waiting for a worker",
            updated_at=timezone.now(),
        )
        reembed_library.enqueue(job_uid=job.uid)
    return job


@task
@timed
def reembed_library(*, job_uid: str) -> dict[str, object]:
    """A library re-embedded with the servers' model (reembed_jobs.py: `reembed_library`)."""
    return reembed_jobs.run_reembed(job_uid)


@task
@timed
def sync_job(*, job_uid: str) -> dict[str, object]:
    """A sync asked for, followed as a job (sync_jobs.py: `sync_source`, the console's and the
    admin's "Sync now")."""
    return sync_jobs.run_sync(job_uid)


@task
@timed
def sync_once(*, source_uid: str) -> dict[str, object]:
    """A sync asked for without a job (queued by versions before sync_jobs.py; kept for those)."""
    source = Source.objects.select_related("collection__library").filter(uid=source_uid).first()
    if source is None:
        return {"source": source_uid, "skipped": "no such source"}
    try:
        return {"source": source_uid, **sync_source(source).counts()}
    except SourceUnavailable as exc:
        return {"source": source_uid, "error": str(exc)}


def correct_identity(item: Item, values: Mapping[str, object]) -> Identity:
    """Record what a person says the item is (identity_corrections.record_identity) and queue the
    refresh of its chunks' context once that is committed. Returns the identity it now has."""
    identity = record_identity(item, values)
    transaction.on_commit(lambda: refresh_context.enqueue(item_uid=item.uid))
    return identity


@task
@timed
def refresh_context(*, item_uid: str) -> dict[str, object]:
    """Rebuild an item's chunks' context (vectors, full-text vectors, pages) under its identity."""
    return {"item_uid": item_uid, "chunks": refresh(item_uid)}


@task
@timed
def reread_documents(*, library_uid: str) -> dict[str, object]:
    """Read a library's documents again under its profile (rereading.py; the console's "Re-read")."""
    library = Library.objects.filter(uid=library_uid).first()
    if library is None:
        return {"library": library_uid, "skipped": "no such library"}
    return {"library": library_uid, **reread_library(library, report=lambda line: None).counts()}
