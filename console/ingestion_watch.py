"""Ingestion as it happens (/console/ingestion/, polled every two seconds): the items being read
and those just read, each with its time per stage (read, parse, OCR, chunk, embed, write, as the
pipeline recorded them in the item's metadata "stages"); failures with their reasons; upload jobs
(one no worker has taken says so); the background queue and the workers alive (their heartbeats,
ingestion/worker_beats.py); the sources and the errors of their last sync; libraries being
re-embedded (and those re-embedded in the last hour). Within the person's libraries."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from access.principal import Principal
from console.access import console_view
from mnemosyne.ingestion import worker_beats
from mnemosyne.ingestion.status import ingestion_status
from mnemosyne.library import selectors
from mnemosyne.library.models import EmbeddingStatus, Item, ReembedJob, WorkerBeat

# Items just read, newest first.
RECENT = 20
STAGES = ("read", "parse", "ocr", "chunk", "embed", "write")


@dataclass(frozen=True)
class Timed:
    item: Item
    stages: list[tuple[str, float | None]]
    total: float


@dataclass(frozen=True)
class Queue:
    waiting: int
    running: int
    workers: list[WorkerBeat]


@console_view
def ingestion(request: HttpRequest, principal: Principal) -> HttpResponse:
    status = ingestion_status(limit=50)
    recent = (
        selectors.within_boundary(Item.objects.select_related("collection"), "collection__library_id")
        .filter(embedding_status=EmbeddingStatus.COMPLETE)
        .order_by("-updated_at", "-id")[:RECENT]
    )
    template = "console/ingestion_live.html" if getattr(request, "htmx", False) else "console/ingestion.html"
    return render(
        request,
        template,
        {
            "status": status,
            "counts": list(status.counts.items()),
            "recent": [_timed(item) for item in recent],
            "stages": STAGES,
            "queue": _queue(),
            "reembeddings": _reembeddings(),
            "reading": any(item.embedding_status == EmbeddingStatus.PROCESSING for item in status.items),
        },
    )


def _reembeddings() -> list[ReembedJob]:
    """Re-embeddings under way, and those that ended in the last hour."""
    recent = timezone.now() - timedelta(hours=1)
    jobs = selectors.within_boundary(ReembedJob.objects.select_related("library"), "library_id")
    under_way = Q(status__in=(ReembedJob.Status.QUEUED, ReembedJob.Status.RUNNING))
    return list(jobs.filter(under_way | Q(finished_at__gte=recent))[:RECENT])


def _timed(item: Item) -> Timed:
    recorded = item.metadata.get("stages") if isinstance(item.metadata, dict) else None
    recorded = recorded if isinstance(recorded, dict) else {}
    stages = [(stage, _seconds(recorded.get(stage))) for stage in STAGES]
    return Timed(item, stages, sum(seconds or 0.0 for _, seconds in stages))


def _seconds(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _queue() -> Queue:
    """The background tasks waiting and running (every library's: the queue is the server's), and
    the workers alive."""
    counted = dict(
        DBTaskResult.objects.filter(status__in=["READY", "RUNNING"])
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    return Queue(
        waiting=counted.get("READY", 0), running=counted.get("RUNNING", 0), workers=worker_beats.alive()
    )
