"""A background job someone follows (library.models.IngestJob: an upload, a sync; or a
ReembedJob): while it runs, a watcher thread (one database connection, closed when the job ends)
writes where the work is (lib/progress.py: "embedded 256 of 812 chunks") to the job every half
second and reads whether it was asked to stop (`cancel_requested`, set by `cancel`); then the job's
cancellation token is cancelled, and the work stops at its next step (lib/cancellation.py). A
queued job is cancelled at once."""

from __future__ import annotations

import threading

from django.db import DatabaseError, close_old_connections, connection
from django.utils import timezone

from mnemosyne.lib import cancellation
from mnemosyne.library.models import IngestJob, ReembedJob

# How often a running job's progress is written and its cancellation looked for.
WATCH_SECONDS = 0.5
CANCELLED_ERROR = "cancelled before it finished; nothing of it was kept"


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


class Watcher:
    """The running job's progress written, and its cancellation read, from one thread."""

    def __init__(
        self, job_pk: int, token: cancellation.Token, model: type[IngestJob | ReembedJob] = IngestJob
    ) -> None:
        self._model = model
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
        jobs = self._model.objects.filter(pk=self._job_pk)
        if said and said != written:
            jobs.update(progress=said, updated_at=timezone.now())
        if jobs.filter(cancel_requested=True).exists():
            self._token.cancel()
        return said or written


def finish(job: IngestJob, status: str, **fields: object) -> None:
    now = timezone.now()
    IngestJob.objects.filter(pk=job.pk).update(
        status=status, finished_at=now, updated_at=now, content=b"", **fields
    )
