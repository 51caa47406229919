"""What ingestion is doing, for agents (the get_ingestion_status tool and the mnemosyne://ingestion
resource): items by status with the reason of each failure, background upload jobs — queued,
running, complete, failed — and the sources kept in sync with their last sync, within the caller's
library boundary. A queued job no worker has
picked up says so, rather than waiting silently."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from mnemosyne.library import selectors
from mnemosyne.library.errors import NotFound
from mnemosyne.library.models import EmbeddingStatus, IngestJob, Item, Source

# A job queued this long without a worker starting it gets a note saying so.
UNCLAIMED_AFTER_SECONDS = 60
# Finished jobs stay listed this long (a failed one until it is looked up by id, or forever).
_RECENT = timedelta(hours=1)


@dataclass(frozen=True)
class JobState:
    job: IngestJob
    note: str


@dataclass(frozen=True)
class IngestionStatus:
    counts: dict[str, int]
    items: list[Item]
    jobs: list[JobState]
    sources: list[Source] = field(default_factory=list)


def ingestion_status(
    *,
    job_uid: str | None = None,
    collection_uid: str | None = None,
    library_uid: str | None = None,
    status: str | None = None,
    limit: int = 20,
    now: datetime | None = None,
) -> IngestionStatus:
    now = now or timezone.now()
    jobs = selectors.within_boundary(
        IngestJob.objects.select_related("collection", "item", "source").defer("content"),
        "collection__library_id",
    )
    if job_uid is not None:
        job = jobs.filter(uid=job_uid).first()
        if job is None:
            raise NotFound("job", job_uid)
        return IngestionStatus(counts={}, items=[], jobs=[_state(job, now)])
    sources = selectors.within_boundary(
        Source.objects.select_related("collection").defer("manifest"), "collection__library_id"
    )
    items = selectors.items(collection_uid=collection_uid, library_uid=library_uid)
    if collection_uid is not None:
        jobs = jobs.filter(collection__uid=collection_uid)
        sources = sources.filter(collection__uid=collection_uid)
    if library_uid is not None:
        jobs = jobs.filter(collection__library__uid=library_uid)
        sources = sources.filter(collection__library__uid=library_uid)
    counts = counts_by_status(items)
    wanted = (
        items.filter(embedding_status=status)
        if status
        else items.exclude(embedding_status=EmbeddingStatus.COMPLETE)
    )
    listed = list(wanted.order_by("-updated_at", "-id")[:limit])
    open_jobs = jobs.filter(~Q(status=IngestJob.Status.COMPLETE) | Q(finished_at__gte=now - _RECENT))
    if status:
        open_jobs = (
            open_jobs.none()
            if status not in _JOB_STATUS_OF
            else open_jobs.filter(status=_JOB_STATUS_OF[status])
        )
    return IngestionStatus(
        counts=counts,
        items=listed,
        jobs=[_state(job, now) for job in open_jobs.order_by("-created_at")[:limit]],
        sources=list(sources.order_by("id")[:limit]),
    )


def counts_by_status(items: QuerySet[Item]) -> dict[str, int]:
    """How many of these items are in each state (every state named, 0 when none): one GROUP BY."""
    counted = dict(items.order_by().values_list("embedding_status").annotate(n=Count("id")))
    return {value: counted.get(value, 0) for value in EmbeddingStatus.values}


# An item status asked for → the job status that matches it.
_JOB_STATUS_OF: dict[str, str] = {
    EmbeddingStatus.PENDING.value: IngestJob.Status.QUEUED.value,
    EmbeddingStatus.PROCESSING.value: IngestJob.Status.RUNNING.value,
    EmbeddingStatus.COMPLETE.value: IngestJob.Status.COMPLETE.value,
    EmbeddingStatus.FAILED.value: IngestJob.Status.FAILED.value,
}


def _state(job: IngestJob, now: datetime) -> JobState:
    note = ""
    waited = (now - job.created_at).total_seconds()
    if job.status == IngestJob.Status.QUEUED and waited > UNCLAIMED_AFTER_SECONDS:
        note = (
            f"queued {int(waited)} s ago and not started: no background worker is taking jobs "
            "(`python manage.py serve` runs one; or run `python manage.py db_worker`)"
        )
    return JobState(job, note)
