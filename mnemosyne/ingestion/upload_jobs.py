"""Uploads ingested in the background (`upsert_item` of a large document, or when asked): the
upload is kept in an IngestJob row and a task is queued in the same transaction
(tasks.enqueue_upload); a `db_worker`
(started by `serve` beside the web server, or run on its own) ingests it and records the outcome
— the item, or the reason it failed. A job that no worker picks up says so in its status.

While it runs, a watcher thread (one database connection, closed when the job ends) writes where
the work is (lib/progress.py: "embedded 256 of 812 chunks") to the job every half second and reads
whether it was asked to stop (`cancel_requested`, set by `cancel`); then the job's cancellation
token is cancelled, the pipeline stops between two slices of chunks, a new item is removed again
(as after a failure), and the job ends `cancelled`. A queued job is cancelled at once."""

from __future__ import annotations

import logging
import threading

from django.db import DatabaseError, close_old_connections, connection
from django.utils import timezone

from mnemosyne.embedding import get_embedder
from mnemosyne.ingestion import uploads
from mnemosyne.lib import cancellation, progress
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import IngestJob
from mnemosyne.storage import get_chunk_store

logger = logging.getLogger(__name__)
# How often a running job's progress is written and its cancellation looked for.
WATCH_SECONDS = 0.5
CANCELLED_ERROR = "cancelled before it finished; nothing of it was kept"


def run_upload(job_uid: str) -> dict[str, object]:
    """The ingest_upload task's body: claim the job, ingest it, record how it ended."""
    now = timezone.now()
    claimed = IngestJob.objects.filter(uid=job_uid, status=IngestJob.Status.QUEUED).update(
        status=IngestJob.Status.RUNNING, started_at=now, updated_at=now, progress="reading the document"
    )
    if not claimed:
        return {"job_id": job_uid, "skipped": "not queued"}
    job = IngestJob.objects.select_related("collection").get(uid=job_uid)
    token = cancellation.Token()
    watcher = _Watcher(job.pk, token)
    try:
        with cancellation.of(token), progress.to(watcher.report):
            result = uploads.upsert_item(
                collection=job.collection,
                title=job.title,
                content=bytes(job.content),
                mime_type=job.mime_type,
                external_id=job.external_id,
                metadata=job.metadata,
                document=job.document,
                embedder=get_embedder(),
                store=get_chunk_store(),
            )
    except (cancellation.Cancelled, InvalidArgument) as exc:
        watcher.stop()  # before the job's last word, which no progress may overwrite
        if token.cancelled:
            _finish(job, IngestJob.Status.CANCELLED, error=CANCELLED_ERROR, progress="cancelled")
            return {"job_id": job_uid, "status": "cancelled"}
        _finish(job, IngestJob.Status.FAILED, error=str(exc), progress="failed")
        return {"job_id": job_uid, "status": "failed", "error": str(exc)}
    except Exception as exc:
        watcher.stop()
        logger.exception("ingest job %s failed", job_uid)
        _finish(
            job,
            IngestJob.Status.FAILED,
            error=f"internal error ({type(exc).__name__}); see the server log",
            progress="failed",
        )
        raise
    watcher.stop()
    _finish(job, IngestJob.Status.COMPLETE, item=result.item, outcome=result.outcome.value, progress="done")
    return {"job_id": job_uid, "status": "complete", "item_uid": result.item.uid}


def cancel(job_uid: str) -> str:
    """Ask the job to stop: a queued one is cancelled now (its upload dropped), a running one at its
    next step. Returns the job's status after asking (finished jobs stay as they ended)."""
    now = timezone.now()
    IngestJob.objects.filter(uid=job_uid, status=IngestJob.Status.QUEUED).update(
        status=IngestJob.Status.CANCELLED,
        finished_at=now,
        updated_at=now,
        content=b"",
        error=CANCELLED_ERROR,
        progress="cancelled",
    )
    IngestJob.objects.filter(uid=job_uid, status=IngestJob.Status.RUNNING).update(
        cancel_requested=True, updated_at=now, progress="stopping"
    )
    status: str = IngestJob.objects.filter(uid=job_uid).values_list("status", flat=True).get()
    return status


class _Watcher:
    """The running job's progress written, and its cancellation read, from one thread."""

    def __init__(self, job_pk: int, token: cancellation.Token) -> None:
        self._job_pk = job_pk
        self._token = token
        self._said = ""
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"job-{job_pk}-watcher", daemon=True)
        self._thread.start()

    def report(self, text: str) -> None:
        with self._lock:
            self._said = text[:200]

    def stop(self) -> None:
        """Stop watching, once the last write is done (again: nothing)."""
        self._stopped.set()
        self._thread.join()

    def _run(self) -> None:
        written = ""
        try:
            while not self._stopped.wait(WATCH_SECONDS):
                with self._lock:
                    said = self._said
                try:
                    written = self._write(said, written)
                except DatabaseError:
                    # The job's own work meets the outage and says so; watching resumes after it.
                    continue
        finally:
            connection.close()

    def _write(self, said: str, written: str) -> str:
        close_old_connections()
        jobs = IngestJob.objects.filter(pk=self._job_pk)
        if said and said != written:
            jobs.update(progress=said, updated_at=timezone.now())
        if jobs.filter(cancel_requested=True).exists():
            self._token.cancel()
        return said or written


def _finish(job: IngestJob, status: str, **fields: object) -> None:
    now = timezone.now()
    IngestJob.objects.filter(pk=job.pk).update(
        status=status, finished_at=now, updated_at=now, content=b"", **fields
    )
